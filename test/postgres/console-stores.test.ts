import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { openDb } from "../../service/store/db";
import { describeConsoleStores } from "../helpers/console-store-suite";

/** Run with `npm run test:pg` (needs a PostgreSQL server; excluded from the default run). */
const databaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "t_" + randomBytes(8).toString("hex");

describeConsoleStores(
  "PostgreSQL server",
  () => openDb({ databaseUrl, schema }),
  async () => {
    const pool = new Pool({ connectionString: databaseUrl, max: 1 });
    try {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await pool.end();
    }
  },
);
