import { formatUnits } from "ethers";
import type { ActionOutcome } from "../engine/operator-actions";
import type { Batch } from "../model/batch";
import type { AuditEntry } from "../store/audit-log";
import type { BatchRow } from "../store/batch-search";
import type { EventEnvelope } from "../store/outbox";
import type { TimelineItem } from "../wire/console";

/** An x402 amount (USDC base units, 6 decimals) with its unit. */
export const usdc = (amount: unknown) =>
  typeof amount === "string" && /^\d+$/.test(amount) ? `${formatUnits(amount, 6)} USDC` : "?";

/** Wei as gwei with its unit ("?" when it is not a decimal amount). */
export const gwei = (wei: unknown) =>
  typeof wei === "string" && /^\d+$/.test(wei) ? `${formatUnits(wei, "gwei")} gwei` : "?";

/** One event of the batch as a step of its timeline. */
function eventStep(e: EventEnvelope): TimelineItem {
  const data = (e.data ?? {}) as Record<string, any>;
  const tx = data.transaction as Record<string, any> | undefined;
  const index = typeof tx?.index === "number" ? tx.index : null;
  const fees = tx ? `nonce ${tx.nonce}, max fee ${gwei(tx.maxFeePerGas)}, tip ${gwei(tx.maxPriorityFeePerGas)}` : "";
  const step = (what: string, detail: string): TimelineItem => ({ at: e.timestamp, what, index, hash: e.hash, detail });
  switch (e.type) {
    case "transaction.broadcast":
      return step("broadcast", fees);
    case "transaction.replaced":
      return step("replaced", `replaced ${data.replacedHash}; ${fees}`);
    case "transaction.confirmed":
      return step("confirmed", `block ${tx?.blockNumber}, ${tx?.gasUsed} gas used`);
    case "transaction.reorged":
      return step(
        "reorged",
        `block ${data.removedBlockNumber} left the canonical chain; the transaction is sent again`,
      );
    case "transaction.failed":
      return step("failed", `${data.reason}: ${tx?.error ?? ""}`);
    case "batch.completed":
      return step("completed", `${data.status}${data.error ? `: ${data.error}` : ""}`);
    case "payment.settled":
    case "payment.released": {
      const payment = (data.payment ?? {}) as Record<string, any>;
      return step(
        e.type,
        `${payment.step} payment of ${usdc(payment.amount)} by ${payment.payer}${payment.releaseReason ? `: ${payment.releaseReason}` : ""}`,
      );
    }
    default:
      return step(e.type, "");
  }
}

/**
 * The batch's life in order: prepared and sent (its row), each broadcast, replacement, confirmation, reorg and failure
 * and its end (its events, while they are kept: EVENT_RETENTION_DAYS; older batches show what their rows keep), and
 * what operators did to it (the audit log).
 */
export function timeline(batch: Batch, row: BatchRow, events: EventEnvelope[], actions: AuditEntry[]): TimelineItem[] {
  const steps: TimelineItem[] = [
    {
      at: row.createdAt,
      what: "prepared",
      index: null,
      hash: null,
      detail: `${batch.method} on chain ${batch.chainId} (${batch.executionMode}) for ${batch.signer}`,
    },
  ];
  if (row.sentAt)
    steps.push({
      at: row.sentAt,
      what: "sent",
      index: null,
      hash: null,
      detail:
        batch.executionMode === "service-relayed"
          ? "paid; the relayer signs each transaction"
          : "signed transactions received",
    });
  if (events.length) steps.push(...events.map(eventStep));
  else steps.push(...fromRows(batch, row));
  for (const a of actions) {
    const after = (a.after ?? {}) as Partial<ActionOutcome>;
    steps.push({
      at: a.at,
      what: `operator: ${a.action}`,
      index: after.index ?? null,
      hash: after.hash ?? null,
      detail: `by ${a.actor}${after.previousHash ? `, ${after.previousHash} → ${after.hash}` : ""}`,
    });
  }
  return steps.sort((a, b) => a.at.localeCompare(b.at));
}

/** What the rows keep when the batch's events were pruned: broadcasts, replacements, the end. */
function fromRows(batch: Batch, row: BatchRow): TimelineItem[] {
  const steps: TimelineItem[] = [];
  for (const tx of batch.transactions) {
    if (tx.broadcastAt)
      steps.push({
        at: tx.broadcastAt,
        what: "broadcast",
        index: tx.index,
        hash: tx.txHash,
        detail: `nonce ${tx.unsigned.nonce}`,
      });
    for (const r of tx.replaced ?? [])
      steps.push({
        at: r.replacedAt,
        what: "replaced",
        index: tx.index,
        hash: r.hash,
        detail: `max fee ${gwei(r.maxFeePerGas)} (replaced)`,
      });
  }
  if (row.completedAt)
    steps.push({
      at: row.completedAt,
      what: "completed",
      index: batch.failedIndex,
      hash: null,
      detail: `${batch.status}${batch.error ? `: ${batch.error}` : ""}`,
    });
  return steps;
}
