import { randomBytes } from "node:crypto";
import { Pool } from "pg";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { databasePaymentStores, describePaymentStoreContract } from "../contracts-of/payment-store";

/** The payment stores' contract (test/contracts-of/) on a PostgreSQL server: `npm run test:pg`. */
const databaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "t_" + randomBytes(8).toString("hex");

describePaymentStoreContract("PostgreSQL server", async () => {
  const db = await openDb({ databaseUrl, schema });
  await migrate(db);
  return databasePaymentStores(db, async () => {
    await db.close();
    const pool = new Pool({ connectionString: databaseUrl, max: 1 });
    try {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await pool.end();
    }
  });
});
