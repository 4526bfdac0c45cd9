import type { Sealer } from "../crypto/sealed";
import { iso, isoOrNull } from "./columns";
import type { Db, Queryable } from "./db";
import { emitEvents, type NewEvent } from "./outbox";
import { paymentEvent, type PaymentEventRow, type PaymentRefundView } from "./payment-events";

export type RefundStatus = PaymentRefundView["status"];
export const REFUND_STATUSES: readonly RefundStatus[] = ["owed", "sending", "refunded"];

/** Who sent a refund the service sent itself (an operator's refund names the operator's e-mail). */
export const REFUND_WALLET = "refund wallet";

/** A payment owed back to its payer (migration 076 describes the states). */
export interface RefundRecord {
  paymentId: string;
  txId: string;
  network: string;
  chainId: number;
  asset: string;
  payer: string;
  amount: string;
  reason: string;
  status: RefundStatus;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  /** The refund's current transaction (the mined one once refunded), and the earlier forms it replaced. */
  txHash: string | null;
  txReplaced: string[];
  /** The signed bytes, opened, while sending (to send them again); null otherwise. */
  txRaw: string | null;
  txFrom: string | null;
  txNonce: number | null;
  blockNumber: number | null;
  refundedBy: string | null;
  createdAt: string;
  refundedAt: string | null;
}

/** The signed refund transaction a claim stores before it is broadcast. */
export interface SignedRefund {
  raw: string;
  hash: string;
  from: string;
  nonce: number;
}

const sealPurpose = (paymentId: string) => `payment-refund:${paymentId}`;

/** The payment columns of a refund's events (as PAYMENT_EVENT_COLUMNS, from the join below). */
const EVENT_COLUMNS = `p.subject, p.tx_id, p.network, p.amount, p.payer, p.status, p.settle_tx_hash, p.settlement,
  p.release_reason, (SELECT b.api_key_id FROM batches b WHERE b.tx_id = p.tx_id) AS api_key_id`;

/**
 * The refunds as the payment core writes them (payments/refunds.ts): owed with the batch's end, then refunded.
 * PaymentRefunds below is the database's; an in-memory one (test/fakes/) passes the same contract tests.
 */
export interface RefundStore {
  recordOwedWithin(q: Queryable, txId: string, reason: string): Promise<number>;
  get(paymentId: string): Promise<RefundRecord | undefined>;
  forBatch(txId: string): Promise<RefundRecord[]>;
  sending(network: string): Promise<RefundRecord[]>;
  postpone(paymentId: string, problem: string, retryInMs: number): Promise<void>;
  markPaidBy(paymentId: string, operator: string, hash: string, blockNumber: number): Promise<RefundRecord | undefined>;
}

/**
 * Payments owed back to their payers after a failure of the service's, and their refunds: recorded with the batch's
 * end, claimed and signed by one instance, sent, and marked refunded once their transaction is confirmed (or an
 * operator's is). Each change of state writes its event (payment.refund_owed, payment.refunded) in its transaction.
 */
export class PaymentRefunds implements RefundStore {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  private record = (r: any): RefundRecord => ({
    paymentId: r.payment_id,
    txId: r.tx_id,
    network: r.network,
    chainId: Number(String(r.network).split(":")[1]),
    asset: r.asset,
    payer: r.payer,
    amount: String(r.amount),
    reason: r.reason,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: iso(r.next_attempt_at),
    lastError: r.last_error,
    txHash: r.tx_hash,
    txReplaced: ((typeof r.tx_replaced === "string" ? JSON.parse(r.tx_replaced) : r.tx_replaced) ?? []) as string[],
    txRaw: r.tx_raw_sealed ? this.sealer.open(r.tx_raw_sealed, sealPurpose(r.payment_id)) : null,
    txFrom: r.tx_from,
    txNonce: r.tx_nonce === null ? null : Number(r.tx_nonce),
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    refundedBy: r.refunded_by,
    createdAt: iso(r.created_at),
    refundedAt: isoOrNull(r.refunded_at),
  });

  /**
   * Inside the database transaction that ended batch `txId` rejected for a failure of the service's: every payment of
   * it that was settled (on its own: one settled inside the operation's transaction reverted with it) is owed back,
   * once (the payment is the row's key). Only while the batch stands rejected in that transaction. Answers how many.
   */
  async recordOwedWithin(q: Queryable, txId: string, reason: string): Promise<number> {
    const rows = await q.query(
      `INSERT INTO payment_refunds (payment_id, tx_id, network, asset, payer, amount, reason)
       SELECT p.id, p.tx_id, p.network, p.asset, p.payer, p.amount, $2 FROM payments p JOIN batches b ON b.tx_id = p.tx_id
       WHERE p.tx_id = $1 AND p.status = 'settled' AND NOT p.settle_in_operation AND b.status = 'rejected'
       ON CONFLICT (payment_id) DO NOTHING RETURNING *`,
      [txId, reason],
    );
    await this.emit(q, "payment.refund_owed", rows.map(this.record));
    return rows.length;
  }

  async get(paymentId: string): Promise<RefundRecord | undefined> {
    const [row] = await this.db.query("SELECT * FROM payment_refunds WHERE payment_id = $1", [paymentId]);
    return row && this.record(row);
  }

  /** The refunds of a batch's payments (none unless it failed for a reason of the service's after a payment). */
  async forBatch(txId: string): Promise<RefundRecord[]> {
    return (await this.db.query("SELECT * FROM payment_refunds WHERE tx_id = $1", [txId])).map(this.record);
  }

  /** Refunds of `paymentIds`, by payment. */
  async forPayments(paymentIds: string[]): Promise<Map<string, RefundRecord>> {
    if (!paymentIds.length) return new Map();
    const rows = await this.db.query("SELECT * FROM payment_refunds WHERE payment_id = ANY($1::uuid[])", [paymentIds]);
    return new Map(rows.map((r) => [String(r.payment_id), this.record(r)]));
  }

  /** Newest first, a page of `limit` before the cursor (created_at, payment_id), optionally in one state. */
  async page(options: {
    limit: number;
    status?: RefundStatus;
    before?: { createdAt: string; paymentId: string };
  }): Promise<RefundRecord[]> {
    const rows = await this.db.query(
      `SELECT * FROM payment_refunds WHERE ($2::text IS NULL OR status = $2)
         AND ($3::timestamptz IS NULL OR (created_at, payment_id) < ($3::timestamptz, $4::uuid))
       ORDER BY created_at DESC, payment_id DESC LIMIT $1`,
      [options.limit, options.status ?? null, options.before?.createdAt ?? null, options.before?.paymentId ?? null],
    );
    return rows.map(this.record);
  }

  /** How many refunds are in each state, and the amount still owed (not refunded) per asset (metrics, console). */
  async totals(): Promise<{ counts: Record<RefundStatus, number>; owed: { asset: string; amount: string }[] }> {
    const [counts, owed] = await Promise.all([
      this.db.query<{ status: RefundStatus; n: string }>(
        "SELECT status, count(*)::text AS n FROM payment_refunds GROUP BY status",
      ),
      this.db.query<{ asset: string; amount: string }>(
        "SELECT asset, sum(amount)::text AS amount FROM payment_refunds WHERE status <> 'refunded' GROUP BY asset",
      ),
    ]);
    const byStatus = { owed: 0, sending: 0, refunded: 0 };
    for (const row of counts) byStatus[row.status] = Number(row.n);
    return { counts: byStatus, owed };
  }

  /**
   * Claims the oldest refund owed on `network` that is due, and stores the transaction `sign` makes for it (sealed),
   * all in one database transaction that holds the row (FOR UPDATE SKIP LOCKED: another instance takes another, or
   * none) and in which `sign` takes the wallet's nonce: the refund is signed once, and stored before any broadcast.
   * Undefined when none is due.
   */
  async claimAndStore(
    network: string,
    sign: (q: Queryable, refund: RefundRecord) => Promise<SignedRefund>,
  ): Promise<RefundRecord | undefined> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<{ payment_id: string }>(
        `SELECT * FROM payment_refunds WHERE status = 'owed' AND network = $1 AND next_attempt_at <= now()
         ORDER BY created_at, payment_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [network],
      );
      if (!row) return undefined;
      const signed = await sign(q, this.record(row));
      const [stored] = await q.query(
        `UPDATE payment_refunds SET status = 'sending', tx_hash = $2, tx_raw_sealed = $3, tx_from = $4, tx_nonce = $5,
           tx_replaced = '[]'::jsonb, attempts = attempts + 1, refunded_by = $6, updated_at = now()
         WHERE payment_id = $1 RETURNING *`,
        [
          row.payment_id,
          signed.hash.toLowerCase(),
          this.sealer.seal(signed.raw, sealPurpose(row.payment_id)),
          signed.from.toLowerCase(),
          signed.nonce,
          REFUND_WALLET,
        ],
      );
      return this.record(stored);
    });
  }

  /** Refunds whose transaction is sent and not yet confirmed, on `network`, oldest first. */
  async sending(network: string): Promise<RefundRecord[]> {
    return (
      await this.db.query(
        "SELECT * FROM payment_refunds WHERE status = 'sending' AND network = $1 ORDER BY tx_nonce, created_at",
        [network],
      )
    ).map(this.record);
  }

  /** A refund's transaction replaced with higher fees (same nonce): the current hash is kept among the replaced. */
  async replaceTx(paymentId: string, current: string, raw: string, hash: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payment_refunds SET tx_replaced = tx_replaced || jsonb_build_array(tx_hash), tx_hash = $3, tx_raw_sealed = $4,
         updated_at = now()
       WHERE payment_id = $1 AND status = 'sending' AND tx_hash = $2 RETURNING payment_id`,
      [paymentId, current.toLowerCase(), hash.toLowerCase(), this.sealer.seal(raw, sealPurpose(paymentId))],
    );
    return rows.length > 0;
  }

  /** A sending refund's last problem (a refused broadcast: the wallet without gas), kept while it is sent again. */
  async noteProblem(paymentId: string, problem: string): Promise<void> {
    await this.db.query(
      "UPDATE payment_refunds SET last_error = $2, updated_at = now() WHERE payment_id = $1 AND status <> 'refunded'",
      [paymentId, problem],
    );
  }

  /** An owed refund that could not be sent now (its transfer would fail: the wallet lacks the asset): tried later. */
  async postpone(paymentId: string, problem: string, retryInMs: number): Promise<void> {
    await this.db.query(
      `UPDATE payment_refunds SET last_error = $2, next_attempt_at = now() + make_interval(secs => $3::float8 / 1000),
         attempts = attempts + 1, updated_at = now()
       WHERE payment_id = $1 AND status = 'owed'`,
      [paymentId, problem, retryInMs],
    );
  }

  /**
   * A sending refund whose transaction can never transfer (it reverted when mined, or its nonce went to another
   * transaction of the wallet): owed again, tried after `retryInMs`, without its transaction.
   */
  async owedAgain(paymentId: string, hash: string, problem: string, retryInMs: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payment_refunds SET status = 'owed', tx_hash = NULL, tx_raw_sealed = NULL, tx_from = NULL, tx_nonce = NULL,
         tx_replaced = '[]'::jsonb, refunded_by = NULL, last_error = $3,
         next_attempt_at = now() + make_interval(secs => $4::float8 / 1000), updated_at = now()
       WHERE payment_id = $1 AND status = 'sending' AND tx_hash = $2 RETURNING payment_id`,
      [paymentId, hash.toLowerCase(), problem, retryInMs],
    );
    return rows.length > 0;
  }

  /**
   * Refunded by the refund wallet: `mined` (the current hash or one it replaced) is confirmed with the transfer.
   * Once only (from sending); writes payment.refunded. Answers the refund as it stands then, or undefined.
   */
  async markRefunded(paymentId: string, mined: string, blockNumber: number): Promise<RefundRecord | undefined> {
    return this.end(
      `UPDATE payment_refunds SET status = 'refunded', tx_hash = $2, tx_raw_sealed = NULL, block_number = $3,
         last_error = NULL, refunded_at = now(), updated_at = now()
       WHERE payment_id = $1 AND status = 'sending' AND (tx_hash = $2 OR tx_replaced @> jsonb_build_array($2::text))
       RETURNING *`,
      [paymentId, mined.toLowerCase(), blockNumber],
    );
  }

  /**
   * Refunded by an operator: their transaction `hash` (confirmed, with the transfer to the payer: the caller checked)
   * paid an owed refund. Once only (from owed); writes payment.refunded. Undefined when it was not owed.
   */
  async markPaidBy(
    paymentId: string,
    operator: string,
    hash: string,
    blockNumber: number,
  ): Promise<RefundRecord | undefined> {
    return this.end(
      `UPDATE payment_refunds SET status = 'refunded', tx_hash = $2, block_number = $3, refunded_by = $4, last_error = NULL,
         refunded_at = now(), updated_at = now()
       WHERE payment_id = $1 AND status = 'owed' RETURNING *`,
      [paymentId, hash.toLowerCase(), blockNumber, operator],
    );
  }

  private async end(sql: string, params: unknown[]): Promise<RefundRecord | undefined> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query(sql, params);
      if (!row) return undefined;
      const refunded = this.record(row);
      await this.emit(q, "payment.refunded", [refunded]);
      return refunded;
    });
  }

  /** payment.refund_owed / payment.refunded of `refunds`, each with its payment as the status shows it. */
  private async emit(
    q: Queryable,
    type: "payment.refund_owed" | "payment.refunded",
    refunds: RefundRecord[],
  ): Promise<void> {
    if (!refunds.length) return;
    const payments = await q.query<PaymentEventRow & { id: string }>(
      `SELECT p.id, ${EVENT_COLUMNS} FROM payments p WHERE p.id = ANY($1::uuid[])`,
      [refunds.map((r) => r.paymentId)],
    );
    const events = refunds
      .map((r) => {
        const payment = payments.find((p) => p.id === r.paymentId);
        return payment && paymentEvent(type, payment, refundView(r));
      })
      .filter((e): e is NewEvent => e !== undefined);
    await emitEvents(q, events);
  }
}

/** A refund as its payer reads it. */
export function refundView(r: RefundRecord): PaymentRefundView {
  return {
    status: r.status,
    amount: r.amount,
    reason: r.reason,
    transaction: r.txHash,
    refundedAt: r.refundedAt,
  };
}
