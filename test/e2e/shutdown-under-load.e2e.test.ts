// tier: e2e
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDb } from "../../service/store/db";
import { Signers } from "../../service/store/signers";
import { startServiceProcess, stopGracefully } from "../helpers/child-service";
import { prepareAndSign } from "../helpers/flow";
import { setUpOperator } from "../helpers/operator";
import { stopStartedProcesses } from "../helpers/processes";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";

const SHUTDOWN_TIMEOUT_MS = 4_000;
/** service/process.ts: whatever a stop still waits on, the process exits SHUTDOWN_TIMEOUT_MS + 7 s after the signal. */
const EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 7_000;

/**
 * SIGTERM while the service is busy: reads from many connections at once and client-signed sends waiting on a chain
 * that stopped mining. Nothing is lost: every request already received is answered (the sends with 202 pending),
 * the process exits 0 within its bound, and the next start finishes every batch, each transaction sent once.
 */
describe("e2e: SIGTERM under load drains within its bound and loses nothing", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  after(async () => {
    await stopStartedProcesses();
    await sandbox?.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
  });

  it("reads and sends in flight are answered, exit 0 within SHUTDOWN_TIMEOUT_MS + 7 s, the next start completes every batch once", async () => {
    sandbox = await getSandbox();
    const signers = sandbox.accounts.slice(14, 18);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-shutdown-load-"));
    const key = await setUpOperator(dataDir, "ops@shutdown-load.test", signers[0].address);
    const db = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
    for (const signer of signers) await new Signers(db).add(signer.address, "all-keys");
    await db.close();
    const env = testEnv(sandbox, dataDir, { SEND_WAIT_MS: "60000", SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) });

    let started = await startServiceProcess(env);
    let api = started.api.withKey(key);
    const provider = providerFor(sandbox.sepolia);
    const suffix = Date.now().toString(36).slice(-3).toUpperCase();
    const batches = await Promise.all(
      signers.map(async (signer, i) => ({
        signer,
        nonce: await provider.getTransactionCount(signer.address, "latest"),
        ...(await prepareAndSign(api, signer, {
          method: "newTokenization",
          chainId: "aa36a7",
          tokenizerEmail: `issuer${i}@shutdown-load.test`,
          name: `Load ${i}`,
          tokenSymbol: `L${i}${suffix}`,
        })),
      })),
    );

    // The chain stops mining: each send broadcasts and waits for its block.
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [false] });
    const sends = batches.map((b) =>
      api.post("/send-transactions", { txId: b.prepared.txId, signedTransactions: b.signedTransactions }),
    );
    for (
      let i = 0;
      i < 100 && (await provider.send("eth_getBlockByNumber", ["pending", false])).transactions.length < batches.length;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));

    // 24 connections reading as fast as they are answered, until just before the signal.
    let reading = true;
    const answered: number[] = [];
    const readers = Array.from({ length: 24 }, async (_, i) => {
      while (reading) {
        const route =
          i % 3 === 0
            ? "/get-network-info?chainId=aa36a7"
            : i % 3 === 1
              ? "/health"
              : `/get-transaction-status?txId=${batches[i % batches.length].prepared.txId}`;
        const response = await fetch(started.url + route, { headers: { "x-api-key": key } });
        await response.arrayBuffer();
        answered.push(response.status);
      }
    });
    await new Promise((r) => setTimeout(r, 1_500));
    reading = false;
    const exited = new Promise<number | null>((resolve) => started.child.once("exit", (code) => resolve(code)));
    const signalledAt = Date.now();
    started.child.kill("SIGTERM");
    await Promise.all(readers);
    const answers = await Promise.all(sends);
    const code = await exited;
    const tookMs = Date.now() - signalledAt;

    expect(answered.length, "reads answered during the load").to.be.greaterThan(100);
    expect(
      answered.filter((s) => s !== 200),
      "every read answered 200",
    ).to.deep.equal([]);
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
      expect(answer.body.status).to.equal("pending");
    }
    expect(code).to.equal(0);
    expect(tookMs, "exit within SHUTDOWN_TIMEOUT_MS + 7 s").to.be.below(EXIT_BOUND_MS);
    expect(started.output()).to.include('"stopped"');

    // The next start: the chain mines again, every batch ends success, each signer's nonce moved by one (sent once).
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
    await sandbox.sepolia.provider.request({ method: "evm_setAutomine", params: [true] });
    started = await startServiceProcess(env);
    api = started.api.withKey(key);
    for (const batch of batches) {
      let status: any;
      for (let i = 0; i < 100; i++) {
        status = (await api.get("/get-transaction-status", { txId: batch.prepared.txId })).body;
        if (status.status !== "pending") break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(status.status, JSON.stringify(status)).to.equal("success");
      expect(await provider.getTransactionCount(batch.signer.address, "latest")).to.equal(batch.nonce + 1);
    }
    expect(await stopGracefully(started.child)).to.equal(0);
    provider.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
