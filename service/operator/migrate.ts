import { migrate } from "../store/migrate";
import { schemaState, SchemaVersionError } from "../store/schema-version";
import { operatorConfig, openConfiguredDb, runningService } from "./setup";

/**
 * `npm run migrate` (on a server: `node dist/service/operator/migrate.js`): brings the configured database's schema to
 * this version's, the one step that changes it (a production start and the admin tool only check it). Refuses a
 * database a newer version migrated, and the embedded database while a service holds it. Prints what it applied (JSON).
 */
async function main() {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(
      "usage: npm run migrate   (on a server: node dist/service/operator/migrate.js)\n\nApplies this version's migrations to the configured database (DATABASE_URL, else the embedded one under DATA_DIR),\nwith the service's configuration (the environment, ENV_FILE or ./.env). Run it before starting a new version.",
    );
    return;
  }
  const config = operatorConfig({ existing: false });
  const service = runningService(config);
  if (service)
    throw new Error(
      `The service (pid ${service.pid}) holds the embedded database: stop it, run npm run migrate, start it again`,
    );
  const db = await openConfiguredDb(config);
  try {
    const before = await schemaState(db);
    if (before.unknown.length)
      throw new SchemaVersionError(
        `The database's schema is newer than this version: it has ${before.unknown.join(", ")}. Run a version that knows them; nothing was changed.`,
      );
    const applied = await migrate(db);
    console.log(
      JSON.stringify({ applied, schema: [...before.applied, ...applied].at(-1) ?? null, database: db.kind }, null, 2),
    );
  } finally {
    await db.close();
  }
}

main().catch((error: Error) => {
  console.error(JSON.stringify({ error: error.message }));
  process.exit(1);
});
