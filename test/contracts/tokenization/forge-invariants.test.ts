import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { network } from "hardhat";
import { stopStartedProcesses, trackProcess } from "../../helpers/processes";

const ROOT = path.resolve(__dirname, "../../..");
const SUITE = "test/invariants/security-token.invariants.t.sol";

/** The `invariant_*` functions the suite declares: each must have run and passed. */
function declaredInvariants(): string[] {
  const source = fs.readFileSync(path.join(ROOT, SUITE), "utf8");
  return [...source.matchAll(/function (invariant_\w+)\(\)/g)].map((m) => m[1]);
}

interface ForgeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command and, should the process that started it die (a Mocha worker killed, Ctrl-C, a crash: its `exit` hooks
 * need not run), kills the whole process group it leads: the end of its stdin, a pipe only that process writes to,
 * says its parent is gone. It passes the command's exit code on.
 */
const GUARD = `
const { spawn } = require("node:child_process");
const killGroup = () => { try { process.kill(-process.pid, "SIGKILL"); } catch {} };
process.stdin.on("end", killGroup).on("error", killGroup).resume();
const child = spawn(process.argv[1], process.argv.slice(2), { stdio: ["ignore", "inherit", "inherit"] });
child.on("exit", (code) => process.exit(code ?? 1));
`;

/**
 * `forge test` (the npm package's launcher, which starts the native binary, which starts the solc wrapper) under the
 * guard, in a process group of its own, tracked so that `after(stopStartedProcesses)` or this Mocha process's exit
 * kills the whole group whatever happened, a timeout included; the guard covers the exits that run no hook.
 */
function runForge(args: string[]): Promise<ForgeRun> {
  return new Promise((resolve, reject) => {
    const forge = path.join(ROOT, "node_modules/.bin/forge");
    const child = spawn(process.execPath, ["-e", GUARD, forge, ...args], {
      cwd: ROOT,
      env: { ...process.env, FOUNDRY_PROFILE: "default", NO_COLOR: "1" },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    trackProcess(child, { group: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

interface InvariantResult {
  status: string;
  reason: string | null;
  counterexample: unknown;
  kind: { Invariant?: { runs: number; calls: number; reverts: number }; Unit?: unknown };
}

/**
 * The Foundry stateful invariant suite (test/invariants/, docs/testing.md) with its short profile (foundry.toml's
 * default: a fixed seed, `runs` × `depth` calls per invariant), so that `npm test` fails on a broken invariant or a
 * failing regression. The deep profile runs in .ci/run (`npm run test:invariants:deep`).
 */
describe("invariant suite (forge, short profile)", function () {
  // The first run compiles the tokenization contracts and the suite with solc-js (a minute on a busy machine).
  this.timeout(600_000);
  after(stopStartedProcesses);

  it("holds every named invariant and replays every regression", async function () {
    // forge runs its own EVM: the `--network localhost` pass of .ci/run would only repeat the same run.
    if (network.name !== "hardhat") this.skip();
    const invariants = declaredInvariants();
    expect(invariants.length).to.be.greaterThanOrEqual(10);

    const run = await runForge(["test", "--json"]);
    const output = `${run.stdout}\n${run.stderr}`;
    const json = run.stdout.slice(run.stdout.indexOf("{"));
    expect(json.length, `forge printed no results (exit ${run.code ?? run.signal}):\n${output}`).to.be.greaterThan(0);
    const suites = JSON.parse(json) as Record<string, { test_results: Record<string, InvariantResult> }>;
    const results = Object.assign({}, ...Object.values(suites).map((s) => s.test_results)) as Record<
      string,
      InvariantResult
    >;

    const failed = Object.entries(results).filter(([, r]) => r.status !== "Success");
    expect(
      failed.map(([name, r]) => `${name}: ${r.reason ?? r.status} ${JSON.stringify(r.counterexample)}`),
      "failing forge tests (`npm run test:invariants` prints the shrunk sequences readably)",
    ).to.deep.equal([]);
    for (const name of invariants) {
      const stats = results[`${name}()`]?.kind.Invariant;
      expect(stats, `${name} did not run`).to.not.equal(undefined);
      expect(stats!.calls, `${name} made no calls`).to.be.greaterThan(0);
      expect(stats!.reverts, `${name}: a handler reverted`).to.equal(0);
    }
    expect(Object.keys(results).some((name) => name.startsWith("test_")), "no regression test ran").to.equal(true);
    expect(run.code, output).to.equal(0);
  });
});
