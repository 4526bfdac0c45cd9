import { randomUUID } from "node:crypto";
import type { Sealer } from "../crypto/sealed";
import { emitEvent, eventRows, insertEventsSql } from "./outbox";
import { PAYMENT_EVENT_COLUMNS, paymentEvent, type PaymentEventRow } from "./payment-events";
import {
  fieldsOf,
  payloadPurpose,
  RESERVED_COLUMNS,
  reservedAsRead,
  reservedRow,
  settlementPurpose,
  toRecord,
  type PaymentRecord,
} from "./payment-records";
import type { Db, Queryable } from "./db";
import type { NewPayment, PaymentStore, Settlement } from "./payment-store";

export type { PaymentRecord, PaymentStatus } from "./payment-records";
export type { NewPayment, PaymentStore, Settlement } from "./payment-store";

export class PaymentConflict extends Error {
  constructor(readonly reason: "authorization_used" | "subject_paid") {
    super(reason);
  }
}

/** The payer's balance does not cover a payment with the payer's other open payments (`open`, base units). */
export class PaymentShortfall extends Error {
  constructor(
    readonly open: bigint,
    readonly balance: bigint | undefined,
  ) {
    super("the payer's balance does not cover its open payments");
  }
}

/** The payer's lock (per schema, payer and asset), held until the reserving transaction ends. `$1`: "<payer>:<asset>". */
const PAYER_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('tak:payer'), hashtext(current_schema() || ':' || $1))";
/** The payer's open payments of an asset (the parameters that name them): reserved or settling, summed. */
const openSumSql = (payer: string, asset: string) =>
  `SELECT COALESCE(sum(amount), 0) AS total FROM payments WHERE payer = ${payer} AND asset = ${asset} AND status IN ('reserved', 'settling')`;

/**
 * What a payment that ended (settled or released) stops holding: the payer's signed authorization and the signed
 * settlement transaction. Every statement that ends a payment sets these; the table's CHECK (migration 008) refuses
 * an ended payment that still holds either.
 */
export const ENDED_CLEARS =
  "payload = NULL, payload_sealed = NULL, settle_tx_raw = NULL, " +
  "settle_tx_replaced = (SELECT COALESCE(jsonb_agg(jsonb_build_object('hash', e->>'hash')), '[]'::jsonb) FROM jsonb_array_elements(payments.settle_tx_replaced) e)";

/** The UPDATE that settles payment $1 with settlement $2, if it was reserved or settling, answering `returning`. */
const settleStatement = (returning: string) =>
  `UPDATE payments SET status = 'settled', settlement = $2, ${ENDED_CLEARS}, updated_at = now() WHERE id = $1 AND status IN ('reserved', 'settling') RETURNING ${returning}`;

/** settleStatement with the payment.settled event, written only when this statement is the one that settles. */
const settleWithEventSql = (returning: string) =>
  `WITH settled AS (${settleStatement(returning)}), events AS (
     ${insertEventsSql("$3", "EXISTS (SELECT 1 FROM settled)")}
   )
   SELECT * FROM settled`;

/**
 * Its parameters for a payment as just read: the event is built from what is known (what the event shows of a
 * payment never changes once it is reserved, but its status).
 */
function settleWithEventParams(payment: PaymentRecord, settlement: Settlement, apiKeyId: string | null): unknown[] {
  const event = paymentEvent("payment.settled", {
    subject: payment.subject,
    tx_id: payment.txId,
    network: payment.network,
    amount: payment.amount,
    payer: payment.payer,
    status: "settled",
    settle_tx_hash: payment.settleTxHash,
    settlement,
    release_reason: null,
    api_key_id: apiKeyId,
  });
  return [payment.id, JSON.stringify(settlement), event ? eventRows([event]) : null];
}

/** x402 payments and their state machine (reserved → settling → settled, or released). */
export class Payments implements PaymentStore {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  private record = (row: any): PaymentRecord => toRecord(row, this.sealer);

  /**
   * Records a verified payment as reserved; refuses a reused authorization or a second open payment for one subject
   * (PaymentConflict), and a payment the payer's balance does not cover together with the payer's other payments of
   * the asset that are not settled yet (PaymentShortfall). `balance`: the payer's balance of the asset, when read;
   * without it the verification's own check stands for it (the balance covers this payment alone), so the payment is
   * taken only if the payer has no other open payment. The sum and the insert run under the payer's lock (per
   * schema, payer and asset): of concurrent authorizations against one balance, only those it covers are taken.
   */
  async reserve(p: NewPayment, balance?: bigint): Promise<PaymentRecord> {
    const id = randomUUID();
    const [payer, asset] = [p.payer.toLowerCase(), p.asset.toLowerCase()];
    const cover = balance ?? BigInt(p.amount);
    try {
      return await this.db.transaction(async (q) => {
        // On the embedded database one connection runs every transaction after the other: nothing interleaves.
        if (this.db.kind === "postgres") await q.write(PAYER_LOCK_SQL, [`${payer}:${asset}`]);
        // One trip with the lock and the COMMIT: whether the row was taken, or (nothing taken) the open sum that
        // refused it. The row taken is what these values wrote (reservedRow): built here, not read back.
        const written = reservedRow(id, p, this.sealer.seal(JSON.stringify(p.payload), payloadPurpose(id)));
        const [row] = await q.finalQuery<{ taken: boolean; open_total: string }>(
          `WITH open AS (${openSumSql("$9", "$6")}), taken AS (
             INSERT INTO payments (${RESERVED_COLUMNS.join(", ")}, status)
             SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,'reserved' FROM open WHERE open.total + $8::numeric <= $14::numeric RETURNING id
           )
           SELECT taken.id IS NOT NULL AS taken, open.total::text AS open_total FROM open LEFT JOIN taken ON true`,
          [...RESERVED_COLUMNS.map((column) => written[column]), cover.toString()],
        );
        if (!row.taken) throw new PaymentShortfall(BigInt(row.open_total), balance);
        return this.record(reservedAsRead(written));
      });
    } catch (error) {
      const e = error as { code?: string; constraint?: string; message?: string };
      if (e.code === "23505" || /unique|duplicate/i.test(e.message ?? "")) {
        throw new PaymentConflict(
          /subject/.test(e.constraint ?? e.message ?? "") ? "subject_paid" : "authorization_used",
        );
      }
      throw error;
    }
  }

  /** What `payer` owes in `asset` on payments not settled yet (reserved or settling), in base units. */
  async openAmount(payer: string, asset: string, q: Queryable = this.db): Promise<bigint> {
    const [row] = await q.query<{ total: string }>(
      `SELECT total::text AS total FROM (${openSumSql("$1", "$2")}) open`,
      [payer.toLowerCase(), asset.toLowerCase()],
    );
    return BigInt(row?.total ?? "0");
  }

  async get(id: string, q: Queryable = this.db): Promise<PaymentRecord | undefined> {
    const [row] = await q.query("SELECT * FROM payments WHERE id = $1", [id]);
    return row && this.record(row);
  }

  /** The payment of a subject: the open or settled one, else the latest released one. */
  async bySubject(subject: string): Promise<PaymentRecord | undefined> {
    // Each part by its own partial index (payments_open_subject, payments_released_subject_idx).
    const [row] = await this.db.query(
      `SELECT * FROM (
         (SELECT * FROM payments WHERE subject = $1 AND status <> 'released')
         UNION ALL
         (SELECT * FROM payments WHERE subject = $1 AND status = 'released' ORDER BY created_at DESC LIMIT 1)
       ) p ORDER BY (status <> 'released') DESC LIMIT 1`,
      [subject],
    );
    return row && this.record(row);
  }

  async forBatch(txId: string, q: Queryable = this.db): Promise<PaymentRecord[]> {
    return (await q.query("SELECT * FROM payments WHERE tx_id = $1 ORDER BY created_at", [txId])).map(this.record);
  }

  /** Payments not ended (reserved or settling), oldest first; `quietForMs`: only those unchanged for that long. */
  async unfinished(quietForMs = 0): Promise<PaymentRecord[]> {
    return (
      await this.db.query(
        "SELECT * FROM payments WHERE status IN ('reserved', 'settling') AND updated_at <= now() - make_interval(secs => $1::float8 / 1000) ORDER BY created_at",
        [quietForMs],
      )
    ).map(this.record);
  }

  /**
   * Claims a payment for settlement (reserved → settling), so one settler at a time, across instances, sends it. A
   * claim without a stored transaction that is old was left by a crash before anything was sent: it may be retaken.
   */
  async claimForSettlement(id: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE payments SET status = 'settling', updated_at = now()
       WHERE id = $1 AND NOT settle_in_operation
         AND (status = 'reserved' OR (status = 'settling' AND settle_tx_hash IS NULL AND updated_at < now() - interval '2 minutes'))
       RETURNING id`,
      [id],
    );
    return rows.length > 0;
  }

  /**
   * Binds a reserved payment to the relayed transaction that settles it with its operation, inside the database
   * transaction that stores that transaction's signed bytes: both or neither. The row is locked here and written once,
   * with the hash (setOperationHash: reserved → settling, settled in operation); no other settler can take it between.
   * False when the payment is no longer reserved (another settler has it): the operation is then signed without it.
   */
  async bindToOperation(q: Queryable, id: string): Promise<boolean> {
    const rows = await q.query("SELECT id FROM payments WHERE id = $1 AND status = 'reserved' FOR UPDATE", [id]);
    return rows.length > 0;
  }

  /**
   * A payment bound to its operation's transaction is still so (settling with it): a transaction signed again with a
   * fresh nonce carries it as the first did. Inside the database transaction that stores the new bytes, which locks
   * the row until setOperationHash writes it.
   */
  async stillBoundToOperation(q: Queryable, id: string): Promise<boolean> {
    const rows = await q.query(
      "SELECT id FROM payments WHERE id = $1 AND status = 'settling' AND settle_in_operation FOR UPDATE",
      [id],
    );
    return rows.length > 0;
  }

  /**
   * The hash of the relayed transaction a payment locked by bindToOperation or stillBoundToOperation is settled in
   * (same database transaction): the payment is settling with that transaction from its commit on.
   */
  async setOperationHash(q: Queryable, id: string, hash: string): Promise<void> {
    await q.write(
      `UPDATE payments SET status = 'settling', settle_in_operation = true, settle_tx_hash = $2, updated_at = now()
       WHERE id = $1 AND (status = 'reserved' OR (status = 'settling' AND settle_in_operation))`,
      [id, hash.toLowerCase()],
    );
  }

  /** The settlement transaction (sealed), persisted before it is broadcast (write-ahead), with its sender and nonce. */
  async markSettling(
    q: Queryable,
    id: string,
    raw: string,
    hash: string,
    sender?: { from: string; nonce: number },
  ): Promise<void> {
    await q.write(
      "UPDATE payments SET status = 'settling', settle_tx_raw = $2, settle_tx_hash = $3, settle_tx_from = $4, settle_tx_nonce = $5, updated_at = now() WHERE id = $1",
      [
        id,
        this.sealer.seal(raw, settlementPurpose(id)),
        hash.toLowerCase(),
        sender?.from.toLowerCase() ?? null,
        sender?.nonce ?? null,
      ],
    );
  }

  /**
   * The payments a settlement transaction of their own carries: every payment whose current settlement is `hash` (one,
   * or the several a batched settlement pays), oldest first.
   */
  async carriedBy(hash: string): Promise<PaymentRecord[]> {
    return (
      await this.db.query(
        "SELECT * FROM payments WHERE settle_tx_hash = $1 AND NOT settle_in_operation ORDER BY created_at",
        [hash.toLowerCase()],
      )
    ).map(this.record);
  }

  /**
   * Replaces a settlement transaction (not mined) with one of the same nonce and higher fees, on every payment still
   * settling with it (a batched settlement is shared); the current one is kept among the replaced, and the new bytes
   * are sealed for each payment. False when no payment is settling with `replacing` any more (someone else replaced it
   * first, or it ended).
   */
  async replaceSettlement(replacing: string, raw: string, hash: string): Promise<boolean> {
    return this.db.transaction(async (q) => {
      const ids = await q.query<{ id: string }>(
        "SELECT id FROM payments WHERE settle_tx_hash = $1 AND NOT settle_in_operation AND status = 'settling' ORDER BY id FOR UPDATE",
        [replacing.toLowerCase()],
      );
      for (const { id } of ids) {
        await q.write(
          `UPDATE payments SET settle_tx_replaced = settle_tx_replaced || jsonb_build_array(jsonb_build_object('hash', settle_tx_hash, 'raw', settle_tx_raw)),
             settle_tx_raw = $3, settle_tx_hash = $4, updated_at = now()
           WHERE id = $1 AND settle_tx_hash = $2`,
          [id, replacing.toLowerCase(), this.sealer.seal(raw, settlementPurpose(id)), hash.toLowerCase()],
        );
      }
      return ids.length > 0;
    });
  }

  /**
   * An earlier settlement transaction (`winner`) was mined instead of the current one (`current`): it becomes the
   * settlement's transaction of every payment that names `current` and kept `winner` among its replaced.
   */
  async promoteSettlement(current: string, winner: string): Promise<void> {
    // Every expression on the right reads the row as it was before this UPDATE.
    await this.db.query(
      `UPDATE payments SET settle_tx_hash = $2::text,
         settle_tx_raw = (SELECT e->>'raw' FROM jsonb_array_elements(settle_tx_replaced) e WHERE e->>'hash' = $2::text LIMIT 1),
         settle_tx_replaced = (SELECT COALESCE(jsonb_agg(e), '[]'::jsonb) FROM jsonb_array_elements(settle_tx_replaced) e WHERE e->>'hash' <> $2::text)
           || jsonb_build_array(jsonb_build_object('hash', settle_tx_hash, 'raw', settle_tx_raw))
       WHERE settle_tx_hash = $1 AND NOT settle_in_operation AND settle_tx_replaced @> jsonb_build_array(jsonb_build_object('hash', $2::text))`,
      [current.toLowerCase(), winner.toLowerCase()],
    );
  }

  /**
   * A settlement transaction the node refused never happened, or one mined without settling this payment (its call
   * failed alone while the authorization can still be used): back to reserved, without its transactions, to be settled again.
   */
  async unmarkSettling(id: string): Promise<void> {
    await this.db.query(
      "UPDATE payments SET status = 'reserved', settle_tx_raw = NULL, settle_tx_hash = NULL, settle_tx_from = NULL, settle_tx_nonce = NULL, settle_tx_replaced = '[]'::jsonb, updated_at = now() WHERE id = $1 AND status = 'settling' AND NOT settle_in_operation",
      [id],
    );
  }

  /** A settlement claimed but never sent (a passing failure before its transaction was stored): back to reserved, to be tried again. */
  async unclaim(id: string): Promise<void> {
    await this.db.query(
      "UPDATE payments SET status = 'reserved', updated_at = now() WHERE id = $1 AND status = 'settling' AND settle_tx_hash IS NULL AND NOT settle_in_operation",
      [id],
    );
  }

  /** A settled payment a reorg deeper than its confirmations took off the chain: settling again until it is back. */
  async unsettle(id: string): Promise<void> {
    await this.db.query(
      "UPDATE payments SET status = 'settling', updated_at = now() WHERE id = $1 AND status = 'settled'",
      [id],
    );
  }

  /**
   * Settled: the authorization is used and its transaction mined, so neither is kept (ENDED_CLEARS). Answers the
   * payment as it stands then; undefined when it was not reserved or settling (nothing changed). With the
   * payment as just read (`known`, and its batch's key), one statement does it all: its payment.settled event is built
   * from what is known (what the event shows of a payment never changes once it is reserved, but its status, and the
   * event is written only if this statement is the one that settles it).
   */
  async markSettled(
    id: string,
    settlement: Settlement,
    known?: { payment: PaymentRecord; apiKeyId: string | null },
  ): Promise<PaymentRecord | undefined> {
    if (known?.payment.id === id) {
      const [row] = await this.db.query(
        settleWithEventSql("*"),
        settleWithEventParams(known.payment, settlement, known.apiKeyId),
      );
      return row && this.record(row);
    }
    return this.db.transaction(async (q) => {
      const [row] = await q.query<PaymentEventRow>(settleStatement(`*, ${PAYMENT_EVENT_COLUMNS}`), [
        id,
        JSON.stringify(settlement),
      ]);
      const event = row && paymentEvent("payment.settled", row);
      if (event) await emitEvent(q, event);
      return row && this.record(row);
    });
  }

  /**
   * markSettled inside the caller's transaction `q`, for a payment just read in it: the statement's rows are not read
   * back (on the embedded database it travels with the transaction's next statement or its COMMIT). Answers the
   * payment as it stands once that transaction commits; if another process settled it first, nothing is written.
   */
  async settleWithin(
    q: Queryable,
    payment: PaymentRecord,
    settlement: Settlement,
    apiKeyId: string | null,
  ): Promise<PaymentRecord> {
    await q.write(settleWithEventSql("id"), settleWithEventParams(payment, settlement, apiKeyId));
    return {
      ...fieldsOf(payment),
      payload: null,
      status: "settled",
      settleTxRaw: null,
      settleTxReplaced: payment.settleTxReplaced.map((e) => ({ hash: e.hash, raw: null as unknown as string })),
      settlement,
      releaseReason: null,
    };
  }

  /**
   * Releases a payment nothing was charged for: reserved, or claimed for settlement before any transaction was stored.
   * `settlementFailed`: the caller holds the claim and its settlement failed or reverted, so it releases in any case.
   */
  async markReleased(id: string, reason: string, settlementFailed = false): Promise<boolean> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<PaymentEventRow>(
        // A payment released with its operation's transaction names no settlement transaction: that one settled nothing.
        `UPDATE payments SET status = 'released', release_reason = $2, ${ENDED_CLEARS}, updated_at = now(),
           settle_tx_hash = CASE WHEN settle_in_operation THEN NULL ELSE settle_tx_hash END
         WHERE id = $1 AND (status = 'reserved' OR (status = 'settling' AND (settle_tx_hash IS NULL OR $3))) RETURNING ${PAYMENT_EVENT_COLUMNS}`,
        [id, reason, settlementFailed],
      );
      const event = row && paymentEvent("payment.released", row);
      if (event) await emitEvent(q, event);
      return row !== undefined;
    });
  }

  /** Releases a batch's reserved payments inside the caller's transaction `q` (which holds their rows), with events. */
  async releaseReservedWithin(q: Queryable, txId: string, reason: string): Promise<void> {
    const rows = await q.query<PaymentEventRow>(
      `UPDATE payments SET status = 'released', release_reason = $2, ${ENDED_CLEARS}, updated_at = now()
       WHERE tx_id = $1 AND status = 'reserved' RETURNING ${PAYMENT_EVENT_COLUMNS}`,
      [txId, reason],
    );
    for (const row of rows) {
      const event = paymentEvent("payment.released", row);
      if (event) await emitEvent(q, event);
    }
  }

  /**
   * Seals what rows written before sealing existed hold in clear (the payload of a payment still reserved or settling,
   * its settlement transaction); migration 008 already cleared ended payments. Run at start; returns how many rows.
   */
  async sealClearSecrets(): Promise<number> {
    const rows = await this.db.query<{ id: string; payload: unknown; settle_tx_raw: string | null }>(
      "SELECT id, payload, settle_tx_raw FROM payments WHERE payload IS NOT NULL OR settle_tx_raw LIKE '0x%'",
    );
    for (const r of rows) {
      const payload = r.payload === null ? null : typeof r.payload === "string" ? r.payload : JSON.stringify(r.payload);
      await this.db.query(
        `UPDATE payments SET payload = NULL, payload_sealed = COALESCE($2, payload_sealed), settle_tx_raw = COALESCE($3, settle_tx_raw) WHERE id = $1`,
        [
          r.id,
          payload === null ? null : this.sealer.seal(payload, payloadPurpose(r.id)),
          r.settle_tx_raw?.startsWith("0x") ? this.sealer.seal(r.settle_tx_raw, settlementPurpose(r.id)) : null,
        ],
      );
    }
    return rows.length;
  }

  async attachBatch(id: string, txId: string): Promise<void> {
    await this.db.query("UPDATE payments SET tx_id = $2 WHERE id = $1", [id, txId]);
  }
}
