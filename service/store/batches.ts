import type { Batch, BatchStatus, BatchTransaction, BatchTxStatus, UnsignedTransaction } from "../engine/types";
import type { Db, Queryable } from "./db";

interface BatchRow {
  tx_id: string;
  chain_id: number;
  method: string;
  execution_mode: Batch["executionMode"];
  signer: string;
  api_key_id: string | null;
  status: BatchStatus;
  body: Record<string, unknown>;
  plan: Record<string, unknown>;
  info: Record<string, unknown>;
  failed_index: number | null;
  error: string | null;
  outcome: Record<string, unknown> | null;
  created_at: Date | string;
}

interface TxRow {
  broadcast_at: Date | string | null;
  index: number;
  unsigned: UnsignedTransaction;
  signed_raw: string | null;
  tx_hash: string | null;
  status: BatchTxStatus;
  block_number: string | null;
  gas_used: string | null;
  error: string | null;
}

const toTx = (row: TxRow): BatchTransaction => ({
  broadcastAt: row.broadcast_at === null || row.broadcast_at === undefined ? null : new Date(row.broadcast_at).toISOString(),
  index: row.index,
  unsigned: row.unsigned,
  signedRaw: row.signed_raw,
  txHash: row.tx_hash,
  status: row.status,
  blockNumber: row.block_number === null ? null : Number(row.block_number),
  gasUsed: row.gas_used,
  error: row.error,
});

/** Persistence of prepared batches and their transactions: the engine's write-ahead log. */
export class Batches {
  constructor(private readonly db: Db) {}

  async create(batch: Omit<Batch, "status" | "failedIndex" | "error" | "outcome" | "createdAt">): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, api_key_id, status, body, plan, info)
         VALUES ($1, $2, $3, $4, $5, $6, 'prepared', $7, $8, $9)`,
        [
          batch.txId,
          batch.chainId,
          batch.method,
          batch.executionMode,
          batch.signer,
          batch.apiKeyId,
          JSON.stringify(batch.body),
          JSON.stringify(batch.plan),
          JSON.stringify(batch.info),
        ],
      );
      for (const t of batch.transactions) {
        await tx.query("INSERT INTO batch_transactions (tx_id, index, unsigned, status) VALUES ($1, $2, $3, 'prepared')", [
          batch.txId,
          t.index,
          JSON.stringify(t.unsigned),
        ]);
      }
    });
  }

  async get(txId: string, q: Queryable = this.db): Promise<Batch | undefined> {
    const [row] = await q.query<BatchRow>("SELECT * FROM batches WHERE tx_id = $1", [txId]);
    if (!row) return undefined;
    const txs = await q.query<TxRow>("SELECT * FROM batch_transactions WHERE tx_id = $1 ORDER BY index", [txId]);
    return {
      txId: row.tx_id,
      chainId: row.chain_id,
      method: row.method,
      executionMode: row.execution_mode,
      signer: row.signer,
      apiKeyId: row.api_key_id,
      status: row.status,
      body: row.body,
      plan: row.plan,
      info: row.info,
      failedIndex: row.failed_index,
      error: row.error,
      outcome: row.outcome,
      createdAt: new Date(row.created_at).toISOString(),
      transactions: txs.map(toTx),
    };
  }

  /** Locks the batch row for the rest of the transaction and returns its status. */
  async lock(tx: Queryable, txId: string): Promise<BatchStatus | undefined> {
    const [row] = await tx.query<{ status: BatchStatus }>("SELECT status FROM batches WHERE tx_id = $1 FOR UPDATE", [txId]);
    return row?.status;
  }

  /** Locks one transaction's row for the rest of the database transaction and returns it. */
  async lockTransaction(tx: Queryable, txId: string, index: number): Promise<BatchTransaction> {
    const [row] = await tx.query<TxRow>("SELECT * FROM batch_transactions WHERE tx_id = $1 AND index = $2 FOR UPDATE", [txId, index]);
    return toTx(row);
  }

  async txIdByHash(hash: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ tx_id: string }>("SELECT tx_id FROM batch_transactions WHERE tx_hash = $1", [
      hash.toLowerCase(),
    ]);
    return row?.tx_id;
  }

  /** Moves a prepared batch to sending and records each transaction's signed form and hash (before any broadcast). */
  async markSending(
    tx: Queryable,
    txId: string,
    signed: { index: number; signedRaw: string | null; txHash: string | null; status: BatchTxStatus }[],
  ): Promise<void> {
    await tx.query("UPDATE batches SET status = 'sending', sent_at = now(), updated_at = now() WHERE tx_id = $1", [txId]);
    for (const s of signed) {
      await tx.query(
        "UPDATE batch_transactions SET signed_raw = $3, tx_hash = $4, status = $5, broadcast_at = CASE WHEN $5 = 'broadcast' THEN now() ELSE NULL END WHERE tx_id = $1 AND index = $2",
        [
        txId,
        s.index,
        s.signedRaw,
        s.txHash?.toLowerCase() ?? null,
          s.status,
        ],
      );
    }
  }

  /**
   * A client-broadcast batch whose reported hash never appeared ends rejected; the client may then report the right
   * hashes for the same txId: the batch goes back to prepared. Its refunded credit charge may be charged again and its
   * released payments keep their history under a new subject, so the send can be paid again.
   */
  async reopen(q: Queryable, txId: string): Promise<void> {
    await q.query("UPDATE batches SET status = 'prepared', failed_index = NULL, error = NULL, sent_at = NULL, completed_at = NULL, updated_at = now() WHERE tx_id = $1", [txId]);
    await q.query(
      "UPDATE batch_transactions SET status = 'prepared', tx_hash = NULL, signed_raw = NULL, error = NULL, broadcast_at = NULL, block_number = NULL, gas_used = NULL WHERE tx_id = $1",
      [txId],
    );
    await q.query("UPDATE payments SET subject = subject || '#released-' || id WHERE tx_id = $1 AND status = 'released' AND subject NOT LIKE '%#released-%'", [txId]);
  }

  /** Records the signed form of one transaction (for a relayed one, also its final nonce and fees). */
  async setTxSigned(txId: string, index: number, signedRaw: string, txHash: string, q: Queryable = this.db, unsigned?: UnsignedTransaction): Promise<void> {
    await q.query(
      "UPDATE batch_transactions SET signed_raw = $3, tx_hash = $4, status = 'signed', unsigned = COALESCE($5, unsigned) WHERE tx_id = $1 AND index = $2",
      [txId, index, signedRaw, txHash.toLowerCase(), unsigned ? JSON.stringify(unsigned) : null],
    );
  }

  async setOutcome(tx: Queryable, txId: string, outcome: Record<string, unknown>): Promise<void> {
    await tx.query("UPDATE batches SET outcome = $2 WHERE tx_id = $1", [txId, JSON.stringify(outcome)]);
  }

  async setTxBroadcast(txId: string, index: number): Promise<void> {
    await this.db.query(
      "UPDATE batch_transactions SET status = 'broadcast', broadcast_at = COALESCE(broadcast_at, now()) WHERE tx_id = $1 AND index = $2 AND status IN ('signed', 'broadcast')",
      [txId, index],
    );
  }

  async setTxConfirmed(txId: string, index: number, blockNumber: number, gasUsed: bigint): Promise<void> {
    await this.db.query(
      "UPDATE batch_transactions SET status = 'confirmed', block_number = $3, gas_used = $4, confirmed_at = now() WHERE tx_id = $1 AND index = $2",
      [txId, index, blockNumber, gasUsed.toString()],
    );
  }

  /** Ends a batch as rejected because transaction `index` reverted or was refused by the node. */
  async reject(
    txId: string,
    index: number,
    txStatus: "reverted" | "refused" | "unseen",
    error: string,
    receipt?: { blockNumber: number; gasUsed: bigint },
    q: Queryable = this.db,
  ): Promise<void> {
    await q.query(
      "UPDATE batch_transactions SET status = $3, error = $4, block_number = $5, gas_used = $6 WHERE tx_id = $1 AND index = $2",
      [txId, index, txStatus, error, receipt?.blockNumber ?? null, receipt?.gasUsed.toString() ?? null],
    );
    await q.query(
      "UPDATE batches SET status = 'rejected', failed_index = $2, error = $3, completed_at = now(), updated_at = now() WHERE tx_id = $1 AND status = 'sending'",
      [txId, index, error],
    );
  }

  async markSuccess(tx: Queryable, txId: string): Promise<void> {
    await tx.query(
      "UPDATE batches SET status = 'success', records_written = true, completed_at = now(), updated_at = now() WHERE tx_id = $1",
      [txId],
    );
  }

  async inFlight(): Promise<string[]> {
    const rows = await this.db.query<{ tx_id: string }>("SELECT tx_id FROM batches WHERE status = 'sending' ORDER BY sent_at");
    return rows.map((r) => r.tx_id);
  }
}
