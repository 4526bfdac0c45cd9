import type { Batch, BatchStatus, BatchTransaction } from "../model/batch";
import { TtlCache } from "../cache/ttl-cache";
import { broadcastEvent, completedEvent, endedAs, failedEvent, successEvents } from "./batch-events";
import { hashOwnersOf, returnedTransactions, sealSigned, toBatch, TX_JSON, type BatchRow } from "./batch-rows";
import {
  endedAt,
  preparedFrom,
  sentFrom,
  type LastConfirmation,
  type Moved,
  type SendingTransaction,
} from "./batch-known";
import { emitEvents, eventRows, insertEventsSql } from "./outbox";
import type { NewEvent } from "./outbox";
import type { Sealer } from "../crypto/sealed";
import type { Db, Queryable } from "./db";

/** How long, and how many, prepared batches an instance keeps in memory for their first send. */
const PREPARED_KEPT_MS = 10 * 60_000;
const PREPARED_KEPT = 5_000;

/** What a freshly stored transaction holds besides what was prepared (as a read gives it back). */
export const NEW_TX_STATE: Pick<
  BatchTransaction,
  "broadcastAt" | "blockHash" | "waiting" | "reorgedAt" | "reorgs" | "replaced"
> = { broadcastAt: null, blockHash: null, waiting: null, reorgedAt: null, reorgs: 0, replaced: [] };

/**
 * Persistence of prepared batches: the engine's write-ahead log. A batch's life is here (stored, sent, ended, reopened,
 * pruned), read and written with its transactions' rows as one; one transaction's own records (signed, broadcast,
 * confirmed, replaced, reorged) are BatchTransactions' (batch-transactions.ts).
 */
export class Batches {
  /**
   * Batches this instance prepared and nobody has tried to send yet (or a send was only quoted a price), as stored (a
   * send is usually the next request):
   * their content never changes, and the status a send relies on is checked again when it marks the batch sending.
   */
  private readonly justPrepared = new TtlCache<string, Batch>(PREPARED_KEPT_MS, PREPARED_KEPT);

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  /**
   * Stores a batch and its transactions in one statement (atomic on its own). What this instance keeps of it for the
   * send (justPrepared) is what it wrote, read back from the same JSON texts, with the time the row was stored.
   */
  async create(batch: Omit<Batch, "status" | "failedIndex" | "error" | "outcome" | "createdAt">): Promise<void> {
    const [body, plan, info] = [JSON.stringify(batch.body), JSON.stringify(batch.plan), JSON.stringify(batch.info)];
    const transactions = [...batch.transactions].sort((a, b) => a.index - b.index);
    const unsigned = JSON.stringify(transactions.map((t) => t.unsigned));
    const [row] = await this.db.query<{ created_at: Date | string }>(
      `WITH batch AS (
         INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, api_key_id, status, body, plan, info)
         VALUES ($1, $2, $3, $4, $5, $6, 'prepared', $7, $8, $9) RETURNING tx_id, created_at
       ), written AS (
         INSERT INTO batch_transactions (tx_id, index, unsigned, status)
         SELECT batch.tx_id, (t.ordinality - 1)::integer, t.value, 'prepared' FROM batch, jsonb_array_elements($10::jsonb) WITH ORDINALITY AS t
       )
       SELECT batch.created_at FROM batch`,
      [
        batch.txId,
        batch.chainId,
        batch.method,
        batch.executionMode,
        batch.signer,
        batch.apiKeyId,
        body,
        plan,
        info,
        unsigned,
      ],
    );
    if (row)
      this.justPrepared.set(
        batch.txId.toLowerCase(),
        preparedFrom(batch, { body, plan, info, unsigned }, row.created_at, this.sealer),
      );
  }

  /**
   * For a send: the batch (from memory while this instance just prepared it and no send marked it: see markSending)
   * and the other batches that hold any of `hashes` (see getWithHashOwners). With no hashes to look up, a batch in
   * memory costs no statement.
   */
  async forSend(txId: string, hashes: string[]): Promise<{ batch?: Batch; hashOwners: Map<string, string> }> {
    const kept = this.justPrepared.get(txId);
    if (!kept) return this.getWithHashOwners(txId, hashes);
    if (!hashes.length) return { batch: kept, hashOwners: new Map() };
    const rows = await this.db.query<{ tx_hash: string; tx_id: string }>(
      `SELECT tx_hash, tx_id FROM batch_transactions WHERE tx_hash = ANY($1::text[]) AND tx_id <> $2
       UNION ALL SELECT tx_hash, tx_id FROM batch_transaction_replacements WHERE tx_hash = ANY($1::text[]) AND tx_id <> $2`,
      [hashes.map((h) => h.toLowerCase()), txId],
    );
    return { batch: kept, hashOwners: new Map(rows.map((r) => [r.tx_hash, r.tx_id])) };
  }

  async get(txId: string, q: Queryable = this.db): Promise<Batch | undefined> {
    return (await this.getWithHashOwners(txId, [], q)).batch;
  }

  /**
   * A batch and, in the same statement, which other batches already hold any of `hashes` (a send checks that the
   * transactions it names belong to no other batch): hash → that batch's txId.
   */
  async getWithHashOwners(
    txId: string,
    hashes: string[],
    q: Queryable = this.db,
  ): Promise<{ batch?: Batch; hashOwners: Map<string, string> }> {
    const [row] = await q.query<BatchRow & { hash_owners: Record<string, string> | string | null }>(
      `SELECT b.*, (
         SELECT json_agg(${TX_JSON} ORDER BY t.index) FROM batch_transactions t WHERE t.tx_id = b.tx_id
       ) AS txs, (
         SELECT json_object_agg(o.tx_hash, o.tx_id) FROM (
           SELECT tx_hash, tx_id FROM batch_transactions WHERE tx_hash = ANY($2::text[]) AND tx_id <> b.tx_id
           UNION ALL SELECT tx_hash, tx_id FROM batch_transaction_replacements WHERE tx_hash = ANY($2::text[]) AND tx_id <> b.tx_id
         ) o
       ) AS hash_owners
       FROM batches b WHERE b.tx_id = $1`,
      [txId, hashes.map((h) => h.toLowerCase())],
    );
    if (!row) return { hashOwners: new Map() };
    return { batch: toBatch(row, this.sealer), hashOwners: hashOwnersOf(row.hash_owners) };
  }

  /** Locks the batch row for the rest of the transaction and returns its status. */
  async lock(tx: Queryable, txId: string): Promise<BatchStatus | undefined> {
    const [row] = await tx.query<{ status: BatchStatus }>("SELECT status FROM batches WHERE tx_id = $1 FOR UPDATE", [
      txId,
    ]);
    return row?.status;
  }

  /**
   * Moves a prepared batch to sending and records each transaction's signed form and hash (before any broadcast), in
   * one statement, so that it needs no transaction of its own. `moved` is false, and nothing is written, when:
   * - the batch is not prepared (anymore): of two concurrent sends of one txId, the second waits on the row and then
   *   finds nothing to move;
   * - another batch already holds one of the hashes: `hashOwners` names them (hash → that batch's txId);
   * - with `credit`, that key has no credit left for the method (`outOfCredits`).
   * With `credit`, the batch that moves spends one credit of that key and method, as Credits.spend does (the charge
   * row first, the balance only by the spend that charged, so a batch is charged once). The balance row is locked
   * before it is read, so two sends on the last credit cannot both move.
   * `sent`: the batch as the statement left it (when it moved), what its run starts from: given `prepared` (the batch
   * read while prepared, whose rows only a move changes), built from it (batch-known.ts). Whatever the outcome, this
   * instance no longer serves the batch from memory (forSend): its status is the database's from now on.
   */
  async markSending(
    q: Queryable,
    txId: string,
    signed: SendingTransaction[],
    credit?: { keyId: string; method: string },
    prepared?: Batch,
  ): Promise<Moved> {
    this.justPrepared.delete(txId.toLowerCase());
    // Reported hashes (client-broadcast) are out already: their transaction.broadcast events are written with the move.
    if (!signed.some((s) => s.status === "broadcast")) return this.moveToSending(q, txId, signed, credit, prepared);
    const move = async (tx: Queryable) => {
      const result = await this.moveToSending(tx, txId, signed, credit, prepared);
      const { sent } = result;
      if (sent)
        await emitEvents(
          tx,
          sent.transactions.filter((t) => t.status === "broadcast").map((t) => broadcastEvent(sent, t)),
        );
      return result;
    };
    return q === this.db ? this.db.transaction(move) : move(q);
  }

  private async moveToSending(
    q: Queryable,
    txId: string,
    signed: SendingTransaction[],
    credit?: { keyId: string; method: string },
    prepared?: Batch,
  ): Promise<Moved> {
    const known = prepared?.status === "prepared" ? prepared : undefined;
    // A relayed batch (nothing signed yet) without a credit to spend: the move alone.
    const lone = known && !signed.length && !credit;
    const [row] = await q.query<
      BatchRow & {
        moved: number;
        out_of_credits: boolean;
        taken: Record<string, string> | string | null;
        moved_at: Date | string;
      }
    >(
      lone
        ? `WITH batch AS (UPDATE batches SET status = 'sending', sent_at = now(), updated_at = now() WHERE tx_id = $1 AND status = 'prepared' RETURNING 1)
           SELECT now() AS moved_at, (SELECT count(*) FROM batch)::int AS moved, false AS out_of_credits, NULL::json AS taken`
        : `WITH taken AS (
         SELECT o.tx_hash, o.tx_id FROM batch_transactions o WHERE o.tx_hash = ANY($5::text[]) AND o.tx_id <> $1
         UNION ALL SELECT r.tx_hash, r.tx_id FROM batch_transaction_replacements r WHERE r.tx_hash = ANY($5::text[]) AND r.tx_id <> $1
       ), funds AS (
         SELECT balance FROM credit_balances WHERE key_id = $3::text AND method = $4::text FOR UPDATE
       ), batch AS (
         UPDATE batches SET status = 'sending', sent_at = now(), updated_at = now()
         WHERE tx_id = $1 AND status = 'prepared' AND NOT EXISTS (SELECT 1 FROM taken)
           AND ($3::text IS NULL OR COALESCE((SELECT balance FROM funds), 0) > 0)
         RETURNING *
       ), txs AS (
         UPDATE batch_transactions t
         SET signed_raw = s.signed_raw, tx_hash = s.tx_hash, status = s.status,
             broadcast_at = CASE WHEN s.status = 'broadcast' THEN now() ELSE NULL END
         FROM batch, jsonb_to_recordset($2::jsonb) AS s(index integer, signed_raw text, tx_hash text, status text)
         WHERE t.tx_id = batch.tx_id AND t.index = s.index
         RETURNING t.*
       ), charge AS (
         INSERT INTO credit_charges (tx_id, key_id, method) SELECT batch.tx_id, $3::text, $4::text FROM batch WHERE $3::text IS NOT NULL
         ON CONFLICT (tx_id) DO UPDATE SET refunded_at = NULL, charged_at = now() WHERE credit_charges.refunded_at IS NOT NULL
         RETURNING tx_id
       ), debit AS (
         UPDATE credit_balances SET balance = balance - 1
         WHERE key_id = $3::text AND method = $4::text AND balance > 0 AND EXISTS (SELECT 1 FROM charge)
       )
       SELECT ${known ? "now() AS moved_at" : `b.*, ${returnedTransactions("txs", "b.tx_id")} AS txs`},
              (SELECT count(*) FROM batch)::int AS moved,
              ($3::text IS NOT NULL AND COALESCE((SELECT balance FROM funds), 0) <= 0) AS out_of_credits,
              (SELECT json_object_agg(tx_hash, tx_id) FROM taken) AS taken
       FROM (SELECT 1) AS one LEFT JOIN batch b ON true`,
      lone
        ? [txId]
        : [
            txId,
            JSON.stringify(
              signed.map((s) => ({
                index: s.index,
                signed_raw: sealSigned(this.sealer, s.signedRaw, s.txHash),
                tx_hash: s.txHash?.toLowerCase() ?? null,
                status: s.status,
              })),
            ),
            credit?.keyId ?? null,
            credit?.method ?? null,
            signed.flatMap((s) => (s.txHash ? [s.txHash.toLowerCase()] : [])),
          ],
    );
    const moved = row.moved > 0;
    return {
      moved,
      outOfCredits: row.out_of_credits,
      hashOwners: hashOwnersOf(row.taken),
      ...(moved ? { sent: known ? sentFrom(known, signed, row.moved_at) : toBatch(row, this.sealer) } : {}),
    };
  }

  /**
   * A client-broadcast batch whose reported hash never appeared ends rejected; the client may then report the right
   * hashes for the same txId: the batch goes back to prepared. Its refunded credit charge may be charged again and its
   * released payments keep their history under a new subject, so the send can be paid again.
   */
  async reopen(q: Queryable, txId: string): Promise<void> {
    await q.query("DELETE FROM batch_transaction_replacements WHERE tx_id = $1", [txId]);
    await q.query(
      "UPDATE batches SET status = 'prepared', failed_index = NULL, error = NULL, sent_at = NULL, completed_at = NULL, updated_at = now() WHERE tx_id = $1",
      [txId],
    );
    await q.query(
      "UPDATE batch_transactions SET status = 'prepared', tx_hash = NULL, signed_raw = NULL, error = NULL, broadcast_at = NULL, block_number = NULL, gas_used = NULL WHERE tx_id = $1",
      [txId],
    );
    await q.query(
      "UPDATE payments SET subject = subject || '#released-' || id WHERE tx_id = $1 AND status = 'released' AND subject NOT LIKE '%#released-%'",
      [txId],
    );
  }

  /**
   * Ends a batch as rejected because transaction `index` reverted or was refused by the node. Answers the batch as this
   * ended it; undefined when it was not sending any more (another writer ended it: nothing written).
   */
  async reject(
    txId: string,
    index: number,
    txStatus: "reverted" | "refused" | "unseen",
    error: string,
    receipt?: { blockNumber: number; gasUsed: bigint },
    q: Queryable = this.db,
  ): Promise<Batch | undefined> {
    const rejectIn = async (tx: Queryable): Promise<Batch | undefined> => {
      await tx.query(
        "UPDATE batch_transactions SET status = $3, error = $4, block_number = $5, gas_used = $6 WHERE tx_id = $1 AND index = $2",
        [txId, index, txStatus, error, receipt?.blockNumber ?? null, receipt?.gasUsed.toString() ?? null],
      );
      const ended = await tx.query(
        "UPDATE batches SET status = 'rejected', failed_index = $2, error = $3, completed_at = now(), updated_at = now() WHERE tx_id = $1 AND status = 'sending' RETURNING tx_id",
        [txId, index, error],
      );
      if (!ended.length) return undefined;
      // Signed transactions the chain does not hold could still be broadcast by whoever reads the table (their nonce
      // may be free): a rejected batch keeps only the bytes of mined ones, whose nonce is spent.
      await tx.query(
        "UPDATE batch_transactions SET signed_raw = NULL WHERE tx_id = $1 AND signed_raw IS NOT NULL AND status NOT IN ('confirmed', 'reverted')",
        [txId],
      );
      // Events only from the writer that ended the batch: transaction.failed (a mined revert was broadcast first), batch.completed.
      const batch = (await this.get(txId, tx))!;
      const failed = batch.transactions[index];
      if (!failed) return batch;
      const events: NewEvent[] = txStatus === "reverted" ? [broadcastEvent(batch, failed)] : [];
      events.push(failedEvent(batch, failed, txStatus), completedEvent(batch));
      await emitEvents(tx, events);
      return batch;
    };
    return q === this.db ? this.db.transaction(rejectIn) : rejectIn(q);
  }

  /**
   * Ends a sending batch successfully, and in the same statement records its last transaction's confirmation when
   * given. The row stays locked for the rest of the database transaction, in which the method records what the batch
   * did. The statement waits for the transaction's next statement (Queryable.ahead): the method's records, and the
   * COMMIT, may travel in its trip. When the batch is no longer sending (another runner or instance ended it) the
   * statement fails, and the transaction with it, before anything after it ran: `endedElsewhere(error)` tells that
   * failure from others. A caller that awaits other work before this answer handles its rejection meanwhile (an
   * unhandled one ends the process): BatchEnding.finish does.
   *
   * Answers the batch as the statement left it.
   *
   * Its events (the last transaction's transaction.confirmed, and .broadcast if never recorded, then batch.completed)
   * are written by the same statement when the caller hands over `sending`, the batch as the store last returned it
   * (the events show it with what this statement writes: see endedAs); without it they are read back first (one
   * statement more).
   */
  async markSuccess(tx: Queryable, txId: string, lastConfirmed?: LastConfirmation, sending?: Batch): Promise<Batch> {
    const ended = sending && endedAs(sending, lastConfirmed);
    const events = ended ? eventRows(successEvents(ended, lastConfirmed?.index)) : null;
    const [row] = await tx.ahead<BatchRow & { ended_at: Date | string }>(
      `WITH ended AS (
         UPDATE batches SET status = 'success', records_written = true, completed_at = now(), updated_at = now()
         WHERE tx_id = $1 AND status = 'sending' RETURNING *
       ), confirmed AS (
         UPDATE batch_transactions t SET status = 'confirmed', block_number = $3, gas_used = $4, block_hash = $5, waiting = NULL, confirmed_at = now(), broadcast_at = COALESCE(t.broadcast_at, now())
         WHERE t.tx_id = $1 AND t.index = $2 AND EXISTS (SELECT 1 FROM ended) RETURNING t.*
       ), events AS (
         ${insertEventsSql("$6", "EXISTS (SELECT 1 FROM ended)")}
       )
       SELECT ${ended ? "now() AS ended_at" : `ended.*, ${returnedTransactions("confirmed", "ended.tx_id")} AS txs`}
       FROM (SELECT 1) AS one LEFT JOIN ended ON true
       WHERE tak_assert(ended.tx_id IS NOT NULL, 'batch ' || $1 || ' is not sending: another runner ended it')`,
      [
        txId,
        lastConfirmed?.index ?? -1,
        lastConfirmed?.blockNumber ?? null,
        lastConfirmed?.gasUsed.toString() ?? null,
        lastConfirmed?.blockHash ?? null,
        events,
      ],
    );
    // Given the batch as it was sending, the answer is built from it with what the statement wrote (batch-known.ts).
    if (ended) return endedAt(ended, lastConfirmed?.index, row.ended_at);
    const batch = toBatch(row, this.sealer);
    // The method's own events follow from its onConfirmed hook, in this transaction too.
    await emitEvents(tx, successEvents(batch, lastConfirmed?.index));
    return batch;
  }

  /**
   * Ends a sending batch whose transactions all confirmed but whose method refused to record them (it lost a race):
   * rejected with `error` (failedIndex: its last transaction), the last transaction's confirmation written as markSuccess
   * would, and its events (that confirmation, then batch.completed). Undefined when the batch was no longer sending.
   */
  async rejectConfirmed(
    txId: string,
    lastConfirmed: LastConfirmation | undefined,
    error: string,
    within: Queryable = this.db,
  ): Promise<Batch | undefined> {
    const rejectIn = async (q: Queryable): Promise<Batch | undefined> => {
      const ended = await q.query<{ last: number }>(
        `UPDATE batches SET status = 'rejected', failed_index = (SELECT max(index) FROM batch_transactions WHERE tx_id = $1), error = $2,
           completed_at = now(), updated_at = now()
         WHERE tx_id = $1 AND status = 'sending' RETURNING tx_id`,
        [txId, error],
      );
      if (!ended.length) return undefined;
      if (lastConfirmed) {
        await q.query(
          `UPDATE batch_transactions SET status = 'confirmed', block_number = $3, gas_used = $4, block_hash = $5, waiting = NULL, confirmed_at = now(),
             broadcast_at = COALESCE(broadcast_at, now())
           WHERE tx_id = $1 AND index = $2`,
          [
            txId,
            lastConfirmed.index,
            lastConfirmed.blockNumber,
            lastConfirmed.gasUsed.toString(),
            lastConfirmed.blockHash ?? null,
          ],
        );
      }
      const batch = (await this.get(txId, q))!;
      await emitEvents(q, successEvents(batch, lastConfirmed?.index));
      return batch;
    };
    return within === this.db ? this.db.transaction(rejectIn) : rejectIn(within);
  }

  /**
   * What a successful batch's method recorded of it (inside the transaction that ended it), also added to the
   * batch.completed event that transaction wrote (not committed yet: the latest of its txId, the row lock of the batch
   * keeps any other finisher waiting).
   */
  async setOutcome(tx: Queryable, txId: string, outcome: Record<string, unknown>): Promise<void> {
    await tx.write(
      `WITH batch AS (UPDATE batches SET outcome = $2 WHERE tx_id = $1)
       UPDATE events SET data = jsonb_set(data, '{outcome}', $2::jsonb)
       WHERE id = (SELECT max(id) FROM events WHERE tx_id = $1 AND type = 'batch.completed')`,
      [txId, JSON.stringify(outcome)],
    );
  }

  /**
   * Deletes prepared batches nobody sent within `ttlHours` (their send is refused as expired: engine/send.ts), unless a
   * payment names them (the prepare share a payer paid stays with what it paid for). Answers how many went.
   */
  async pruneExpiredPrepared(ttlHours: number): Promise<number> {
    const rows = await this.db.query<{ tx_id: string }>(
      `WITH doomed AS (
         SELECT b.tx_id FROM batches b
         WHERE b.status = 'prepared' AND b.created_at < now() - $1::float8 * interval '1 hour'
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.tx_id = b.tx_id)
         ORDER BY b.created_at LIMIT 10000
       ), transactions AS (
         DELETE FROM batch_transactions WHERE tx_id IN (SELECT tx_id FROM doomed)
       )
       DELETE FROM batches WHERE tx_id IN (SELECT tx_id FROM doomed) RETURNING tx_id`,
      [ttlHours],
    );
    for (const { tx_id } of rows) this.justPrepared.delete(tx_id);
    return rows.length;
  }

  async inFlight(): Promise<string[]> {
    const rows = await this.db.query<{ tx_id: string }>(
      "SELECT tx_id FROM batches WHERE status = 'sending' ORDER BY sent_at",
    );
    return rows.map((r) => r.tx_id);
  }
}

/** The SQLSTATE of tak_assert (migration 085): a statement found what it checks false. */
const ASSERTION_FAILED = "TK001";

/** The error Batches.markSuccess fails with when another runner (or instance) had ended the batch. */
export function endedElsewhere(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === ASSERTION_FAILED;
}
