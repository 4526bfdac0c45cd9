import { expect } from "chai";
import type { PGlite } from "@electric-sql/pglite";
import { openPglite } from "../../service/store/pglite-template";
import { DbWork } from "../../service/store/db-work";
import { PgliteTransaction } from "../../service/store/pglite-transaction";
import { PreparedStatements } from "../../service/store/prepared-statements";
import { PgliteProtocol, type Step } from "../../service/store/pglite-protocol";

/** The engine's protocol, each trip written down: its statements, a prepared one as EXECUTE and its name. */
class RecordedProtocol extends PgliteProtocol {
  readonly trips: string[] = [];
  override run(steps: readonly Step[]) {
    this.trips.push(steps.map((s) => ("text" in s ? s.text : `EXECUTE ${s.prepared.name}`)).join(";\n"));
    return super.run(steps);
  }
}

/**
 * What a transaction on the embedded database costs in trips into its engine (each ~0.15–0.3 ms of the request's
 * thread, whatever the statement does): BEGIN rides with the first statement, writes with the next one or COMMIT, and
 * statements issued `together` share one trip.
 */
describe("embedded database: trips into the engine per transaction", function () {
  this.timeout(60_000);
  let pg: PGlite;
  let trips: string[];
  let statements: PreparedStatements;
  const transaction = <T>(fn: (tx: PgliteTransaction) => Promise<T>): Promise<T> => {
    trips = protocol.trips;
    trips.length = 0;
    const tx = new PgliteTransaction(statements, new DbWork());
    return tx.run(() => fn(tx));
  };
  let protocol: RecordedProtocol;

  before(async () => {
    pg = await openPglite();
    const { protocol: wire } = await import("@electric-sql/pglite");
    protocol = new RecordedProtocol(pg, wire);
    statements = new PreparedStatements(protocol);
    await pg.exec("CREATE TABLE trip_probe (id int PRIMARY KEY, v text)");
    // Each statement prepared once, as a running service has them.
    await transaction(async (tx) => {
      await tx.query("INSERT INTO trip_probe (id, v) VALUES ($1, $2) RETURNING id", [1, "one"]);
      await tx.query("SELECT v FROM trip_probe WHERE id = $1 FOR UPDATE", [1]);
      await tx.query("UPDATE trip_probe SET v = v || $2 WHERE id = $1 RETURNING v", [1, "+"]);
      await tx.write("UPDATE trip_probe SET v = $2 WHERE id = $1", [1, "one"]);
    });
  });
  after(async () => {
    await pg?.close();
  });

  it("three statements issued together, then a write and COMMIT: two trips, BEGIN in the first", async () => {
    const [locked, bumped, inserted] = await transaction((tx) =>
      tx
        .together(
          () =>
            [
              tx.query<{ v: string }>("SELECT v FROM trip_probe WHERE id = $1 FOR UPDATE", [1]),
              tx.query<{ v: string }>("UPDATE trip_probe SET v = v || $2 WHERE id = $1 RETURNING v", [1, "+"]),
              tx.query<{ id: number }>("INSERT INTO trip_probe (id, v) VALUES ($1, $2) RETURNING id", [2, "two"]),
            ] as const,
        )
        .then(async (rows) => {
          await tx.write("UPDATE trip_probe SET v = $2 WHERE id = $1", [2, "deux"]);
          return rows;
        }),
    );
    expect(locked).to.deep.equal([{ v: "one" }]);
    expect(bumped).to.deep.equal([{ v: "one+" }]);
    expect(inserted).to.deep.equal([{ id: 2 }]);
    expect(trips).to.have.length(2);
    expect(trips[0]).to.match(/^BEGIN;\nEXECUTE tak_\d+;\nEXECUTE tak_\d+;\nEXECUTE tak_\d+$/);
    expect(trips[1]).to.match(/^EXECUTE tak_\d+;\nCOMMIT$/);
    expect((await pg.query<{ v: string }>("SELECT v FROM trip_probe ORDER BY id")).rows).to.deep.equal([
      { v: "one+" },
      { v: "deux" },
    ]);
  });

  it("a write, then a final query with the COMMIT: one trip", async () => {
    const rows = await transaction(async (tx) => {
      await tx.write("UPDATE trip_probe SET v = $2 WHERE id = $1", [1, "uno"]);
      return tx.finalQuery<{ v: string }>("SELECT v FROM trip_probe WHERE id = $1 FOR UPDATE", [1]);
    });
    expect(rows).to.deep.equal([{ v: "uno" }]);
    expect(trips).to.have.length(1);
    expect(trips[0]).to.match(/^BEGIN;\nEXECUTE tak_\d+;\nEXECUTE tak_\d+;\nCOMMIT$/);
  });

  it("the same statements one after the other: a trip each", async () => {
    await transaction(async (tx) => {
      await tx.query("SELECT v FROM trip_probe WHERE id = $1 FOR UPDATE", [1]);
      await tx.query("UPDATE trip_probe SET v = v || $2 WHERE id = $1 RETURNING v", [1, "+"]);
    });
    expect(trips).to.have.length(3);
  });

  it("a trip's time is the engine's: code queued meanwhile runs after it, not inside its measured time", async () => {
    const work = new DbWork();
    const step = (await statements.step("SELECT v FROM trip_probe WHERE id = $1", [1], work))!;
    const busyMs = 60;
    // Queued before the trip: it would run inside the trip if the trip awaited anything between the call and its answer.
    void Promise.resolve().then(() => {
      const until = performance.now() + busyMs;
      while (performance.now() < until);
    });
    const started = performance.now();
    const [answer] = await statements.trip([step], work);
    expect(performance.now() - started).to.be.at.least(busyMs); // the queued code did run before the caller resumed
    expect(answer.rows).to.have.length(1);
    expect(work.snapshot().background.ms).to.be.below(busyMs / 2);
  });

  it("trips issued while one of PGlite's own calls runs wait for it: neither takes the other's unnamed statement", async () => {
    const work = new DbWork();
    const own = statements.unprepared<{ n: number }>("SELECT $1::int + 1 AS n, pg_sleep(0)", [41], work);
    const trips: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) {
      await Promise.resolve();
      trips.push(statements.trip([{ text: `SELECT ${i} AS i` }], work));
    }
    expect(await own).to.deep.equal([{ n: 42, pg_sleep: "" }]);
    const answers = (await Promise.all(trips)) as { rows: { i: number }[] }[][];
    expect(answers.map(([a]) => a.rows[0].i)).to.deep.equal([...Array(30).keys()]);
  });
});
