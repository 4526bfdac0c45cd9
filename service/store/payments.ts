import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "./db";

export type PaymentStatus = "reserved" | "settling" | "settled" | "released";

export interface PaymentRecord {
  id: string;
  subject: string;
  route: string;
  txId: string | null;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
  payer: string;
  authorizationNonce: string;
  validBefore: number;
  payload: any;
  requirements: any;
  status: PaymentStatus;
  settleTxRaw: string | null;
  settleTxHash: string | null;
  /** Earlier settlement transactions replaced by the current one (same nonce, higher fees): any of them may be mined. */
  settleTxReplaced: { hash: string; raw: string }[];
  settlement: any;
  releaseReason: string | null;
}

const toRecord = (r: any): PaymentRecord => ({
  id: r.id,
  subject: r.subject,
  route: r.route,
  txId: r.tx_id,
  network: r.network,
  asset: r.asset,
  payTo: r.pay_to,
  amount: r.amount,
  payer: r.payer,
  authorizationNonce: r.authorization_nonce,
  validBefore: Number(r.valid_before),
  payload: r.payload,
  requirements: r.requirements,
  status: r.status,
  settleTxRaw: r.settle_tx_raw,
  settleTxHash: r.settle_tx_hash,
  settleTxReplaced: (typeof r.settle_tx_replaced === "string" ? JSON.parse(r.settle_tx_replaced) : r.settle_tx_replaced) ?? [],
  settlement: r.settlement,
  releaseReason: r.release_reason,
});

export class PaymentConflict extends Error {
  constructor(readonly reason: "authorization_used" | "subject_paid") {
    super(reason);
  }
}

/** x402 payments and their state machine (reserved → settling → settled, or released). */
export class Payments {
  constructor(private readonly db: Db) {}

  /** Records a verified payment as reserved; refuses a reused authorization or a second payment for one subject. */
  async reserve(p: Omit<PaymentRecord, "id" | "status" | "settleTxRaw" | "settleTxHash" | "settleTxReplaced" | "settlement" | "releaseReason">): Promise<PaymentRecord> {
    try {
      const [row] = await this.db.query(
        `INSERT INTO payments (id, subject, route, tx_id, network, asset, pay_to, amount, payer, authorization_nonce, valid_before, payload, requirements, status)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'reserved') RETURNING *`,
        [
          randomUUID(),
          p.subject,
          p.route,
          p.txId,
          p.network,
          p.asset.toLowerCase(),
          p.payTo.toLowerCase(),
          p.amount,
          p.payer.toLowerCase(),
          p.authorizationNonce.toLowerCase(),
          p.validBefore,
          JSON.stringify(p.payload),
          JSON.stringify(p.requirements),
        ],
      );
      return toRecord(row);
    } catch (error) {
      const e = error as { code?: string; constraint?: string; message?: string };
      if (e.code === "23505" || /unique|duplicate/i.test(e.message ?? "")) {
        throw new PaymentConflict(/subject/.test(e.constraint ?? e.message ?? "") ? "subject_paid" : "authorization_used");
      }
      throw error;
    }
  }

  async get(id: string, q: Queryable = this.db): Promise<PaymentRecord | undefined> {
    const [row] = await q.query("SELECT * FROM payments WHERE id = $1", [id]);
    return row && toRecord(row);
  }

  async bySubject(subject: string): Promise<PaymentRecord | undefined> {
    const [row] = await this.db.query("SELECT * FROM payments WHERE subject = $1", [subject]);
    return row && toRecord(row);
  }

  async forBatch(txId: string): Promise<PaymentRecord[]> {
    return (await this.db.query("SELECT * FROM payments WHERE tx_id = $1 ORDER BY created_at", [txId])).map(toRecord);
  }

  async unfinished(): Promise<PaymentRecord[]> {
    return (await this.db.query("SELECT * FROM payments WHERE status IN ('reserved', 'settling') ORDER BY created_at")).map(toRecord);
  }

  /**
   * Claims a payment for settlement (reserved → settling), so one settler at a time, across instances, sends it. A
   * claim without a stored transaction that is old was left by a crash before anything was sent: it may be retaken.
   */
  async claimForSettlement(id: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payments SET status = 'settling', updated_at = now()
       WHERE id = $1 AND (status = 'reserved' OR (status = 'settling' AND settle_tx_hash IS NULL AND updated_at < now() - interval '2 minutes'))
       RETURNING id`,
      [id],
    );
    return rows.length > 0;
  }

  /** The settlement transaction, persisted before it is broadcast (write-ahead), with its sender and nonce. */
  async markSettling(q: Queryable, id: string, raw: string, hash: string, sender?: { from: string; nonce: number }): Promise<void> {
    await q.query(
      "UPDATE payments SET status = 'settling', settle_tx_raw = $2, settle_tx_hash = $3, settle_tx_from = $4, settle_tx_nonce = $5, updated_at = now() WHERE id = $1",
      [id, raw, hash.toLowerCase(), sender?.from.toLowerCase() ?? null, sender?.nonce ?? null],
    );
  }

  /**
   * Replaces the settlement transaction (not mined) with one of the same nonce and higher fees; the current one is kept
   * among the replaced. False when the current hash is no longer `replacing` (someone else replaced it first).
   */
  async replaceSettlement(id: string, replacing: string, raw: string, hash: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payments SET settle_tx_replaced = settle_tx_replaced || jsonb_build_array(jsonb_build_object('hash', settle_tx_hash, 'raw', settle_tx_raw)),
         settle_tx_raw = $3, settle_tx_hash = $4, updated_at = now()
       WHERE id = $1 AND status = 'settling' AND settle_tx_hash = $2 RETURNING id`,
      [id, replacing.toLowerCase(), raw, hash.toLowerCase()],
    );
    return rows.length > 0;
  }

  /** An earlier settlement transaction was mined instead of the current one: it becomes the settlement's hash. */
  async promoteSettlement(id: string, winner: string): Promise<void> {
    await this.db.query(
      `UPDATE payments SET settle_tx_hash = w.hash, settle_tx_raw = w.raw,
         settle_tx_replaced = (SELECT COALESCE(jsonb_agg(e), '[]'::jsonb) FROM jsonb_array_elements(settle_tx_replaced) e WHERE e->>'hash' <> $2)
           || jsonb_build_array(jsonb_build_object('hash', settle_tx_hash, 'raw', settle_tx_raw))
       FROM (SELECT e->>'hash' AS hash, e->>'raw' AS raw FROM payments p, jsonb_array_elements(p.settle_tx_replaced) e WHERE p.id = $1 AND e->>'hash' = $2) w
       WHERE id = $1`,
      [id, winner.toLowerCase()],
    );
  }

  /** A settlement transaction the node refused never happened: back to reserved. */
  async unmarkSettling(id: string): Promise<void> {
    await this.db.query(
      "UPDATE payments SET status = 'reserved', settle_tx_raw = NULL, settle_tx_hash = NULL, settle_tx_from = NULL, settle_tx_nonce = NULL, updated_at = now() WHERE id = $1 AND status = 'settling'",
      [id],
    );
  }

  /** A settlement claimed but never sent (a passing failure before its transaction was stored): back to reserved, to be tried again. */
  async unclaim(id: string): Promise<void> {
    await this.db.query("UPDATE payments SET status = 'reserved', updated_at = now() WHERE id = $1 AND status = 'settling' AND settle_tx_hash IS NULL", [id]);
  }

  /** A settled payment a reorg deeper than its confirmations took off the chain: settling again until it is back. */
  async unsettle(id: string): Promise<void> {
    await this.db.query("UPDATE payments SET status = 'settling', updated_at = now() WHERE id = $1 AND status = 'settled'", [id]);
  }

  async markSettled(id: string, settlement: unknown): Promise<void> {
    await this.db.query("UPDATE payments SET status = 'settled', settlement = $2, updated_at = now() WHERE id = $1 AND status IN ('reserved', 'settling')", [
      id,
      JSON.stringify(settlement),
    ]);
  }

  /**
   * Releases a payment nothing was charged for: reserved, or claimed for settlement before any transaction was stored.
   * `settlementFailed`: the caller holds the claim and its settlement failed or reverted, so it releases in any case.
   */
  async markReleased(id: string, reason: string, settlementFailed = false): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payments SET status = 'released', release_reason = $2, updated_at = now()
       WHERE id = $1 AND (status = 'reserved' OR (status = 'settling' AND (settle_tx_hash IS NULL OR $3))) RETURNING id`,
      [id, reason, settlementFailed],
    );
    return rows.length > 0;
  }

  async attachBatch(id: string, txId: string): Promise<void> {
    await this.db.query("UPDATE payments SET tx_id = $2 WHERE id = $1", [id, txId]);
  }
}
