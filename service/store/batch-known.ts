import type { Batch, BatchTransaction, BatchTxStatus, UnsignedTransaction } from "../model/batch";
import type { Sealer } from "../crypto/sealed";
import { toBatch, type BatchRow, type TxRow } from "./batch-rows";

// A batch or one of its transactions as a write left it, built from what the caller already holds and the few values
// the statement itself chose (its time): the write answers those alone, not the rows as JSON read back. Each builder
// holds only where the statement's guard proves the rows were what the caller holds (a status, a hash, a row lock).

/** The JSON texts a batch's insert wrote: its body, plan and info, and its transactions' unsigned forms in order. */
export interface InsertedTexts {
  body: string;
  plan: string;
  info: string;
  unsigned: string;
}

/** A batch as its insert stored it at `createdAt`, read back from the JSON texts it was stored from. */
export function preparedFrom(
  batch: Pick<Batch, "txId" | "chainId" | "method" | "executionMode" | "signer" | "apiKeyId">,
  texts: InsertedTexts,
  createdAt: Date | string,
  sealer: Sealer,
): Batch {
  const row: BatchRow = {
    tx_id: batch.txId,
    chain_id: batch.chainId,
    method: batch.method,
    execution_mode: batch.executionMode,
    signer: batch.signer,
    api_key_id: batch.apiKeyId,
    status: "prepared",
    body: texts.body,
    plan: texts.plan,
    info: texts.info,
    failed_index: null,
    error: null,
    outcome: null,
    created_at: createdAt,
    txs: (JSON.parse(texts.unsigned) as UnsignedTransaction[]).map((unsigned, index) => preparedTxRow(index, unsigned)),
  };
  return toBatch(row, sealer);
}

/** A transaction row as the batch's insert writes it: prepared, nothing else known yet (the columns' defaults). */
const preparedTxRow = (index: number, unsigned: UnsignedTransaction): TxRow => ({
  index,
  unsigned,
  signed_raw: null,
  tx_hash: null,
  status: "prepared",
  block_number: null,
  gas_used: null,
  error: null,
  broadcast_at: null,
  broadcast_block: null,
  block_hash: null,
  waiting: null,
  reorged_at: null,
  reorgs: 0,
  replaced: null,
});

/** What a transaction of a batch being marked sending becomes (none for a relayed batch: it is signed when it runs). */
export interface SendingTransaction {
  index: number;
  signedRaw: string | null;
  txHash: string | null;
  status: BatchTxStatus;
}

/** What markSending answers: `sent`, the batch as the statement left it when it moved. */
export interface Moved {
  moved: boolean;
  outOfCredits: boolean;
  hashOwners: Map<string, string>;
  sent?: Batch;
}

/** A prepared batch as the statement that marks it sending left it: `signed` written at `movedAt` (its now()). */
export function sentFrom(prepared: Batch, signed: SendingTransaction[], movedAt: Date | string): Batch {
  const byIndex = new Map(signed.map((s) => [s.index, s]));
  return {
    ...prepared,
    status: "sending",
    transactions: prepared.transactions.map((t) => {
      const s = byIndex.get(t.index);
      if (!s) return t;
      return {
        ...t,
        signedRaw: s.signedRaw,
        txHash: s.txHash?.toLowerCase() ?? null,
        status: s.status,
        broadcastAt: s.status === "broadcast" ? new Date(movedAt).toISOString() : null,
      };
    }),
  };
}

/** The last transaction's confirmation markSuccess (or rejectConfirmed) writes with the batch's end. */
export interface LastConfirmation {
  index: number;
  blockNumber: number;
  gasUsed: bigint;
  blockHash?: string;
}

/**
 * A batch as the statement that ends it successfully left it (`ended`: the batch as it was sending, with what that
 * statement writes: batch-events.ts endedAs), its last transaction broadcast at `at` if its broadcast was never
 * recorded (the statement's COALESCE(broadcast_at, now())).
 */
export function endedAt(ended: Batch, lastIndex: number | undefined, at: Date | string): Batch {
  return {
    ...ended,
    transactions: ended.transactions.map((t) =>
      t.index === lastIndex && t.broadcastAt === null ? { ...t, broadcastAt: new Date(at).toISOString() } : t,
    ),
  };
}

/** A transaction row locked in this database transaction (`locked`), once its signed form was written over it. */
export function signedFrom(
  locked: BatchTransaction,
  signedRaw: string,
  txHash: string,
  unsignedText: string | null,
): BatchTransaction {
  return {
    ...locked,
    signedRaw,
    txHash: txHash.toLowerCase(),
    status: "signed",
    unsigned: unsignedText ? (JSON.parse(unsignedText) as UnsignedTransaction) : locked.unsigned,
  };
}

/** A signed transaction (`signed`, as the store last returned it) once marked broadcast with the statement's values. */
export function broadcastFrom(
  signed: BatchTransaction,
  written: { broadcast_at: Date | string; broadcast_block: string | null },
): BatchTransaction {
  const { broadcastBlock: _recorded, ...tx } = signed;
  return {
    ...tx,
    status: "broadcast",
    broadcastAt: new Date(written.broadcast_at).toISOString(),
    ...(written.broadcast_block === null ? {} : { broadcastBlock: Number(written.broadcast_block) }),
  };
}
