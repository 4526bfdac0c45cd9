import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { openDb } from "../../service/store/db";
import { describeAtRest } from "../helpers/at-rest-suite";

/** Run with `npx hardhat test test/postgres/at-rest.test.ts` (needs a PostgreSQL server; excluded from the default run). */
const databaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schemas: string[] = [];

describeAtRest(
  "PostgreSQL server",
  () => {
    const schema = "t_" + randomBytes(8).toString("hex");
    schemas.push(schema);
    return openDb({ databaseUrl, schema });
  },
  async () => {
    const pool = new Pool({ connectionString: databaseUrl, max: 1 });
    try {
      for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await pool.end();
    }
  },
);
