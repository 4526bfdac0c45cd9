import { expect } from "chai";
import type { PGlite } from "@electric-sql/pglite";
import { openPglite } from "../../service/store/pglite-template";
import { PgliteProtocol } from "../../service/store/pglite-protocol";
import { encodeTrip, type RequestStep } from "../../service/store/pglite-request";

/**
 * A trip's messages written by encodeTrip (service/store/pglite-request.ts) are, byte for byte, what PGlite's own
 * serializer writes for the same steps, and the engine runs them: parameters of every shape travel unchanged.
 */
describe("embedded database: a trip's messages written in one pass", function () {
  this.timeout(60_000);

  /** The same trip through PGlite's serializer, message by message, as PgliteProtocol built it before. */
  const theirs = async (steps: RequestStep[]) => {
    const s = (await import("@electric-sql/pglite")).protocol.serialize;
    const parts: Uint8Array[] = [];
    for (const step of steps) {
      if ("text" in step)
        parts.push(s.parse({ text: step.text }), s.bind({}), s.describe({ type: "P" }), s.execute({}));
      else parts.push(s.bind({ statement: step.prepared.name, values: [...step.values] }), s.execute({}));
    }
    parts.push(s.sync());
    return Buffer.concat(parts);
  };

  const trips: [string, RequestStep[]][] = [
    ["no steps: the Sync alone", []],
    ["SQL text", [{ text: "BEGIN" }]],
    ["a prepared statement without parameters", [{ prepared: { name: "tak_1" }, values: [] }]],
    [
      "NULLs, empty strings, unicode (2-, 3- and 4-byte forms) and a lone surrogate",
      [{ prepared: { name: "tak_22" }, values: [null, "", "naïve ☃ 𝄞", "\ud800", null] }],
    ],
    [
      "a large parameter and many of them",
      [
        {
          prepared: { name: "tak_3" },
          values: ["x".repeat(100_000), ...Array.from({ length: 300 }, (_, i) => `${i}`)],
        },
      ],
    ],
    [
      "a transaction's trip: text and prepared steps mixed",
      [
        { text: "BEGIN" },
        { prepared: { name: "tak_4" }, values: ["a", null] },
        { prepared: { name: "tak_5" }, values: ['{"k":"é"}'] },
        { text: "COMMIT" },
      ],
    ],
  ];
  for (const [what, steps] of trips) {
    it(`${what}: the bytes PGlite's serializer writes`, async () => {
      expect(encodeTrip(steps).equals(await theirs(steps))).to.equal(true);
    });
  }

  it("the engine runs the trip and reads its parameters back unchanged", async () => {
    const pg: PGlite = await openPglite();
    try {
      const protocol = new PgliteProtocol(pg, (await import("@electric-sql/pglite")).protocol);
      const prepared = protocol.prepare("echo", "SELECT $1::text AS a, $2::text AS b, $3::text AS c");
      const values = ["naïve ☃ 𝄞", null, "y".repeat(70_000)];
      const [begin, echoed, commit] = protocol.run([{ text: "BEGIN" }, { prepared, values }, { text: "COMMIT" }]);
      expect(begin.command).to.equal("BEGIN");
      expect(echoed.rows).to.deep.equal([{ a: values[0], b: null, c: values[2] }]);
      expect(commit.command).to.equal("COMMIT");
    } finally {
      await pg.close();
    }
  });
});
