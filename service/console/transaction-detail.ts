import { Transaction } from "ethers";
import { notFound } from "../errors";
import { feesOf } from "../engine/transaction-facts";
import type { Batch, BatchTransaction } from "../model/batch";
import type { BatchDetail } from "../wire/console";
import type { Services } from "../usecases/services";
import { chainFacts, type ChainFacts } from "./chain-facts";
import { minedFacts, type MinedFacts } from "./revert-reasons";
import { gwei, timeline } from "./timeline";

type TransactionView = BatchDetail["transactions"][number];

/**
 * A batch's page: what it is, each transaction as it stands (pending for how many blocks and how long, its fee against
 * the chain's base fee, which hash is live after a replacement or a cancellation and what the operator may still do;
 * once mined, its block, and a revert's reason decoded), its timeline, events and payments.
 */
export async function transactionDetail(services: Services, txId: string): Promise<BatchDetail> {
  const [batch, [row], events, payments, actions] = await Promise.all([
    services.batches.get(txId),
    services.batchSearch.page({ txId, limit: 1 }),
    services.batchSearch.events(txId),
    services.payments.forBatch(txId.toLowerCase()),
    services.auditLog.list({ limit: 100, target: txId.toLowerCase() }),
  ]);
  if (!batch || !row) throw notFound(`No batch with txId ${txId}`, { field: "txId" });
  const chain = services.chains.find(batch.chainId);
  const [facts] = chain ? await chainFacts([chain], services.config) : [undefined];
  const mined = await Promise.all(
    batch.transactions.map((tx) => (chain && needsReceipt(tx) ? minedFacts(chain, tx.txHash!) : Promise.resolve(null))),
  );
  return {
    batch: { ...row, body: batch.body, outcome: batch.outcome },
    chain: facts
      ? { name: facts.name, currency: facts.currency, explorer: facts.explorer, headBlock: facts.head?.number ?? null }
      : null,
    transactions: batch.transactions.map((tx, i) => transactionView(batch, tx, facts, mined[i])),
    timeline: timeline(batch, row, events, actions),
    events: events.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, hash: e.hash, data: e.data })),
    payments: payments.map((p) => ({
      id: p.id,
      subject: p.subject,
      status: p.status,
      amount: p.amount,
      payer: p.payer,
      settlementTransaction: (p.settlement as { transaction?: string } | null)?.transaction ?? p.settleTxHash,
      releaseReason: p.releaseReason,
    })),
  };
}

/** A mined transaction whose block is not recorded (a cancellation's no-op, older rows) or that reverted (its reason). */
const needsReceipt = (tx: BatchTransaction) =>
  !!tx.txHash && (tx.status === "reverted" || (tx.status === "confirmed" && tx.blockNumber === null));

/** The current bytes are the operator's cancellation: a zero-value call of the relayer to itself (relayer.replace noOp). */
export function isCancellation(tx: BatchTransaction): boolean {
  if (!tx.signedRaw) return false;
  try {
    const signed = Transaction.from(tx.signedRaw);
    return !!signed.from && signed.to?.toLowerCase() === signed.from.toLowerCase() && signed.data === "0x";
  } catch {
    return false;
  }
}

/** Waiting to be mined, with its bytes: what the operator's actions act on. */
export const waitsToBeMined = (batch: Batch, tx: BatchTransaction) =>
  batch.status === "sending" && !!tx.signedRaw && (tx.status === "signed" || tx.status === "broadcast");

function transactionView(
  batch: Batch,
  tx: BatchTransaction,
  chain: ChainFacts | undefined,
  mined: MinedFacts | null,
): TransactionView {
  const fees = feesOf(tx);
  const waiting = waitsToBeMined(batch, tx);
  const cancelling = waiting && isCancellation(tx);
  const relayed = batch.executionMode === "service-relayed";
  const baseFee = waiting ? (chain?.head?.baseFeePerGas ?? null) : null;
  return {
    index: tx.index,
    status: tx.status,
    state: stateOf(tx, waiting, cancelling),
    stateText: stateText(tx, waiting, cancelling, mined),
    hash: tx.txHash,
    liveHash: waiting ? tx.txHash : null,
    from: tx.unsigned.from,
    to: tx.unsigned.to,
    nonce: tx.unsigned.nonce,
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    baseFeePerGas: baseFee?.toString() ?? null,
    pending: waiting ? pendingAge(tx, chain) : null,
    blockNumber: tx.blockNumber ?? mined?.blockNumber ?? null,
    gasUsed: tx.gasUsed,
    error: tx.error,
    revertReason: mined?.status === "reverted" && !tx.error?.startsWith("cancelled") ? mined.reason : null,
    replaced: (tx.replaced ?? []).map((r) => ({
      hash: r.hash,
      maxFeePerGas: r.maxFeePerGas,
      maxPriorityFeePerGas: r.maxPriorityFeePerGas,
      replacedAt: r.replacedAt,
    })),
    waiting: tx.waiting?.reason ?? null,
    reorgs: tx.reorgs ?? 0,
    actions: relayed && waiting ? (cancelling ? ["rebroadcast", "replace"] : ["rebroadcast", "replace", "cancel"]) : [],
  };
}

function stateOf(tx: BatchTransaction, waiting: boolean, cancelling: boolean): TransactionView["state"] {
  if (waiting) return cancelling ? "cancelling" : "pending";
  if (tx.status === "reverted" && tx.error?.startsWith("cancelled by the operator")) return "cancelled";
  return tx.status;
}

function stateText(tx: BatchTransaction, waiting: boolean, cancelling: boolean, mined: MinedFacts | null): string {
  const replacedCount = tx.replaced?.length ?? 0;
  const earlier = replacedCount ? ` (${replacedCount} earlier form${replacedCount > 1 ? "s" : ""} replaced)` : "";
  if (cancelling)
    return `Being cancelled: the no-op ${tx.txHash} at nonce ${tx.unsigned.nonce} is live${earlier}. When it is mined the operation never runs, the batch ends rejected and its payment is released; an earlier form mined first would still run the operation. It may be sent again or replaced with higher fees; cancelling again would change nothing.`;
  if (waiting)
    return `Waiting to be mined: ${tx.txHash} is live${earlier}; its fees are ${gwei(feesOf(tx).maxFeePerGas.toString())} at most, ${gwei(feesOf(tx).maxPriorityFeePerGas.toString())} tip.`;
  const block = tx.blockNumber ?? mined?.blockNumber;
  switch (tx.status) {
    case "confirmed":
      return `Mined in block ${block ?? "?"}${tx.gasUsed ? `, ${tx.gasUsed} gas used` : ""}.`;
    case "reverted":
      if (tx.error?.startsWith("cancelled by the operator"))
        return `Cancelled: the no-op ${tx.txHash} was mined in block ${block ?? "?"}; the operation never ran.`;
      return `Reverted in block ${block ?? "?"}: ${mined?.reason ?? tx.error ?? "no reason known"}.`;
    case "refused":
      return `Refused, never mined: ${tx.error ?? "no reason recorded"}.`;
    case "unseen":
      return `The reported hash never appeared on the chain: ${tx.error ?? ""}`;
    case "prepared":
      return "Prepared: not signed yet.";
    default:
      return "Signed; not mined.";
  }
}

/**
 * How long it has waited since it was first broadcast: in blocks from the head it went out at (or, for rows that did
 * not record it, its time over the chain's block time: `estimated`), and in seconds.
 */
function pendingAge(tx: BatchTransaction, chain: ChainFacts | undefined): NonNullable<TransactionView["pending"]> {
  const seconds = tx.broadcastAt ? Math.max(0, Math.round((Date.now() - Date.parse(tx.broadcastAt)) / 1000)) : null;
  const head = chain?.head?.number;
  const since = tx.broadcastBlock ?? null;
  if (head !== undefined && since !== null)
    return { sinceBlock: since, blocks: Math.max(0, head - since), seconds, estimated: false };
  const blocks = seconds !== null && chain ? Math.round(seconds / chain.blockSeconds) : null;
  return { sinceBlock: null, blocks, seconds, estimated: blocks !== null };
}
