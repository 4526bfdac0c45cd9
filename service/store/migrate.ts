import fs from "node:fs";
import path from "node:path";
import type { Db } from "./db";

const MIGRATIONS_DIR = path.join(__dirname, "migrations");
/** Arbitrary constant: serializes migrations when several service instances start on one PostgreSQL server. */
const MIGRATION_LOCK_ID = 80_042_26;

/**
 * Migrations whose file was renamed, old name → new name: 007 and 008 were each used twice, and each file now has a
 * number of its own, in the same order. A database records what it applied by file name, so one migrated under the
 * old names has them rewritten (in the migration's transaction, before anything is compared) and nothing runs twice.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  "007_security.sql": "008_security.sql",
  "008_kyc_no_signature.sql": "009_kyc_no_signature.sql",
  "008_outbox_webhooks.sql": "010_outbox_webhooks.sql",
};

/** A recorded migration's name as this version knows it. */
export const currentMigrationName = (version: string): string =>
  Object.hasOwn(RENAMED_MIGRATIONS, version) ? RENAMED_MIGRATIONS[version] : version;

/**
 * Applies every migration (NNN_name.sql in migrations/) not yet applied, in order, each in its own transaction.
 * `before` stops at the first file that does not sort before it (tests that fill a database as an older version
 * left it).
 */
export async function migrate(db: Db, options: { before?: string } = {}): Promise<string[]> {
  const files = migrationFiles().filter((f) => options.before === undefined || f < options.before);
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_ID]);
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    await tx.query(
      "UPDATE schema_migrations m SET version = r.value FROM jsonb_each_text($1::jsonb) r WHERE m.version = r.key",
      [JSON.stringify(RENAMED_MIGRATIONS)],
    );
    const done = new Set(
      (await tx.query<{ version: string }>("SELECT version FROM schema_migrations")).map((r) => r.version),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = fs.readFileSync(path.join(MIGRATIONS_DIR, file), "utf8");
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (version) VALUES ($1)", [file]);
      applied.push(file);
    }
  });
  return applied;
}

/** The migrations this version knows (the files of migrations/), in order. */
export function migrationFiles(): string[] {
  return fs
    .readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
}

/** Splits a migration on semicolons at line ends (migrations hold no functions or quoted semicolons). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\r?\n|$)/)
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter(Boolean);
}
