import { statusView, transactionView } from "../model/batch-views";
import type { Batch, BatchTransaction } from "../model/batch";
import type { NewEvent } from "./outbox";

/** What a transaction event needs of its batch. */
export interface BatchFacts {
  txId: string;
  chainId: number;
  method: string;
  executionMode: Batch["executionMode"];
  apiKeyId: string | null;
}

/** The batch columns a statement returns next to a transaction row (see Batches). */
export interface BatchFactsRow {
  chain_id: number;
  method: string;
  execution_mode: Batch["executionMode"];
  api_key_id: string | null;
}

export const factsOf = (txId: string, row: BatchFactsRow): BatchFacts => ({
  txId,
  chainId: row.chain_id,
  method: row.method,
  executionMode: row.execution_mode,
  apiKeyId: row.api_key_id,
});

/** The `data` of a transaction.* event (the lead's transaction.replaced / transaction.reorged add their own fields). */
export function transactionEventData(batch: BatchFacts, tx: BatchTransaction) {
  return {
    txId: batch.txId,
    method: batch.method,
    executionMode: batch.executionMode,
    transaction: transactionView(tx),
  };
}

const envelopeOf = (batch: BatchFacts, tx: BatchTransaction) => ({
  apiKeyId: batch.apiKeyId,
  txId: batch.txId,
  chainId: batch.chainId,
  hash: tx.txHash,
});

/**
 * transaction.broadcast, shown as the transaction stood when it went out (pending, no block yet) whenever it is written:
 * on an instant chain the receipt is often there before the broadcast is recorded, and the event is then written with
 * the confirmation (once per hash: see emitEvents).
 */
export function broadcastEvent(batch: BatchFacts, tx: BatchTransaction): NewEvent {
  const sent: BatchTransaction = { ...tx, status: "broadcast", blockNumber: null, gasUsed: null, error: null };
  return { type: "transaction.broadcast", ...envelopeOf(batch, tx), data: transactionEventData(batch, sent) };
}

export function confirmedEvent(batch: BatchFacts, tx: BatchTransaction): NewEvent {
  return { type: "transaction.confirmed", ...envelopeOf(batch, tx), data: transactionEventData(batch, tx) };
}

export function failedEvent(
  batch: BatchFacts,
  tx: BatchTransaction,
  reason: "reverted" | "refused" | "unseen",
): NewEvent {
  return { type: "transaction.failed", ...envelopeOf(batch, tx), data: { ...transactionEventData(batch, tx), reason } };
}

/** batch.completed: the batch's status view (its outcome is added by Batches.setOutcome in the same transaction). */
export function completedEvent(batch: Batch): NewEvent {
  return {
    type: "batch.completed",
    apiKeyId: batch.apiKeyId,
    txId: batch.txId,
    chainId: batch.chainId,
    hash: batch.transactions.at(-1)?.txHash ?? null,
    data: statusView(batch),
  };
}

/**
 * An ended batch's events when its transactions all confirmed: its last transaction's confirmation (when confirmed by
 * the ending), batch.completed (success, or rejected when its records were refused).
 */
export function successEvents(batch: Batch, lastIndex?: number): NewEvent[] {
  const last = lastIndex === undefined ? undefined : batch.transactions[lastIndex];
  return [...(last ? [broadcastEvent(batch, last), confirmedEvent(batch, last)] : []), completedEvent(batch)];
}

/**
 * The batch markSuccess's statement leaves, for the events it writes in that statement: `sending` (as the store last
 * returned it) with the values the statement writes (success; the last transaction confirmed, no longer waiting).
 */
export function endedAs(
  sending: Batch,
  last: { index: number; blockNumber: number; gasUsed: bigint; blockHash?: string } | undefined,
): Batch {
  return {
    ...sending,
    status: "success",
    transactions: sending.transactions.map((t) =>
      t.index === last?.index
        ? {
            ...t,
            status: "confirmed",
            blockNumber: last.blockNumber,
            gasUsed: last.gasUsed.toString(),
            blockHash: last.blockHash ?? null,
            waiting: null,
          }
        : t,
    ),
  };
}
