import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Pool } from "pg";
import { ApiKeys } from "../../service/store/api-keys";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Signers } from "../../service/store/signers";
import { killHard, startServiceProcess, type ChildService } from "../helpers/child-service";
import { execute } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";
import { verifyWith, WebhookReceiver } from "../helpers/webhook-receiver";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TEST_EVENTS = 80;

/**
 * Two service processes on one PostgreSQL share the outbox: each event is delivered once, never by both at once (the
 * receiver answers slowly and notes any webhook-id that arrives while the same one is in flight), and both deliver.
 */
describe("PostgreSQL server: two service processes deliver one outbox", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let receiver: WebhookReceiver | undefined;
  const schema = "events_" + randomBytes(6).toString("hex");
  const services: ChildService[] = [];

  before(async () => {
    sandbox = await getSandbox();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    for (const s of services) await killHard(s.child);
    await receiver?.close();
    const pool = new Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it(`${TEST_EVENTS} test events and two batches' events, requested from both processes: each delivered exactly once, by one process at a time, in order per txId`, async () => {
    const issuer = sandbox.accounts[1];
    const db = await openDb({ databaseUrl: DATABASE_URL, schema });
    try {
      await migrate(db);
      const { key, record } = await new ApiKeys(db).create({ email: "ops@events-pg.test", plan: "Enterprise" });
      await new Signers(db).add(issuer.address, "all-keys");

      const env = testEnv(sandbox, fs.mkdtempSync(path.join(os.tmpdir(), "tak-events-pg-")), {
        DATABASE_URL,
        DATABASE_SCHEMA: schema,
        WEBHOOK_CONCURRENCY: "4",
      });
      services.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
      const [a, b] = services.map((s) => s.api.withKey(key));
      receiver!.answer = () => ({ status: 200, delayMs: 40 });
      const created = await a.post("/webhooks", { url: `${receiver!.url}/pg` });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const endpoint = created.body.id;

      const run = Math.random()
        .toString(36)
        .slice(2, 5)
        .toUpperCase()
        .replace(/[^A-Z0-9]/g, "P");
      // One issuer, one write through each process, one after the other: prepared at once, both would take the
      // issuer's same pending nonce (a prepare holds none), and the second would be refused by the chain.
      const writes = (async () => {
        const done = [];
        for (const [i, api] of [a, b].entries()) {
          done.push(
            await execute(api, issuer, {
              method: "newTokenization",
              chainId: "aa36a7",
              tokenizerEmail: `pg-${run.toLowerCase()}@events.test`,
              name: "PG",
              tokenSymbol: `P${run}${i}`,
            }),
          );
        }
        return done;
      })();
      const tests = await Promise.all(
        Array.from({ length: TEST_EVENTS }, (_, i) => (i % 2 ? a : b).post(`/webhooks/${endpoint}/test`, {})),
      );
      for (const t of tests) expect(t.status, JSON.stringify(t.body)).to.equal(202);
      const txIds = (await writes).map((w) => w.prepared.txId);

      const events = await db.query<{ position: string; tx_id: string | null }>(
        "SELECT position::text AS position, tx_id FROM events WHERE api_key_id = $1 ORDER BY events.position",
        [record.id],
      );
      expect(events).to.have.length(TEST_EVENTS + 2 * 4);
      const ids = events.map((e) => e.position);
      await receiver!.waitFor(
        "every event",
        (r) => ids.every((id) => r.some((x) => x.headers["webhook-id"] === id)),
        120_000,
      );

      const delivered = receiver!.delivered();
      for (const r of delivered) verifyWith(created.body.secret, r);
      expect(receiver!.overlaps, "a webhook-id in flight twice at once").to.deep.equal([]);
      const perId = new Map<string, number>();
      for (const r of delivered) perId.set(r.headers["webhook-id"], (perId.get(r.headers["webhook-id"]) ?? 0) + 1);
      expect(
        [...perId.values()].every((n) => n === 1),
        "each event delivered once",
      ).to.equal(true);
      expect(perId.size).to.equal(ids.length);
      for (const txId of txIds) {
        const order = events
          .filter((e) => e.tx_id === txId)
          .map((e) => delivered.findIndex((r) => r.headers["webhook-id"] === e.position));
        expect(order, txId).to.deep.equal([...order].sort((x, y) => x - y));
      }
      const byInstance = await db.query<{ instance: string; n: number }>(
        "SELECT instance, count(*)::int AS n FROM webhook_attempts GROUP BY instance",
      );
      expect(byInstance, "both processes delivered").to.have.length(2);
      expect(byInstance.reduce((n, r) => n + r.n, 0)).to.equal(ids.length);
    } finally {
      await db.close();
    }
  });
});
