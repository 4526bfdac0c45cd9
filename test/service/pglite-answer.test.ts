import { expect } from "chai";
import type { PGlite } from "@electric-sql/pglite";
import { openPglite } from "../../service/store/pglite-template";
import { PgliteProtocol } from "../../service/store/pglite-protocol";

/**
 * The engine's answers read by readAnswer (service/store/pglite-answer.ts) give the rows PGlite's own `query` gives for
 * the same statement: every kind of value the stores read, NULLs, no rows, several statements in one trip; errors
 * are PGlite's DatabaseError; notifications reach the listener.
 */
describe("embedded database: answers read in one pass give what PGlite's own query gives", function () {
  this.timeout(60_000);
  let pg: PGlite;
  let protocol: PgliteProtocol;
  const notified: string[] = [];
  let next = 0;

  before(async () => {
    pg = await openPglite();
    const { protocol: wire } = await import("@electric-sql/pglite");
    protocol = new PgliteProtocol(pg, wire, (channel) => notified.push(channel));
  });
  after(async () => {
    await pg?.close();
  });

  const both = async (sql: string, params: (string | null)[]) => {
    const prepared = protocol.prepare(`answer_${++next}`, sql);
    const [mine] = protocol.run([{ prepared, values: params }]);
    const theirs = await pg.query(sql, params);
    return { mine: mine.rows, theirs: theirs.rows };
  };

  const cases: [string, string, (string | null)[]][] = [
    ["text, unicode and an empty string", "SELECT $1::text AS a, ''::text AS b, 'é✓𝄞'::text AS c", ["naïve ☃"]],
    ["NULLs of several types", "SELECT NULL::text AS a, NULL::int AS b, NULL::jsonb AS c, $1::text AS d", [null]],
    [
      "numbers: int4, int8 and numeric as PGlite parses them",
      "SELECT 7::int AS a, $1::bigint AS b, 12345678901234567890.5::numeric AS c, 1.5::float8 AS d",
      ["9007199254740993"],
    ],
    [
      "json, jsonb, booleans, timestamps, arrays",
      "SELECT $1::jsonb AS a, '[1,{\"b\":null}]'::json AS b, true AS c, false AS d, " +
        "'2026-12-06T10:00:00Z'::timestamptz AS e, ARRAY['x','y'] AS f, ARRAY[1,2]::int[] AS g",
      ['{"k": "v", "n": [1, 2]}'],
    ],
    ["no rows", "SELECT 1 AS a WHERE $1::text = 'never'", ["x"]],
    ["many rows", "SELECT g AS n, repeat('z', g) AS s FROM generate_series(1, $1::int) g", ["300"]],
  ];
  for (const [name, sql, params] of cases)
    it(name, async () => {
      const { mine, theirs } = await both(sql, params);
      expect(mine).to.deep.equal(theirs);
    });

  it("several statements in one trip, one of them SQL text: each its own rows and command", () => {
    const prepared = protocol.prepare(`answer_${++next}`, "SELECT $1::int + 1 AS n");
    const results = protocol.run([
      { text: "BEGIN" },
      { prepared, values: ["1"] },
      { text: "SELECT 'x' AS t UNION ALL SELECT 'y'" },
      { prepared, values: ["41"] },
      { text: "COMMIT" },
    ]);
    expect(results).to.deep.equal([
      { rows: [], command: "BEGIN" },
      { rows: [{ n: 2 }], command: "SELECT" },
      { rows: [{ t: "x" }, { t: "y" }], command: "SELECT" },
      { rows: [{ n: 42 }], command: "SELECT" },
      { rows: [], command: "COMMIT" },
    ]);
  });

  it("an error is PGlite's DatabaseError, with its code and detail; nothing of its trip stays", async () => {
    protocol.run([{ text: "CREATE TABLE answer_probe (id int PRIMARY KEY)" }]);
    const insert = protocol.prepare(`answer_${++next}`, "INSERT INTO answer_probe (id) VALUES ($1)");
    let thrown: unknown;
    try {
      protocol.run([
        { prepared: insert, values: ["1"] },
        { prepared: insert, values: ["1"] },
        { prepared: insert, values: ["2"] },
      ]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(Error);
    expect(thrown).to.include({ code: "23505", table: "answer_probe" });
    expect((thrown as { detail: string }).detail).to.match(/Key \(id\)=\(1\) already exists/);
    // One Sync: one implicit transaction, rolled back with the error; the statement after it never ran.
    expect((await pg.query("SELECT id FROM answer_probe")).rows).to.deep.equal([]);
  });

  it("a NOTIFY committed in a trip reaches the listener", () => {
    protocol.run([{ text: "LISTEN answer_channel" }]);
    notified.length = 0;
    protocol.run([{ text: "BEGIN" }, { text: "NOTIFY answer_channel" }, { text: "COMMIT" }]);
    expect(notified).to.deep.equal(["answer_channel"]);
  });
});
