import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Pool } from "pg";
import { killHard, startServiceProcess, type ChildService } from "../helpers/child-service";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SENDS = 50;

describe("PostgreSQL server: two service processes share one relayer", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  const schema = "relay_" + randomBytes(6).toString("hex");
  const services: ChildService[] = [];

  before(async () => {
    sandbox = await getSandbox();
    const env = testEnv(sandbox, fs.mkdtempSync(path.join(os.tmpdir(), "tak-pg-")), { DATABASE_URL, DATABASE_SCHEMA: schema });
    // Both start at once: migrations and nonce syncing must not trip over each other.
    services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
  });
  after(async () => {
    for (const s of services) await killHard(s.child);
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
    for (let i = 0; i < SENDS; i++) txIds.push(await prepareRelayedToken(i % 2 ? b.api : a.api, `PG${i}`, sandbox.accounts[6].address));
    const start = await provider.getTransactionCount(relayer, "latest");

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
  });
});
