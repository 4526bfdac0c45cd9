// tier: release
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { trackProcess } from "../helpers/processes";
import { ScriptProcess } from "../helpers/script-process";

const ROOT = path.resolve(__dirname, "../..");

/** `npm run demo` as a newcomer runs it: against `npm start` (here on ephemeral ports and a private DATA_DIR). */
describe("npm run demo against npm start", function () {
  this.timeout(300_000);
  let dataDir: string;
  let dev: ScriptProcess | undefined;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-demo-"));
    dev = new ScriptProcess(dataDir);
    const credentials = path.join(dataDir, "sandbox", "dev-credentials.json");
    await dev.waitFor(
      "the sandbox banner",
      () => dev!.stdout.includes("sandbox is up") && fs.existsSync(credentials),
      150_000,
    );
  });
  after(async function () {
    this.timeout(30_000);
    if (dev) {
      dev.signalGroup("SIGINT");
      if (!(await dev.exitedWithin(20_000))) dev.signalGroup("SIGKILL");
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = trackProcess(
        spawn("npm", ["run", "--silent", "demo"], {
          cwd: ROOT,
          env: { ...process.env, DATA_DIR: dataDir },
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  it("walks through tokenization, offering, investment, claim, dividend, an x402-paid agent, a capped RAMS mandate and their signed webhook events; exit 0", async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(code, `${stdout}\n${stderr}`).to.equal(0);
    for (let step = 1; step <= 15; step++)
      expect(stdout, `progress line ${step}`).to.include(`[${String(step).padStart(2)}/15]`);
    const hashes = stdout.match(/ tx 0x[0-9a-f]{64}/g) ?? [];
    expect(hashes.length, stdout).to.be.greaterThanOrEqual(15);
    for (const proof of [
      /✓ get-tokenizer-info: token 0x[0-9a-fA-F]{40}/,
      /✓ get-whitelist-status: 0x[0-9a-fA-F]{40} whitelisted: true/,
      /✓ get-sto-balance: status ACTIVE/,
      /✓ get-sto-balance: raised 2000 USDC/,
      /✓ get-sto-balance: status COMPLETED/,
      /holds 200 D[0-9A-F]{4}/,
      /✓ get-dividend-distribution: 500 USDC distributed/,
      /paid 0\.01 USDC; settlement tx 0x[0-9a-f]{64}/,
      /✓ get-agent-info .*NFT held by the relayer 0x/,
      /eligible: true \(COMPLIANT\)/,
      /✓ rams\/mandate: status active, caps 100\.0 per transaction \/ 150\.0 in all/,
      /✓ rams\/mandate: cumulativeUsed 60\.0 USDC, 90\.0 left/,
      /refused before anything is signed: 400 .*per-transaction cap/,
      /allowed false: exceeds_cumulative_cap/,
      /the last batch 0x[0-9a-f]{64} is success/,
      /⚡ event \d+ token\.created 0x[0-9a-f]{8}… \(signature verified\)/,
      /✓ webhooks: \d+ events received, every signature verified \(standardwebhooks\): transaction\.broadcast ×\d+/,
      /✓ GET \/events \(Server-Sent Events\) from Last-Event-ID: token\.created \d+ for D[0-9A-F]{4}/,
    ]) {
      expect(stdout, String(proof)).to.match(proof);
    }
  });

  it("without a sandbox it says what to start", async () => {
    const child = trackProcess(
      spawn("npm", ["run", "--silent", "demo"], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: path.join(dataDir, "nothing-here") },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).to.equal(1);
    expect(stderr).to.match(/start the sandbox first with `npm start`/);
  });
});
