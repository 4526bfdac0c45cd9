import type {
  Batch,
  BatchStatus,
  BatchTransaction,
  BatchTxStatus,
  ReplacedTransaction,
  TransactionWait,
  UnsignedTransaction,
} from "../model/batch";
import type { Sealer } from "../crypto/sealed";

// How the batch tables' rows read and write: the row shapes, the sealed signed bytes, the JSON a read aggregates.

export interface BatchRow {
  tx_id: string;
  chain_id: number;
  method: string;
  execution_mode: Batch["executionMode"];
  signer: string;
  api_key_id: string | null;
  status: BatchStatus;
  body: Record<string, unknown> | string;
  plan: Record<string, unknown> | string;
  info: Record<string, unknown> | string;
  failed_index: number | null;
  error: string | null;
  outcome: Record<string, unknown> | null;
  created_at: Date | string;
  /** The batch's transactions, aggregated in the same statement (JSON: numbers as text, times as ISO strings). */
  txs: TxRow[] | string | null;
}

export interface TxRow {
  broadcast_at: Date | string | null;
  broadcast_block?: string | number | null;
  index: number;
  unsigned: UnsignedTransaction;
  signed_raw: string | null;
  tx_hash: string | null;
  status: BatchTxStatus;
  block_number: string | null;
  gas_used: string | null;
  error: string | null;
  block_hash?: string | null;
  waiting?: TransactionWait | string | null;
  reorged_at?: Date | string | null;
  reorgs?: number | null;
  replaced?: ReplacedRow[] | null;
}

/**
 * Signed transactions are stored sealed (crypto/sealed.ts), bound to their hash: until it is mined, whoever holds a
 * signed transaction can broadcast it, and rows the service later clears still linger in the database's files.
 * Rows written before sealing existed hold 0x hex and are read as is.
 */
const signedPurpose = (txHash: string) => `signed-tx:${txHash.toLowerCase()}`;

export function sealSigned(sealer: Sealer, signedRaw: string | null, txHash: string | null): string | null {
  if (signedRaw === null) return null;
  if (!txHash) throw new Error("a signed transaction is stored with its hash");
  return sealer.seal(signedRaw, signedPurpose(txHash));
}

function openSigned(sealer: Sealer, stored: string | null, txHash: string | null): string | null {
  if (stored === null || stored.startsWith("0x")) return stored;
  try {
    return sealer.open(stored, signedPurpose(txHash ?? ""));
  } catch {
    return null; // not readable with this DATA_ENCRYPTION_KEY: the transaction is followed by its hash alone
  }
}

export interface ReplacedRow {
  tx_hash: string;
  signed_raw: string | null;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  replaced_at: Date | string;
}

const toReplaced = (r: ReplacedRow, sealer: Sealer): ReplacedTransaction => ({
  hash: r.tx_hash,
  signedRaw: openSigned(sealer, r.signed_raw, r.tx_hash),
  maxFeePerGas: r.max_fee_per_gas === null ? null : String(r.max_fee_per_gas),
  maxPriorityFeePerGas: r.max_priority_fee_per_gas === null ? null : String(r.max_priority_fee_per_gas),
  replacedAt: new Date(r.replaced_at).toISOString(),
});

/** The replaced forms of transaction row `t`, as JSON (NULL when it has none). */
export const REPLACED_JSON = `(SELECT json_agg(json_build_object('tx_hash', r.tx_hash, 'signed_raw', r.signed_raw, 'max_fee_per_gas', r.max_fee_per_gas::text,
                 'max_priority_fee_per_gas', r.max_priority_fee_per_gas::text, 'replaced_at', r.replaced_at) ORDER BY r.replaced_at)
               FROM batch_transaction_replacements r WHERE r.tx_id = t.tx_id AND r.index = t.index)`;

/** The columns of one transaction and its replaced forms, as JSON (one row per transaction). */
export const TX_JSON = `json_build_object(
  'index', t.index, 'unsigned', t.unsigned, 'signed_raw', t.signed_raw, 'tx_hash', t.tx_hash, 'status', t.status,
  'block_number', t.block_number::text, 'gas_used', t.gas_used::text, 'error', t.error, 'broadcast_at', t.broadcast_at,
  'broadcast_block', t.broadcast_block::text, 'block_hash', t.block_hash, 'waiting', t.waiting, 'reorged_at', t.reorged_at, 'reorgs', t.reorgs,
  'replaced', ${REPLACED_JSON}
)`;

/**
 * A batch's transactions as a statement leaves them, for `RETURNING`-style answers: the rows CTE `updated` returned
 * (`RETURNING t.*`) and, for the others of batch `txIdSql`, the rows as they stand (the statement did not touch them).
 */
export const returnedTransactions = (
  updated: string,
  txIdSql: string,
) => `(SELECT json_agg(x.tx ORDER BY x.index) FROM (
    SELECT t.index, ${TX_JSON} AS tx FROM ${updated} t
    UNION ALL
    SELECT t.index, ${TX_JSON} AS tx FROM batch_transactions t WHERE t.tx_id = ${txIdSql} AND t.index NOT IN (SELECT index FROM ${updated})
  ) x)`;

/** A transaction row (or its JSON from TX_JSON) as the engine sees it, its signed bytes opened. */
export const toTx = (row: TxRow, sealer: Sealer): BatchTransaction => ({
  broadcastAt:
    row.broadcast_at === null || row.broadcast_at === undefined ? null : new Date(row.broadcast_at).toISOString(),
  index: row.index,
  unsigned: jsonColumn(row.unsigned)!,
  signedRaw: openSigned(sealer, row.signed_raw, row.tx_hash),
  txHash: row.tx_hash,
  status: row.status,
  blockNumber: row.block_number === null ? null : Number(row.block_number),
  gasUsed: row.gas_used,
  error: row.error,
  blockHash: row.block_hash ?? null,
  waiting: jsonColumn(row.waiting ?? null),
  reorgedAt: row.reorged_at === null || row.reorged_at === undefined ? null : new Date(row.reorged_at).toISOString(),
  reorgs: row.reorgs ?? 0,
  replaced: (jsonColumn(row.replaced ?? null) ?? []).map((r) => toReplaced(r, sealer)),
  // Only once recorded: the engine's copies of a batch and the stored one compare equal until then.
  ...(row.broadcast_block === null || row.broadcast_block === undefined
    ? {}
    : { broadcastBlock: Number(row.broadcast_block) }),
});

/** A batches row with its transactions aggregated (BatchRow.txs) as the engine sees it. */
export const toBatch = (row: BatchRow, sealer: Sealer): Batch => ({
  txId: row.tx_id,
  chainId: row.chain_id,
  method: row.method,
  executionMode: row.execution_mode,
  signer: row.signer,
  apiKeyId: row.api_key_id,
  status: row.status,
  body: jsonColumn(row.body)!,
  plan: jsonColumn(row.plan)!,
  info: jsonColumn(row.info)!,
  failedIndex: row.failed_index,
  error: row.error,
  outcome: jsonColumn(row.outcome),
  createdAt: new Date(row.created_at).toISOString(),
  transactions: (jsonColumn<TxRow[]>(row.txs) ?? []).map((t) => toTx(t, sealer)),
});

/** A transaction row that a statement returned as TX_JSON (`RETURNING ${TX_JSON} AS tx`), as the engine sees it. */
export const toReturnedTx = (row: { tx: TxRow | string }, sealer: Sealer): BatchTransaction =>
  toTx(jsonColumn(row.tx)!, sealer);

/** The batch columns a transaction event needs, beside a batch_transactions row (see BatchFactsRow). */
export const BATCH_FACTS = "b.chain_id, b.method, b.execution_mode, b.api_key_id";

/** A json column as its value: both drivers parse json, a value typed text holding JSON is parsed here. */
export function jsonColumn<T>(value: T | string | null): T | null {
  return typeof value === "string" ? (JSON.parse(value) as T) : value;
}

/** A json_object_agg of hash → txId (NULL when no row matched) as a map. */
export function hashOwnersOf(value: Record<string, string> | string | null): Map<string, string> {
  return new Map(Object.entries(jsonColumn(value) ?? {}));
}
