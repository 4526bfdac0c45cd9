import { currentMigrationName, migrationFiles } from "./migrate";
import type { Queryable } from "./db";

/** A database whose schema is not the one this version knows: older (run `npm run migrate`) or newer (run that version). */
export class SchemaVersionError extends Error {
  override name = "SchemaVersionError";
}

/** What the database has applied, and how it stands against the migrations this version knows. */
export interface SchemaState {
  applied: string[];
  /** Known here, not applied there: the database is older. */
  pending: string[];
  /** Applied there, unknown here: a newer version migrated it. */
  unknown: string[];
}

export async function schemaState(db: Queryable): Promise<SchemaState> {
  const [table] = await db.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  // Read only: a name recorded before its file was renamed counts as the new name (migrate rewrites it).
  const recorded = table?.present ? await db.query<{ version: string }>("SELECT version FROM schema_migrations") : [];
  const applied = recorded.map((r) => currentMigrationName(r.version)).sort();
  const known = migrationFiles();
  return {
    applied,
    pending: known.filter((f) => !applied.includes(f)),
    unknown: applied.filter((f) => !known.includes(f)),
  };
}

const listed = (files: string[]) =>
  files.length > 3 ? `${files.slice(0, 3).join(", ")} and ${files.length - 3} more` : files.join(", ");

/**
 * Refuses a database whose schema is not this version's, saying which way it differs and what to do: a production
 * start (and the admin tool) never changes the schema; `npm run migrate` does, on purpose.
 */
export async function assertSchemaCurrent(db: Queryable, who = "this version"): Promise<void> {
  const { applied, pending, unknown } = await schemaState(db);
  if (unknown.length) {
    throw new SchemaVersionError(
      `The database's schema is newer than ${who} knows: it has ${listed(unknown)}, migrated by a newer version. Run that version (or a newer one) against it; ${who} will not use it.`,
    );
  }
  if (pending.length) {
    const what = applied.length
      ? `older than ${who}: ${pending.length} migration(s) not applied (${listed(pending)})`
      : "empty: no migration applied yet";
    throw new SchemaVersionError(
      `The database's schema is ${what}. Run \`npm run migrate\` with the same configuration, then start again.`,
    );
  }
}
