import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Pool } from "pg";
import { startServiceProcess, type ChildService } from "../helpers/child-service";
import { stopStartedProcesses } from "../helpers/processes";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";
import { WALLET_LOCK_KEY, walletLockName } from "../../service/store/wallet-locks";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SENDS = 50;

/** The process's re-sends after "nonce too high" (its /metrics). */
async function nonceAheadRetries(service: ChildService): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  return Number(/^tak_broadcast_nonce_ahead_retries (\d+)/m.exec(text)![1]);
}

describe("PostgreSQL server: two service processes share one relayer", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  const schema = "relay_" + randomBytes(6).toString("hex");
  const services: ChildService[] = [];

  before(async () => {
    sandbox = await getSandbox();
    const env = testEnv(sandbox, fs.mkdtempSync(path.join(os.tmpdir(), "tak-pg-")), {
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
    });
    // Both start at once: migrations and nonce syncing must not trip over each other.
    services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
  });
  after(async () => {
    await stopStartedProcesses();
    const pool = new Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it(`${SENDS} concurrent relayed sends split across both processes confirm with contiguous relayer nonces`, async () => {
    const [a, b] = services;
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const payer = sandbox.accounts[4];
    const txIds: string[] = [];
    for (let i = 0; i < SENDS; i++)
      txIds.push(await prepareRelayedToken(i % 2 ? b.api : a.api, `PG${i}`, sandbox.accounts[6].address));
    const start = await provider.getTransactionCount(relayer, "latest");
    const retriesBefore = (await nonceAheadRetries(a)) + (await nonceAheadRetries(b));

    const results = await Promise.all(txIds.map((txId, i) => payRelayedSend(i % 2 ? a.api : b.api, txId, payer)));
    for (const r of results) {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status, JSON.stringify(r.body)).to.equal("success");
    }
    const nonces = [];
    for (const txId of txIds) {
      const status = (await a.api.get("/get-transaction-status", { txId })).body;
      const tx = await provider.getTransaction(status.txHash);
      expect(tx!.from).to.equal(relayer);
      nonces.push(tx!.nonce);
    }
    nonces.sort((x, y) => x - y);
    expect(nonces).to.deep.equal(Array.from({ length: SENDS }, (_, i) => start + i));
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(start + SENDS);
    // The wallet's lock kept both processes' broadcasts in nonce order: the node never saw one ahead of its turn.
    expect((await nonceAheadRetries(a)) + (await nonceAheadRetries(b)) - retriesBefore).to.equal(0);
  });

  it("a relayed broadcast the node refuses gives the relayer's lock back; the other process relays next", async () => {
    const [a, b] = services;
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const payer = sandbox.accounts[4];
    const refusedTxId = await prepareRelayedToken(a.api, "PGREF", sandbox.accounts[6].address);
    const nextTxId = await prepareRelayedToken(b.api, "PGNXT", sandbox.accounts[6].address);
    const balance = await provider.getBalance(relayer);
    await provider.send("hardhat_setBalance", [relayer, "0x0"]); // the node refuses what the relayer cannot pay gas for
    try {
      const refused = await payRelayedSend(a.api, refusedTxId, payer);
      expect(refused.body.status, JSON.stringify(refused.body)).to.equal("rejected");
      expect(refused.body.error, JSON.stringify(refused.body)).to.match(/fund/i);
    } finally {
      await provider.send("hardhat_setBalance", [relayer, "0x" + balance.toString(16)]);
    }
    const probe = new Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
    try {
      const { rows } = await probe.query(`SELECT pg_try_advisory_lock(${WALLET_LOCK_KEY}) AS free`, [
        walletLockName(sandbox.baseSepolia.chainId, relayer),
      ]);
      expect(rows[0].free).to.equal(true);
      await probe.query(`SELECT pg_advisory_unlock(${WALLET_LOCK_KEY})`, [
        walletLockName(sandbox.baseSepolia.chainId, relayer),
      ]);
    } finally {
      await probe.end();
    }
    const next = await payRelayedSend(b.api, nextTxId, payer);
    expect(next.body.status, JSON.stringify(next.body)).to.equal("success");
  });
});
