import { PLAN_CREDITS } from "../model/plans";
import type { Db, Queryable } from "./db";

/** How many written balances Credits remembers (a key and a method each). */
const GRANTED_KEPT = 10_000;

export type SpendResult = { ok: true; balance: number } | { ok: false; reason: "out_of_credits" | "already_charged" };

/**
 * Per-key, per-method credit balances and the ledger of charged batches. A key's balance of a metered method is its
 * plan's credits (PLAN_CREDITS) until the balance's row is first written, by its first spend or top-up, with those
 * credits (grantPlanned): a method metered after the key was made, or after this version, needs no migration, and a
 * balance is granted once, whenever the row is written and by whichever instance.
 */
export class Credits {
  private readonly metered: ReadonlySet<string>;
  /**
   * Balances this process wrote (or found written) outside any transaction: committed rows, which are never granted
   * again, so asking again would be a statement that does nothing. Bounded: past GRANTED_KEPT it starts over.
   */
  private readonly granted = new Set<string>();

  /** `metered`: the balances a plan grants (methods/metering.ts: the methods that declare it, and the endpoints). */
  constructor(
    private readonly db: Db,
    metered: readonly string[],
  ) {
    this.metered = new Set(metered);
  }

  /**
   * Writes the key's balance of a metered method as its plan grants it, when the key has no row for it yet; nothing
   * otherwise. It writes what the missing row already meant, so it may run in any transaction, or none, any number of
   * times: a row once written is never granted again.
   */
  async grantPlanned(q: Queryable, keyId: string, method: string): Promise<void> {
    if (!this.metered.has(method)) return;
    const balance = `${keyId}\n${method}`;
    if (this.granted.has(balance)) return;
    await q.write(
      `INSERT INTO credit_balances (key_id, method, balance)
       SELECT id, $2, ($3::jsonb ->> plan)::int FROM api_keys WHERE id = $1
       ON CONFLICT (key_id, method) DO NOTHING`,
      [keyId, method, JSON.stringify(PLAN_CREDITS)],
    );
    // Inside a transaction the row is not written until it commits (it may roll back): only a write of its own counts.
    if (q !== this.db) return;
    if (this.granted.size >= GRANTED_KEPT) this.granted.clear();
    this.granted.add(balance);
  }

  /**
   * Spends one credit of `method` for batch `txId`, inside the caller's transaction. The conditional UPDATE makes two
   * concurrent spends of the last credit serialize on the row: exactly one succeeds. A batch is charged at most once.
   */
  async spend(tx: Queryable, keyId: string, method: string, txId: string): Promise<SpendResult> {
    await this.grantPlanned(tx, keyId, method);
    // One statement. The charge row first: a concurrent spend of the same txId waits on it and then finds it taken, so
    // the balance is only touched by the spend that charged. A refunded charge (a reopened batch) is charged again.
    const [row] = await tx.query<{ charged: number; balance: number | null }>(
      `WITH charge AS (
         INSERT INTO credit_charges (tx_id, key_id, method) VALUES ($1, $2, $3)
         ON CONFLICT (tx_id) DO UPDATE SET refunded_at = NULL, charged_at = now() WHERE credit_charges.refunded_at IS NOT NULL
         RETURNING tx_id
       ), debit AS (
         UPDATE credit_balances SET balance = balance - 1
         WHERE key_id = $2 AND method = $3 AND balance > 0 AND EXISTS (SELECT 1 FROM charge)
         RETURNING balance
       )
       SELECT (SELECT count(*) FROM charge)::int AS charged, (SELECT balance FROM debit) AS balance`,
      [txId, keyId, method],
    );
    if (!row.charged) return { ok: false, reason: "already_charged" };
    if (row.balance === null) {
      await tx.query("DELETE FROM credit_charges WHERE tx_id = $1", [txId]);
      return { ok: false, reason: "out_of_credits" };
    }
    return { ok: true, balance: Number(row.balance) };
  }

  /** Gives back the credit of a batch that never reached the chain. Idempotent. */
  async refund(tx: Queryable, txId: string): Promise<boolean> {
    const rows = await tx.query<{ key_id: string; method: string }>(
      "UPDATE credit_charges SET refunded_at = now() WHERE tx_id = $1 AND refunded_at IS NULL RETURNING key_id, method",
      [txId],
    );
    if (!rows.length) return false;
    await tx.query("UPDATE credit_balances SET balance = balance + 1 WHERE key_id = $1 AND method = $2", [
      rows[0].key_id,
      rows[0].method,
    ]);
    return true;
  }

  /** Operator top-up, on top of what the plan grants; creates the balance row when the method had none. */
  async add(keyId: string, method: string, amount: number): Promise<number> {
    await this.grantPlanned(this.db, keyId, method);
    const rows = await this.db.query<{ balance: number }>(
      `INSERT INTO credit_balances (key_id, method, balance) VALUES ($1, $2, $3)
       ON CONFLICT (key_id, method) DO UPDATE SET balance = credit_balances.balance + EXCLUDED.balance
       RETURNING balance`,
      [keyId, method, amount],
    );
    return rows[0].balance;
  }

  /** Every balance of the key: its rows, and its plan's credits of each metered method it has no row for yet. */
  async balances(keyId: string): Promise<Record<string, number>> {
    const rows = await this.db.query<{ method: string; balance: number }>(
      `SELECT method, balance FROM credit_balances WHERE key_id = $1
       UNION ALL
       SELECT m.method, ($3::jsonb ->> k.plan)::int FROM api_keys k CROSS JOIN unnest($2::text[]) AS m (method)
       WHERE k.id = $1 AND NOT EXISTS (SELECT 1 FROM credit_balances b WHERE b.key_id = k.id AND b.method = m.method)
       ORDER BY method`,
      [keyId, [...this.metered], JSON.stringify(PLAN_CREDITS)],
    );
    return Object.fromEntries(rows.map((r) => [r.method, r.balance]));
  }
}
