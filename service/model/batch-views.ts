import type { Batch, BatchStatus, BatchTransaction } from "./batch";

/** Public name of a batch status: a sending batch is "pending" (broadcast or about to be, not yet confirmed). */
export function publicStatus(status: BatchStatus): "prepared" | "pending" | "success" | "rejected" {
  return status === "sending" ? "pending" : status;
}

function txStatus(tx: BatchTransaction): "prepared" | "pending" | "success" | "rejected" {
  if (tx.reorgedAt) return "pending"; // confirmed once, then taken off the chain by a reorg: not on chain now
  switch (tx.status) {
    case "prepared":
      return "prepared";
    case "signed":
    case "broadcast":
      return "pending";
    case "confirmed":
      return "success";
    default:
      return "rejected";
  }
}

/** One transaction as the status and send answers show it (`transactions[]`, `txResponses[]`); events carry it too. */
export function transactionView(tx: BatchTransaction) {
  return {
    index: tx.index,
    hash: tx.txHash,
    status: txStatus(tx),
    blockNumber: tx.blockNumber,
    gasUsed: tx.gasUsed,
    error: tx.error,
    type: tx.unsigned.type,
    chainId: tx.unsigned.chainId,
    nonce: tx.unsigned.nonce,
    from: tx.unsigned.from,
    to: tx.unsigned.to,
    value: tx.unsigned.value,
    data: tx.unsigned.data,
    gasLimit: tx.unsigned.gasLimit,
    maxFeePerGas: tx.unsigned.maxFeePerGas,
    maxPriorityFeePerGas: tx.unsigned.maxPriorityFeePerGas,
    blockHash: tx.blockHash ?? null,
    ...(tx.replaced?.length ? { replacedHashes: tx.replaced.map((r) => r.hash) } : {}),
    ...(tx.waiting ? { waiting: tx.waiting } : {}),
    ...(tx.reorgedAt ? { reorged: true } : {}),
    ...(tx.reorgs ? { reorgs: tx.reorgs } : {}),
  };
}

/** A successful batch one of whose transactions a deep reorg took off the chain is pending again until it is back. */
function batchStatusOf(batch: Batch): "prepared" | "pending" | "success" | "rejected" {
  return batch.status === "success" && batch.transactions.some((t) => t.reorgedAt)
    ? "pending"
    : publicStatus(batch.status);
}

/** The summary POST /send-transactions answers with (docs/wire-conventions.md, Sending), plus status and txHashes. */
export function sendSummary(batch: Batch) {
  const status = batchStatusOf(batch);
  const txs = batch.transactions;
  const failed = txs.filter((t) => t.status === "reverted" || t.status === "refused" || t.status === "unseen").length;
  const accepted = txs.filter((t) => t.status === "confirmed" || t.status === "broadcast").length;
  const success = status !== "rejected";
  return {
    success,
    status,
    txId: batch.txId,
    txHashes: txs.map((t) => t.txHash).filter((h): h is string => h !== null),
    totalTransactions: txs.length,
    successfulTransactions: accepted,
    failedTransactions: failed,
    ...(batch.outcome ? { outcome: batch.outcome } : {}),
    ...(batch.error ? { error: batch.error, failedIndex: batch.failedIndex } : {}),
    results: [
      {
        txId: batch.txId,
        success,
        status,
        result: { txResponses: txs.filter((t) => t.txHash).map((t) => transactionView(t)) },
      },
    ],
  };
}

/** GET /get-transaction-status: the batch, or (asked by hash) that one transaction within its batch. */
export function statusView(batch: Batch, hash?: string) {
  const txs = batch.transactions;
  const focus = hash ? txs.find((t) => t.txHash === hash.toLowerCase()) : [...txs].reverse().find((t) => t.txHash);
  const batchStatus = batchStatusOf(batch);
  const gasUsed = txs.reduce((sum, t) => sum + BigInt(t.gasUsed ?? 0), 0n);
  return {
    status: hash && focus ? txStatus(focus) : batchStatus,
    batchStatus,
    txId: batch.txId,
    method: batch.method,
    chainId: batch.chainId,
    executionMode: batch.executionMode,
    txHash: focus?.txHash ?? null,
    txHashes: txs.map((t) => t.txHash).filter((h): h is string => h !== null),
    blockNumber: focus?.blockNumber ?? null,
    gasUsed: focus?.gasUsed ?? null,
    totalGasUsed: gasUsed.toString(),
    ...(batch.outcome ? { outcome: batch.outcome } : {}),
    ...(batch.error ? { error: batch.error, failedIndex: batch.failedIndex } : {}),
    transactions: txs.map((t) => transactionView(t)),
  };
}
