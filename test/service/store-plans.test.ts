import { expect } from "chai";
import { openDb, type Db } from "../../service/store/db";
import { createLogger } from "../../service/logger";
import { migrate } from "../../service/store/migrate";
import { PlannerStatistics } from "../../service/store/planner-statistics";

/**
 * The embedded database plans a statement once (PreparedStatements) and keeps that plan. Planned while its tables were
 * nearly empty, a lookup scanned them whole and kept doing so as they grew (a send read every payment and every
 * transaction row). PlannerStatistics analyzes the tables that grew, which makes the planner plan those statements
 * again with their sizes: the send path's lookups then use their indexes.
 */
describe("embedded database: statements planned over small tables use their indexes once the tables grew", function () {
  this.timeout(60_000);
  let db: Db;
  let statistics: PlannerStatistics;

  const grow = async (from: number, to: number) => {
    // Rows about as wide as real ones (a transaction's unsigned form; a payment's requirements).
    await db.query(
      `INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, status, body, plan, info)
       SELECT 'tx' || g, 84532, 'agentCreateToken', 'relayed', '0xsigner', 'success', '{}', '{}', '{}' FROM generate_series(${from}, ${to}) g`,
    );
    await db.query(
      `INSERT INTO batch_transactions (tx_id, index, unsigned, tx_hash, status)
       SELECT 'tx' || g, 0, jsonb_build_object('data', repeat('ab', 200)), '0xhash' || g, 'confirmed' FROM generate_series(${from}, ${to}) g`,
    );
    await db.query(
      `INSERT INTO payments (id, subject, route, tx_id, network, asset, pay_to, amount, payer, authorization_nonce, valid_before, requirements, status, settle_tx_hash)
       SELECT gen_random_uuid(), 'send:tx' || g, '/send-transactions', 'tx' || g, 'eip155:84532', '0xasset', '0xpayto', 1000, '0xpayer', '0xnonce' || g, 0,
              jsonb_build_object('extra', repeat('cd', 200)), 'settled', '0xsettle' || (g / 5)
       FROM generate_series(${from}, ${to}) g`,
    );
  };

  const LOOKUPS = [
    {
      name: "probe_payments",
      sql: "SELECT * FROM payments WHERE tx_id = $1 ORDER BY created_at",
      args: "'tx7'",
      index: "payments_tx_idx",
    },
    {
      name: "probe_settlement",
      sql: "SELECT * FROM payments WHERE settle_tx_hash = $1 AND NOT settle_in_operation ORDER BY created_at",
      args: "'0xsettle7'",
      index: "payments_settle_tx_idx",
    },
    {
      name: "probe_hashes",
      sql: "SELECT o.tx_hash, o.tx_id FROM batch_transactions o WHERE o.tx_hash = ANY($1::text[]) AND o.tx_id <> $2",
      args: "'{0xhash7}', 'tx8'",
      index: "batch_transactions_tx_hash_key",
    },
    {
      name: "probe_tx",
      sql: "SELECT * FROM batch_transactions WHERE tx_id = $1 AND index = $2 FOR UPDATE",
      args: "'tx7', 0",
      index: "batch_transactions_pkey",
    },
  ];
  const keptPlan = async (name: string, args: string) =>
    (await db.query<{ "QUERY PLAN": string }>(`EXPLAIN EXECUTE ${name}(${args})`))
      .map((r) => r["QUERY PLAN"])
      .join("\n");

  before(async () => {
    db = await openDb({});
    await migrate(db);
    statistics = new PlannerStatistics(db, createLogger("silent"));
    await grow(1, 3);
    // The plan a statement keeps once PostgreSQL stops planning it for each call's values, made over three rows.
    await db.query("SET plan_cache_mode = force_generic_plan");
    for (const { name, sql, args } of LOOKUPS) {
      await db.query(`PREPARE ${name} AS ${sql}`);
      await keptPlan(name, args);
    }
  });

  after(async () => {
    await db?.close();
  });

  it("analyzes the tables that grew (as autovacuum would), then none until they change enough again", async () => {
    await grow(4, 400);
    const analyzed = await statistics.refresh();
    expect(analyzed).to.include.members(["batch_transactions", "batches", "payments"]);
    expect(await statistics.refresh()).to.deep.equal([]);
  });

  for (const { name, args, index } of LOOKUPS) {
    it(`${name}: the kept plan, made again after the refresh, looks the row up by ${index}`, async () => {
      const plan = await keptPlan(name, args);
      expect(plan).to.include(index);
      expect(plan).not.to.match(/Seq Scan/);
    });
  }
});
