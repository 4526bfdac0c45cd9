import { randomUUID } from "node:crypto";
import { emitEvent } from "../events/outbox";
import { PAYMENT_EVENT_COLUMNS, paymentEvent, type PaymentEventRow } from "../events/payment-events";
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
  async reserve(p: Omit<PaymentRecord, "id" | "status" | "settleTxRaw" | "settleTxHash" | "settlement" | "releaseReason">): Promise<PaymentRecord> {
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

  /** The settlement transaction, persisted before it is broadcast (write-ahead). */
  async markSettling(q: Queryable, id: string, raw: string, hash: string): Promise<void> {
    await q.query("UPDATE payments SET status = 'settling', settle_tx_raw = $2, settle_tx_hash = $3, updated_at = now() WHERE id = $1", [id, raw, hash.toLowerCase()]);
  }

  /** A settlement transaction the node refused never happened: back to reserved. */
  async unmarkSettling(id: string): Promise<void> {
    await this.db.query(
      "UPDATE payments SET status = 'reserved', settle_tx_raw = NULL, settle_tx_hash = NULL, updated_at = now() WHERE id = $1 AND status = 'settling'",
      [id],
    );
  }

  async markSettled(id: string, settlement: unknown): Promise<void> {
    await this.db.transaction(async (q) => {
      const [row] = await q.query<PaymentEventRow>(
        `UPDATE payments SET status = 'settled', settlement = $2, updated_at = now() WHERE id = $1 AND status IN ('reserved', 'settling') RETURNING ${PAYMENT_EVENT_COLUMNS}`,
        [id, JSON.stringify(settlement)],
      );
      const event = row && paymentEvent("payment.settled", row);
      if (event) await emitEvent(q, event);
    });
  }

  /**
   * Releases a payment nothing was charged for: reserved, or claimed for settlement before any transaction was stored.
   * `settlementFailed`: the caller holds the claim and its settlement failed or reverted, so it releases in any case.
   */
  async markReleased(id: string, reason: string, settlementFailed = false): Promise<boolean> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<PaymentEventRow>(
        `UPDATE payments SET status = 'released', release_reason = $2, updated_at = now()
         WHERE id = $1 AND (status = 'reserved' OR (status = 'settling' AND (settle_tx_hash IS NULL OR $3))) RETURNING ${PAYMENT_EVENT_COLUMNS}`,
        [id, reason, settlementFailed],
      );
      const event = row && paymentEvent("payment.released", row);
      if (event) await emitEvent(q, event);
      return row !== undefined;
    });
  }

  async attachBatch(id: string, txId: string): Promise<void> {
    await this.db.query("UPDATE payments SET tx_id = $2 WHERE id = $1", [id, txId]);
  }
}
