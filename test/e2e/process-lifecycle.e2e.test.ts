// tier: e2e
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { Wallet } from "ethers";
import { LOCAL_SERVICE_ARGS } from "../../scripts/lib/service-process";
import { startServiceProcess } from "../helpers/child-service";
import { prepareAndSign } from "../helpers/flow";
import { setUpOperator } from "../helpers/operator";
import { stopStartedProcesses, trackProcess } from "../helpers/processes";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { testEnv, type ApiClient } from "../helpers/service";
import { StallableRpc } from "../helpers/stallable-rpc";

const ROOT = path.resolve(__dirname, "../..");
/** main.ts exits at the latest SHUTDOWN_TIMEOUT_MS + 7 s after a signal (its watchdog); the tests allow a little more. */
const SHUTDOWN_TIMEOUT_MS = 2_000;
const EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 7_000 + 3_000;

/** Resolves with the exit code and how long after `since` it came; fails after `ms`. */
function exitOf(
  child: ChildProcess,
  since: number,
  ms = EXIT_BOUND_MS,
): Promise<{ code: number | null; signal: string | null; afterMs: number }> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve({ code: child.exitCode, signal: child.signalCode, afterMs: Date.now() - since });
    const timer = setTimeout(() => reject(new Error(`still running ${ms} ms after the signal`)), ms);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, afterMs: Date.now() - since });
    });
  });
}

/** The service process as the test helpers start it (the local sandbox's posture; service/process.ts either way). */
const mainTs = LOCAL_SERVICE_ARGS;

describe("e2e: the service process starts, logs and stops as an operator expects", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let issuer: Wallet;
  let rpc: StallableRpc;
  let dataDir: string;
  let key: string;

  before(async () => {
    sandbox = await getSandbox();
    issuer = sandbox.accounts[1];
    rpc = await StallableRpc.start(sandbox.sepolia.url);
  });
  beforeEach(async () => {
    rpc.resume();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-lifecycle-"));
    key = await setUpOperator(dataDir, "ops@lifecycle.test", issuer.address);
  });
  afterEach(async () => {
    await stopStartedProcesses();
    rpc.resume();
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
  });
  after(async () => {
    await rpc?.close();
  });

  /** The service on the sandbox, its Sepolia RPC through the stallable endpoint. */
  const env = (extra: Record<string, string> = {}) =>
    testEnv(sandbox, dataDir, {
      RPC_URL_11155111: rpc.url,
      SEND_WAIT_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      ...extra,
    });

  /** A client-signed newTokenization sent while Sepolia does not mine: it stays pending, the runner waiting on it. */
  async function pendingBatch(api: ApiClient): Promise<string> {
    const symbol = `L${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: `issuer-${symbol.toLowerCase()}@lifecycle.test`,
      name: "Lifecycle",
      tokenSymbol: symbol,
    });
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const sent = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    return prepared.txId;
  }

  it("SIGTERM while a batch is pending on a chain that does not mine: exit 0 within the bound, the batch resumable", async () => {
    const started = await startServiceProcess(env());
    const txId = await pendingBatch(started.api.withKey(key));
    const signalledAt = Date.now();
    started.child.kill("SIGTERM");
    const exit = await exitOf(started.child, signalledAt);
    expect(exit, started.output()).to.deep.include({ code: 0, signal: null });
    expect(exit.afterMs).to.be.below(SHUTDOWN_TIMEOUT_MS + 3_000);
    expect(started.output()).to.include('"stopped"');

    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
    const again = await startServiceProcess(env());
    let status = "";
    for (let i = 0; i < 100 && status !== "success"; i++, await new Promise((r) => setTimeout(r, 200))) {
      status = (await again.api.withKey(key).get("/get-transaction-status", { txId })).body.status;
    }
    expect(status).to.equal("success");
  });

  it("while the chain's RPC stalls mid-batch: /health answers at once, /ready says which chain within its bound, SIGTERM exits 0", async () => {
    const started = await startServiceProcess(env());
    await pendingBatch(started.api.withKey(key));
    rpc.stall(); // the runner's next receipt look-up never gets an answer

    const healthAt = Date.now();
    const health = await started.api.get("/health");
    expect(health.status).to.equal(200);
    expect(Date.now() - healthAt, "/health while a chain stalls").to.be.below(1_000);

    const readyAt = Date.now();
    const ready = await started.api.get("/ready");
    expect(Date.now() - readyAt, "/ready bounded by its chain check").to.be.below(6_000);
    expect(ready.status).to.equal(503);
    const chains = Object.fromEntries(
      (ready.body.error.details.chains as { chainId: number; ok: boolean; error?: string }[]).map((c) => [
        c.chainId,
        c,
      ]),
    );
    expect(chains[11155111]).to.include({ ok: false, error: "no answer within 3000 ms" });
    expect(chains[84532]).to.include({ ok: true });
    expect(ready.body.error.details.database).to.include({ ok: true });

    const signalledAt = Date.now();
    started.child.kill("SIGTERM");
    const exit = await exitOf(started.child, signalledAt);
    expect(exit, started.output()).to.deep.include({ code: 0, signal: null });
    expect(started.output()).to.include('"stopped"');
  });

  it("SIGTERM during start-up while a chain stalls: exit 0 within the bound", async () => {
    rpc.stall(); // the start's chain checks wait on it
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "tak-lifecycle-fresh-"));
    const child = trackProcess(
      spawn(process.execPath, mainTs, {
        cwd: ROOT,
        env: { ...process.env, ...env({ DATA_DIR: fresh }), LOG_LEVEL: "info", TS_NODE_TRANSPILE_ONLY: "true" },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    // Migrated (a fresh database) and now waiting on the stalled chain.
    for (let i = 0; i < 1200 && !output.includes('"database migrated"'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).to.include('"database migrated"').and.not.include('"service listening"');
    await new Promise((r) => setTimeout(r, 500));
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    const exit = await exitOf(child, signalledAt);
    expect(exit, output).to.deep.include({ code: 0, signal: null });
  });

  it("SIGTERM when whoever read its logs is gone (stdout a broken pipe): exit 0", async () => {
    const started = await startServiceProcess(env());
    // Traffic that logs, then the reading ends close: every later log line meets EPIPE.
    expect((await started.api.get("/health")).status).to.equal(200);
    started.child.stdout!.destroy();
    started.child.stderr!.destroy();
    await started.api.get("/health");
    const signalledAt = Date.now();
    started.child.kill("SIGTERM");
    const exit = await exitOf(started.child, signalledAt);
    expect(exit).to.deep.include({ code: 0, signal: null });
  });

  it("a configuration error names the variable and the rule on one line, without a stack trace, exit 1", async () => {
    // Asynchronous: the chains the x402 check reads answer from this process.
    const run = (extra: Record<string, string>, without: string[] = []) => {
      const variables: NodeJS.ProcessEnv = { ...process.env, ...env(), ...extra, TS_NODE_TRANSPILE_ONLY: "true" };
      for (const name of without) delete variables[name];
      const child = trackProcess(
        spawn(process.execPath, mainTs, { cwd: ROOT, env: variables, stdio: ["ignore", "pipe", "pipe"] }),
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
        child.on("close", (status) => resolve({ status, stdout, stderr })),
      );
    };
    const port = await run({ PORT: "70000" });
    expect(port.status, port.stderr).to.equal(1);
    expect(port.stderr.trim()).to.equal("Invalid configuration: PORT: Too big: expected number to be <=65535");
    const several = await run({ LOG_FORMAT: "xml", RELAYER_PRIVATE_KEY_84532: "0x1234" });
    expect(several.status).to.equal(1);
    expect(several.stderr).to.include('LOG_FORMAT: Invalid option: expected one of "json"|"pretty"');
    const relayer = await run({ RELAYER_PRIVATE_KEY_84532: "0x1234" });
    expect(relayer.stderr.trim()).to.equal(
      "Invalid configuration: RELAYER_PRIVATE_KEY_84532: must be a 0x-prefixed 32-byte hex private key",
    );
    const x402 = await run({}, ["X402_SETTLEMENT_PRIVATE_KEY", "X402_FACILITATOR_URL"]);
    expect(x402.status, `${x402.stdout}\n${x402.stderr}`).to.equal(1);
    expect(x402.stderr.trim()).to.equal(
      "x402 needs a settlement key (X402_SETTLEMENT_PRIVATE_KEY, X402_SETTLEMENT_KEYSTORE or X402_SETTLEMENT_PKCS11_MODULE) or X402_FACILITATOR_URL (or X402_ENABLED=false)",
    );
    for (const result of [port, several, relayer, x402]) {
      expect(result.stderr, "no stack trace").to.not.match(/^\s+at /m);
      expect(result.stdout).to.equal("");
    }
  });

  it("logs JSON lines by default and readable lines with LOG_FORMAT=pretty (what npm start uses)", async () => {
    const json = await startServiceProcess(env());
    const listening = json
      .output()
      .split("\n")
      .find((line) => line.includes('"service listening"'))!;
    expect(JSON.parse(listening)).to.include({ level: 30, msg: "service listening", environment: "sandbox" });

    const child = trackProcess(
      spawn(process.execPath, mainTs, {
        cwd: ROOT,
        env: {
          ...process.env,
          ...env({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "tak-pretty-")) }),
          LOG_LEVEL: "info",
          LOG_FORMAT: "pretty",
          TS_NODE_TRANSPILE_ONLY: "true",
        },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    for (let i = 0; i < 1200 && !output.includes("service listening"); i++)
      await new Promise((r) => setTimeout(r, 100));
    const line = output.split("\n").find((l) => l.includes("service listening"));
    expect(line, output).to.match(
      /^\d\d:\d\d:\d\d\.\d{3} INFO  service listening  url=http:\/\/127\.0\.0\.1:\d+ environment=sandbox chains=\[11155111,84532\] db=pglite$/,
    );
    expect(output).to.not.match(/^\{/m);
  });
});
