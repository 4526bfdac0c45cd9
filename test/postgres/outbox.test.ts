import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Pool } from "pg";
import { emitEvent, eventsAfter } from "../../service/store/outbox";
import { openDb, type Db, type Queryable } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const testEvent = (apiKeyId: string, txId: string) =>
  ({ type: "batch.completed", apiKeyId, txId, data: { txId } }) as unknown as Parameters<typeof emitEvent>[1];

/** The outbox on a PostgreSQL server: ids follow commit order, not insert order; nothing of a rolled-back change. */
describe("PostgreSQL server: the outbox's ids", function () {
  this.timeout(60_000);
  const schema = "outbox_" + randomBytes(6).toString("hex");
  let db: Db;

  before(async () => {
    db = await openDb({ databaseUrl: DATABASE_URL, schema });
    await migrate(db);
  });
  after(async () => {
    await db?.close();
    const pool = new Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it("an event inserted first but committed last gets the later id: a reader that saw the other never misses it", async () => {
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((r) => (releaseFirst = r));
    let firstInserted!: () => void;
    const inserted = new Promise<void>((r) => (firstInserted = r));
    const txA = "0x" + "a".repeat(64);
    const txB = "0x" + "b".repeat(64);
    const slow = db.transaction(async (q: Queryable) => {
      await emitEvent(q, testEvent("k", txA));
      // A write rides with the transaction's next statement (store/postgres-transaction.ts): one read sends it now.
      await q.query("SELECT 1");
      firstInserted();
      await firstMayCommit;
    });
    await inserted;
    await db.transaction((q) => emitEvent(q, testEvent("k", txB)));
    const seen = await eventsAfter(db, { apiKeyId: "k" }, "0");
    expect(seen.map((e) => e.txId)).to.deep.equal([txB]); // the slow one is not committed: not visible, and no id yet
    releaseFirst();
    await slow;
    const after = await eventsAfter(db, { apiKeyId: "k" }, seen[0].id);
    expect(
      after.map((e) => e.txId),
      "read from the id already seen: the slow event follows",
    ).to.deep.equal([txA]);
    const rows = await db.query<{ id: string; position: string; tx_id: string }>(
      "SELECT id::text AS id, position::text AS position, tx_id FROM events ORDER BY id",
    );
    expect(rows.map((r) => r.tx_id)).to.deep.equal([txA, txB]); // inserted first…
    expect(BigInt(rows[0].position)).to.be.greaterThan(BigInt(rows[1].position)); // …positioned last
  });

  it("a rolled-back change leaves no event and no delivery", async () => {
    await db.query(
      "INSERT INTO webhook_endpoints (id, api_key_id, url, secret_sealed) VALUES ('wh_rb', 'rb', 'https://example.com/', 'sealed')",
    );
    await db
      .transaction(async (q) => {
        await emitEvent(q, testEvent("rb", "0x" + "c".repeat(64)));
        throw new Error("the change fails");
      })
      .catch(() => undefined);
    expect(await db.query("SELECT 1 FROM events WHERE api_key_id = 'rb'")).to.deep.equal([]);
    expect(await db.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = 'wh_rb'")).to.deep.equal([]);
    await db.transaction((q) => emitEvent(q, testEvent("rb", "0x" + "d".repeat(64))));
    expect(await db.query("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = 'wh_rb'")).to.have.length(1);
  });
});
