import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { openDb } from "../../service/store/db";
import { describeStore } from "../helpers/store-suite";

/** Run with `npx hardhat test test/postgres/store.test.ts` (needs a PostgreSQL server; excluded from the default run). */
const databaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "t_" + randomBytes(8).toString("hex");

describeStore(
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
