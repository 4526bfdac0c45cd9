import type { BatchTransaction, TransactionWait, UnsignedTransaction } from "../model/batch";
import type { Sealer } from "../crypto/sealed";
import {
  broadcastEvent,
  confirmedEvent,
  factsOf,
  transactionEventData,
  type BatchFacts,
  type BatchFactsRow,
} from "./batch-events";
import {
  BATCH_FACTS,
  jsonColumn,
  REPLACED_JSON,
  sealSigned,
  toReturnedTx,
  toTx,
  TX_JSON,
  type ReplacedRow,
  type TxRow,
} from "./batch-rows";
import { broadcastFrom, signedFrom } from "./batch-known";
import { emitEvents, eventRows, insertEventsSql } from "./outbox";
import type { Db, Queryable } from "./db";

/**
 * The transactions of stored batches, one at a time (the batch_transactions rows and their replacements): their signed
 * forms (sealed), broadcast and confirmation, fee replacements, reorgs and what holds them back. A batch's own life
 * (stored, sent, ended) is Batches' (batches.ts).
 */
export class BatchTransactions {
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  /** Locks one transaction's row for the rest of the database transaction and returns it, with its replaced forms. */
  async lockTransaction(tx: Queryable, txId: string, index: number): Promise<BatchTransaction> {
    const [row] = await tx.query<TxRow>(
      `SELECT t.*, ${REPLACED_JSON} AS replaced FROM batch_transactions t WHERE t.tx_id = $1 AND t.index = $2 FOR UPDATE OF t`,
      [txId, index],
    );
    return toTx(row, this.sealer);
  }

  /**
   * Locks every transaction row of a batch and its payments' rows for the rest of the database transaction; true when
   * nothing of it was ever signed and no payment of it is being settled: nothing of it can reach a chain any more, nor
   * be paid meanwhile, once this transaction ends it (engine/runner-ending.ts abandonUnsent).
   */
  async lockNothingSent(tx: Queryable, txId: string): Promise<boolean> {
    const [row] = await tx.query<{ signed: boolean; settling: boolean }>(
      `WITH txs AS (SELECT tx_hash FROM batch_transactions WHERE tx_id = $1 FOR UPDATE),
            paid AS (SELECT status FROM payments WHERE tx_id = $1 FOR UPDATE)
       SELECT EXISTS (SELECT 1 FROM txs WHERE tx_hash IS NOT NULL) AS signed,
              EXISTS (SELECT 1 FROM paid WHERE status = 'settling') AS settling`,
      [txId],
    );
    return !row.signed && !row.settling;
  }

  /** One transaction of a batch as stored now, with its replaced forms (a runner re-reads it after another party replaced it). */
  async transaction(txId: string, index: number): Promise<BatchTransaction | undefined> {
    const [row] = await this.db.query<{ tx: TxRow | string }>(
      `SELECT ${TX_JSON} AS tx FROM batch_transactions t WHERE t.tx_id = $1 AND t.index = $2`,
      [txId, index],
    );
    return row ? toTx(jsonColumn(row.tx)!, this.sealer) : undefined;
  }

  /** The batch a transaction hash belongs to: its current hash, or one it replaced. */
  async txIdByHash(hash: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ tx_id: string }>(
      "SELECT tx_id FROM batch_transactions WHERE tx_hash = $1 UNION ALL SELECT tx_id FROM batch_transaction_replacements WHERE tx_hash = $1 LIMIT 1",
      [hash.toLowerCase()],
    );
    return row?.tx_id;
  }

  /**
   * Replaces the signed form of a transaction that is not mined yet with one of the same nonce and higher fees: the
   * current form moves to the replacements, the new one takes its place (and, for a relayed one, its fees go into
   * `unsigned`). False, and nothing written, when the current hash is no longer `replacing` (someone replaced it first,
   * or it is mined).
   */
  async replaceSigned(
    q: Queryable,
    txId: string,
    index: number,
    replacing: string,
    next: { signedRaw: string; txHash: string; unsigned?: UnsignedTransaction },
    replacedFees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  ): Promise<boolean> {
    const replaceIn = async (tx: Queryable) => {
      const [row] = await tx.query<{ moved: number }>(
        `WITH current AS (
           SELECT tx_id, index, tx_hash, signed_raw FROM batch_transactions
           WHERE tx_id = $1 AND index = $2 AND tx_hash = $3 AND status IN ('signed', 'broadcast') FOR UPDATE
         ), kept AS (
           INSERT INTO batch_transaction_replacements (tx_hash, tx_id, index, signed_raw, max_fee_per_gas, max_priority_fee_per_gas)
           SELECT tx_hash, tx_id, index, signed_raw, $7, $8 FROM current RETURNING tx_hash
         ), swapped AS (
           UPDATE batch_transactions t SET signed_raw = $4, tx_hash = $5, unsigned = COALESCE($6::jsonb, t.unsigned), waiting = NULL
           FROM kept WHERE t.tx_id = $1 AND t.index = $2 RETURNING t.tx_id
         )
         SELECT count(*)::int AS moved FROM swapped`,
        [
          txId,
          index,
          replacing.toLowerCase(),
          sealSigned(this.sealer, next.signedRaw, next.txHash),
          next.txHash.toLowerCase(),
          next.unsigned ? JSON.stringify(next.unsigned) : null,
          replacedFees.maxFeePerGas.toString(),
          replacedFees.maxPriorityFeePerGas.toString(),
        ],
      );
      if (!row.moved) return false;
      await this.emitTransactionEvent(tx, txId, index, "transaction.replaced", {
        replacedHash: replacing.toLowerCase(),
      });
      return true;
    };
    return q === this.db ? this.db.transaction(replaceIn) : replaceIn(q);
  }

  /** A transaction.* event about one transaction as it now stands, written in `q` (the change's own transaction). */
  private async emitTransactionEvent(
    q: Queryable,
    txId: string,
    index: number,
    type: "transaction.replaced" | "transaction.reorged",
    extra: { replacedHash: string } | { removedBlockNumber: number },
  ): Promise<void> {
    const [row] = await q.query<{ tx: TxRow | string } & BatchFactsRow>(
      `SELECT ${TX_JSON} AS tx, b.chain_id, b.method, b.execution_mode, b.api_key_id FROM batch_transactions t JOIN batches b ON b.tx_id = t.tx_id WHERE t.tx_id = $1 AND t.index = $2`,
      [txId, index],
    );
    if (!row) return;
    const facts = factsOf(txId, row);
    const tx = toTx(jsonColumn(row.tx)!, this.sealer);
    await emitEvents(q, [
      {
        type,
        apiKeyId: facts.apiKeyId,
        txId,
        chainId: facts.chainId,
        hash: tx.txHash,
        data: { ...transactionEventData(facts, tx), ...extra },
      },
    ]);
  }

  /**
   * An earlier form of a transaction was mined instead of the current one: the two swap places, so that the
   * transaction's hash is the one on chain and the other is listed as replaced.
   */
  async promoteReplaced(txId: string, index: number, winner: string): Promise<void> {
    await this.db.transaction(async (q) => {
      const [won] = await q.query<ReplacedRow>(
        "DELETE FROM batch_transaction_replacements WHERE tx_hash = $1 AND tx_id = $2 AND index = $3 RETURNING *",
        [winner.toLowerCase(), txId, index],
      );
      if (!won) return;
      const [current] = await q.query<{ tx_hash: string; signed_raw: string | null }>(
        "SELECT tx_hash, signed_raw FROM batch_transactions WHERE tx_id = $1 AND index = $2 FOR UPDATE",
        [txId, index],
      );
      await q.query("UPDATE batch_transactions SET tx_hash = $3, signed_raw = $4 WHERE tx_id = $1 AND index = $2", [
        txId,
        index,
        won.tx_hash,
        won.signed_raw,
      ]);
      await q.query(
        "INSERT INTO batch_transaction_replacements (tx_hash, tx_id, index, signed_raw) VALUES ($1, $2, $3, $4)",
        [current.tx_hash, txId, index, current.signed_raw],
      );
    });
  }

  /** Why a broadcast transaction waits (null: nothing known holds it back). Answers the transaction as written. */
  async setWaiting(
    txId: string,
    index: number,
    waiting: TransactionWait | null,
  ): Promise<BatchTransaction | undefined> {
    const [row] = await this.db.query<{ tx: TxRow | string }>(
      `UPDATE batch_transactions t SET waiting = $3 WHERE t.tx_id = $1 AND t.index = $2 RETURNING ${TX_JSON} AS tx`,
      [txId, index, waiting ? JSON.stringify(waiting) : null],
    );
    return row ? toReturnedTx(row, this.sealer) : undefined;
  }

  /**
   * A reorg took a transaction off the chain: back to broadcast (it is sent again) and counted. `afterConfirmation`:
   * it had counted as confirmed, which the row keeps saying, with reorged_at set until it is back on chain.
   */
  async markReorged(
    txId: string,
    index: number,
    afterConfirmation: boolean,
    removedBlockNumber: number,
  ): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.query(
        afterConfirmation
          ? "UPDATE batch_transactions SET reorged_at = now(), reorgs = reorgs + 1 WHERE tx_id = $1 AND index = $2"
          : "UPDATE batch_transactions SET reorgs = reorgs + 1, block_number = NULL, block_hash = NULL WHERE tx_id = $1 AND index = $2",
        [txId, index],
      );
      await this.emitTransactionEvent(q, txId, index, "transaction.reorged", { removedBlockNumber });
    });
  }

  /** A transaction a reorg took off the chain after its confirmation is confirmed again (maybe in another block). */
  async markBackOnChain(
    txId: string,
    index: number,
    receipt: { blockNumber: number; blockHash: string; gasUsed: bigint },
  ): Promise<void> {
    await this.db.query(
      "UPDATE batch_transactions SET reorged_at = NULL, block_number = $3, block_hash = $4, gas_used = $5 WHERE tx_id = $1 AND index = $2",
      [txId, index, receipt.blockNumber, receipt.blockHash, receipt.gasUsed.toString()],
    );
  }

  /**
   * Confirmed transactions of one chain mined at or above `fromBlock` (recent enough that a reorg may still take them
   * away): what the reorg watch looks after on start.
   */
  async recentlyConfirmed(
    chainId: number,
    fromBlock: number,
  ): Promise<{ txId: string; index: number; blockNumber: number; blockHash: string; reorged: boolean }[]> {
    const rows = await this.db.query<{
      tx_id: string;
      index: number;
      block_number: string;
      block_hash: string;
      reorged: boolean;
    }>(
      `SELECT t.tx_id, t.index, t.block_number::text, t.block_hash, t.reorged_at IS NOT NULL AS reorged FROM batch_transactions t JOIN batches b ON b.tx_id = t.tx_id
       WHERE b.chain_id = $1 AND t.status = 'confirmed' AND t.block_hash IS NOT NULL AND (t.block_number >= $2 OR t.reorged_at IS NOT NULL)`,
      [chainId, fromBlock],
    );
    return rows.map((r) => ({
      txId: r.tx_id,
      index: r.index,
      blockNumber: Number(r.block_number),
      blockHash: r.block_hash,
      reorged: r.reorged,
    }));
  }

  /** The highest nonce of `signer`'s transactions in batches being sent on a chain (held by us, maybe not in the node's pool). */
  async highestNonceInFlight(chainId: number, signer: string): Promise<number | undefined> {
    const [row] = await this.db.query<{ nonce: number | null }>(
      `SELECT max((t.unsigned->>'nonce')::bigint)::int AS nonce FROM batches b JOIN batch_transactions t ON t.tx_id = b.tx_id
       WHERE b.status = 'sending' AND b.chain_id = $1 AND lower(t.unsigned->>'from') = $2 AND t.status IN ('signed', 'broadcast')`,
      [chainId, signer.toLowerCase()],
    );
    return row?.nonce ?? undefined;
  }

  /**
   * Seals the signed transactions rows written before sealing existed hold in clear, of transactions not mined yet
   * (mined ones cannot be sent again: their nonce is spent). Run at start; returns how many.
   */
  async sealClearSigned(): Promise<number> {
    const rows = await this.db.query<{ tx_id: string; index: number; signed_raw: string; tx_hash: string }>(
      "SELECT tx_id, index, signed_raw, tx_hash FROM batch_transactions WHERE signed_raw LIKE '0x%' AND tx_hash IS NOT NULL AND status NOT IN ('confirmed', 'reverted')",
    );
    for (const r of rows) {
      await this.db.query(
        "UPDATE batch_transactions SET signed_raw = $3 WHERE tx_id = $1 AND index = $2 AND signed_raw = $4",
        [r.tx_id, r.index, sealSigned(this.sealer, r.signed_raw, r.tx_hash), r.signed_raw],
      );
    }
    return rows.length;
  }

  /**
   * Records the signed form of one transaction (for a relayed one, also its final nonce and fees) and answers it as
   * written: `locked`, the row as lockTransaction answered it in this database transaction, with what this changed. Its
   * last statement (sent with the COMMIT: Queryable.finalQuery).
   */
  async setTxSigned(
    q: Queryable,
    txId: string,
    locked: BatchTransaction,
    signedRaw: string,
    txHash: string,
    unsigned?: UnsignedTransaction,
  ): Promise<BatchTransaction> {
    const unsignedJson = unsigned ? JSON.stringify(unsigned) : null;
    await q.finalQuery(
      "UPDATE batch_transactions SET signed_raw = $3, tx_hash = $4, status = 'signed', unsigned = COALESCE($5, unsigned) WHERE tx_id = $1 AND index = $2",
      [txId, locked.index, sealSigned(this.sealer, signedRaw, txHash), txHash.toLowerCase(), unsignedJson],
    );
    return signedFrom(locked, signedRaw, txHash, unsignedJson);
  }

  /**
   * A signed transaction went out (at block `head` of its chain, when known); its transaction.broadcast event is
   * written in the same transaction. Given `signed`, the transaction as the store last returned it (signed) and its
   * batch's facts, the event is built from it and written by the same statement, only when that statement moved the
   * transaction: one statement, no transaction of its own. Answers the transaction as written; undefined when it was
   * not signed any more (broadcast or ended already: nothing written).
   */
  async setTxBroadcast(
    txId: string,
    index: number,
    head: number | null = null,
    signed?: { batch: BatchFacts; tx: BatchTransaction },
  ): Promise<BatchTransaction | undefined> {
    if (signed?.tx.txHash) {
      // Only while the row holds those bytes (their hash); otherwise the row is read, as without them.
      // The statement changes the row's status and broadcast columns alone: the rest is signed.tx's (batch-known.ts).
      const [row] = await this.db.query<{ broadcast_at: Date | string; broadcast_block: string | null }>(
        `WITH moved AS (
           UPDATE batch_transactions t SET status = 'broadcast', broadcast_at = COALESCE(t.broadcast_at, now()),
             broadcast_block = COALESCE(t.broadcast_block, $5)
           WHERE t.tx_id = $1 AND t.index = $2 AND t.status = 'signed' AND t.tx_hash = $4
           RETURNING t.broadcast_at, t.broadcast_block::text
         ), events AS (
           ${insertEventsSql("$3", "EXISTS (SELECT 1 FROM moved)")}
         )
         SELECT * FROM moved`,
        [txId, index, eventRows([broadcastEvent(signed.batch, signed.tx)]), signed.tx.txHash.toLowerCase(), head],
      );
      if (row) return broadcastFrom(signed.tx, row);
    }
    return this.db.transaction(async (q) => {
      const [row] = await q.query<{ tx: TxRow | string } & BatchFactsRow>(
        `UPDATE batch_transactions t SET status = 'broadcast', broadcast_at = COALESCE(t.broadcast_at, now()),
           broadcast_block = COALESCE(t.broadcast_block, $3)
         FROM batches b WHERE t.tx_id = $1 AND t.index = $2 AND t.status = 'signed' AND b.tx_id = t.tx_id
         RETURNING ${TX_JSON} AS tx, ${BATCH_FACTS}`,
        [txId, index, head],
      );
      if (!row) return undefined;
      const tx = toReturnedTx(row, this.sealer);
      await emitEvents(q, [broadcastEvent(factsOf(txId, row), tx)]);
      return tx;
    });
  }

  /**
   * A transaction (not the batch's last: see markSuccess) has its confirmations: transaction.confirmed (after its
   * transaction.broadcast, if the broadcast was never recorded) in the same transaction. Answers the transaction as
   * written; undefined when it was confirmed already (another runner got there first: left as it is).
   */
  async setTxConfirmed(
    txId: string,
    index: number,
    blockNumber: number,
    gasUsed: bigint,
    blockHash: string | null = null,
  ): Promise<BatchTransaction | undefined> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<{ tx: TxRow | string } & BatchFactsRow>(
        `UPDATE batch_transactions t SET status = 'confirmed', block_number = $3, gas_used = $4, block_hash = $5, waiting = NULL, confirmed_at = now(), broadcast_at = COALESCE(t.broadcast_at, now())
         FROM batches b WHERE t.tx_id = $1 AND t.index = $2 AND t.status <> 'confirmed' AND b.tx_id = t.tx_id
         RETURNING ${TX_JSON} AS tx, ${BATCH_FACTS}`,
        [txId, index, blockNumber, gasUsed.toString(), blockHash],
      );
      if (!row) return undefined;
      const facts = factsOf(txId, row);
      const tx = toReturnedTx(row, this.sealer);
      await emitEvents(q, [broadcastEvent(facts, tx), confirmedEvent(facts, tx)]);
      return tx;
    });
  }
}
