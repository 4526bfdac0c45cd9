import { expect } from "chai";
import { openDb } from "../../service/store/db";
import { currentMigrationName, migrate, migrationFiles, RENAMED_MIGRATIONS } from "../../service/store/migrate";
import { assertSchemaCurrent, schemaState, SchemaVersionError } from "../../service/store/schema-version";

const numberOf = (file: string) => file.split("_")[0];

describe("migration files: one number each, and databases that recorded the old names", function () {
  this.timeout(60_000);

  it("gives every migration file a number no other file has", () => {
    const numbers = migrationFiles().map(numberOf);
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).to.deep.equal([]);
    expect(numberOf("007_hardening.sql")).to.equal("007");
  });

  it("renames from names no file has to files that exist, keeping the order the old names had", () => {
    const files = migrationFiles();
    const oldNames = Object.keys(RENAMED_MIGRATIONS);
    expect(oldNames.filter((old) => files.includes(old))).to.deep.equal([]);
    expect(Object.values(RENAMED_MIGRATIONS).filter((renamed) => !files.includes(renamed))).to.deep.equal([]);
    const oldNameOf = new Map(Object.entries(RENAMED_MIGRATIONS).map(([old, renamed]) => [renamed, old]));
    const asAnOlderVersionNamedThem = files.map((f) => oldNameOf.get(f) ?? f).sort();
    expect(asAnOlderVersionNamedThem).to.include("007_security.sql");
    expect(asAnOlderVersionNamedThem.map(currentMigrationName)).to.deep.equal(files);
    expect(currentMigrationName("constructor")).to.equal("constructor");
  });

  it("upgrades a database an older version migrated part way under the old names: the schema check sees what is missing, migrate applies only that", async () => {
    const db = await openDb({});
    try {
      const files = migrationFiles();
      // What a version before the renames left when it stopped after 007_security.sql (now 008_security.sql).
      expect(await migrate(db, { before: "009" })).to.deep.equal(files.filter((f) => f < "009"));
      for (const [old, renamed] of Object.entries(RENAMED_MIGRATIONS)) {
        await db.query("UPDATE schema_migrations SET version = $1 WHERE version = $2", [old, renamed]);
      }
      const recorded = (
        await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version")
      ).map((r) => r.version);
      expect(recorded).to.include("007_security.sql").and.not.include("008_security.sql");

      const missing = files.filter((f) => f >= "009");
      expect(missing[0]).to.equal("009_kyc_no_signature.sql");
      expect(await schemaState(db)).to.deep.equal({
        applied: files.filter((f) => f < "009"),
        pending: missing,
        unknown: [],
      });
      const refusal = await assertSchemaCurrent(db).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(refusal).to.be.instanceOf(SchemaVersionError);
      expect(refusal!.message).to.include(`older than this version: ${missing.length} migration(s) not applied`);

      // 008_security.sql run again would fail (its columns exist): only the missing files run.
      expect(await migrate(db)).to.deep.equal(missing);
      expect(
        (await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version")).map(
          (r) => r.version,
        ),
      ).to.deep.equal(files);
      await assertSchemaCurrent(db);
      expect(await migrate(db)).to.deep.equal([]);
    } finally {
      await db.close();
    }
  });
});
