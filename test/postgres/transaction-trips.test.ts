import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Pool } from "pg";
import { openDb, type Db } from "../../service/store/db";
import { inlineParameters } from "../../service/store/inline-parameters";
import { countedAs } from "../../service/store/db-work";
import { LAZY_STATEMENT_MS } from "../../service/store/postgres-transaction";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * A transaction on a PostgreSQL server in as few trips as on the embedded database (service/store/postgres-transaction.ts),
 * counted by the store on a real connection: BEGIN with the first statement, writes with the next statement or COMMIT,
 * statements issued together in one trip, the last statement with its COMMIT (finalQuery); parameters written in as
 * literals read back as they were given.
 */
describe("PostgreSQL server: trips per transaction", function () {
  this.timeout(60_000);
  let db: Db;
  const schema = "trips_tx_" + randomBytes(6).toString("hex");

  before(async () => {
    db = await openDb({ databaseUrl: DATABASE_URL, schema });
    await db.query("CREATE TABLE probe (id int PRIMARY KEY, v text, j jsonb, a text[], b bytea)");
  });
  after(async () => {
    await db?.close();
    const pool = new Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  /** The trips and statements `fn` made, counted as its own kind of work. */
  async function counted<T>(fn: () => Promise<T>): Promise<{ value: T; trips: number; statements: number }> {
    const kind = "probe " + randomBytes(4).toString("hex");
    const value = await countedAs(kind, fn);
    const figures = db.work.snapshot()[kind] ?? { trips: 0, statements: 0 };
    return { value, trips: figures.trips, statements: figures.statements };
  }

  it("statements issued together, then a write and COMMIT: two trips, BEGIN in the first", async () => {
    await db.query("INSERT INTO probe (id, v) VALUES (1, 'one')");
    const { value, trips, statements } = await counted(() =>
      db.transaction(async (q) => {
        const rows = await q.together(
          () =>
            [
              q.query<{ v: string }>("SELECT v FROM probe WHERE id = $1 FOR UPDATE", [1]),
              q.query<{ v: string }>("UPDATE probe SET v = v || $2 WHERE id = $1 RETURNING v", [1, "+"]),
              q.query<{ id: number }>("INSERT INTO probe (id, v) VALUES ($1, $2) RETURNING id", [2, "two"]),
            ] as const,
        );
        await q.write("UPDATE probe SET v = $2 WHERE id = $1", [2, "deux"]);
        return rows;
      }),
    );
    expect(value).to.deep.equal([[{ v: "one" }], [{ v: "one+" }], [{ id: 2 }]]);
    expect([trips, statements]).to.deep.equal([2, 6]);
    expect(await db.query("SELECT v FROM probe ORDER BY id")).to.deep.equal([{ v: "one+" }, { v: "deux" }]);
  });

  it("a final query carries the COMMIT: a lock, a write and a read in one trip", async () => {
    const { value, trips } = await counted(() =>
      db.transaction(async (q) => {
        await q.write("SELECT pg_advisory_xact_lock(hashtext($1))", ["probe"]);
        await q.write("UPDATE probe SET v = $2 WHERE id = $1", [1, "uno"]);
        return q.finalQuery<{ v: string }>("SELECT v FROM probe WHERE id = $1", [1]);
      }),
    );
    expect(value).to.deep.equal([{ v: "uno" }]);
    expect(trips).to.equal(1);
    const late = await db
      .transaction(async (q) => {
        await q.finalQuery("SELECT 1");
        await q.write("UPDATE probe SET v = 'late' WHERE id = 1");
      })
      .catch((e: Error) => e);
    expect((late as Error).message).to.match(/committed by its final query/);
  });

  it("a statement that fails in a combined trip fails the transaction: nothing of it stays", async () => {
    const failed = await db
      .transaction(async (q) => {
        await q.write("UPDATE probe SET v = $2 WHERE id = $1", [1, "lost"]);
        await q.query("INSERT INTO probe (id, v) VALUES ($1, $2)", [1, "duplicate"]);
      })
      .catch((e: { code?: string }) => e);
    expect((failed as { code?: string }).code).to.equal("23505");
    expect(await db.query("SELECT v FROM probe WHERE id = 1")).to.deep.equal([{ v: "uno" }]);
  });

  it("a rate limit's lazy statement rides ahead of the next one gathered: one trip, applied before it", async () => {
    await db.query("CREATE TABLE counter (k text PRIMARY KEY, n int)");
    await db.query("INSERT INTO counter VALUES ('slot', 1)");
    const lazy = db.rateLimiterClient({ lazy: true });
    const eager = db.rateLimiterClient();
    const { value, trips, statements } = await counted(async () => {
      const given = lazy.query({ text: "UPDATE counter SET n = n - $1 WHERE k = $2", values: [1, "slot"] });
      await new Promise((resolve) => setTimeout(resolve, 50)); // the lazy one alone starts no trip
      const read = await eager.query({ text: "SELECT n FROM counter WHERE k = $1", values: ["slot"] });
      await given;
      return read.rows;
    });
    expect(value).to.deep.equal([{ n: 0 }]);
    expect([trips, statements]).to.deep.equal([1, 2]);
    const alone = await counted(async () => {
      const started = Date.now();
      await lazy.query({ text: "UPDATE counter SET n = n + 1 WHERE k = $1", values: ["slot"] });
      return Date.now() - started;
    });
    expect(alone.value).to.be.within(LAZY_STATEMENT_MS - 100, LAZY_STATEMENT_MS + 2_000);
    expect(alone.trips).to.equal(1);
  });

  it("parameters written in read back as given: quotes, backslashes, NUL refused, JSON, arrays, bytes, NULL", async () => {
    const tricky = `it's a \\ "quoted" $1 -- not a comment /* nor this */ $$dollar$$ ünïcödé`;
    const bytes = Uint8Array.from([0, 1, 2, 255]);
    const rows = await db.transaction((q) =>
      q.finalQuery<{ v: string; j: unknown; a: string[]; b: Buffer }>(
        "INSERT INTO probe (id, v, j, a, b) VALUES ($1, $2, $3, $4, $5) RETURNING v, j, a, b",
        [3, tricky, JSON.stringify({ k: "it's" }), ["x,y", 'q"t', null], bytes],
      ),
    );
    expect(rows[0].v).to.equal(tricky);
    expect(rows[0].j).to.deep.equal({ k: "it's" });
    expect(rows[0].a).to.deep.equal(["x,y", 'q"t', null]);
    expect(Buffer.from(rows[0].b).equals(Buffer.from(bytes))).to.equal(true);
    expect(() => inlineParameters("SELECT $1", ["a\0b"])).to.throw(/0x00/);
    expect(inlineParameters("SELECT '$1', \"a$1\", $tag$ $1 $tag$, x$1, $2 -- $1\n", ["no", "yes"])).to.equal(
      "SELECT '$1', \"a$1\", $tag$ $1 $tag$, x$1, 'yes' -- $1\n",
    );
  });
});
