import { formatUnits } from "ethers";
import { badRequest, notFound } from "../errors";
import { cancelRelayed, rebroadcast, replaceWithHigherFees, type ActionOutcome } from "../engine/operator-actions";
import { feesOf } from "../engine/tracker";
import type { Batch, BatchStatus, BatchTransaction } from "../model/batch";
import type { AuditEntry } from "../store/audit-log";
import type { BatchRow } from "../store/batch-search";
import type { OperatorRecord } from "../store/operators";
import type { EventEnvelope } from "../store/outbox";
import type { BatchDetail, TimelineItem } from "../wire/console";
import type { Services } from "../usecases/services";
import { paged, parseTimeCursor, timeCursor } from "./paging";

export interface TransactionQuery {
  q?: string;
  status?: BatchStatus;
  before?: string;
}

/**
 * A search of the batches: `q` is a txId or a transaction hash (the one batch that has it, `match`), an address (the
 * signer, or any address a transaction is from or to) or an API key id; `status` narrows it. Newest first, a page at
 * a time.
 */
export async function searchTransactions(
  services: Services,
  query: TransactionQuery,
): Promise<{ items: BatchRow[]; next: string | null; match?: string }> {
  const q = query.q?.trim() ?? "";
  const before = parseTimeCursor(query.before);
  const filter = { status: query.status, before: before && { createdAt: before.at, txId: before.id } };
  if (/^0x[0-9a-fA-F]{64}$/.test(q)) {
    const txId =
      (await services.batchSearch.page({ txId: q, limit: 1 }))[0]?.txId ?? (await services.batches.txIdByHash(q));
    const items = txId ? await services.batchSearch.page({ txId, limit: 1 }) : [];
    return { items, next: null, ...(txId ? { match: txId } : {}) };
  }
  const narrowed = /^0x[0-9a-fA-F]{40}$/.test(q)
    ? { address: q }
    : /^[0-9a-f]{16}$/.test(q)
      ? { apiKeyId: q }
      : q === ""
        ? {}
        : undefined;
  if (!narrowed)
    throw badRequest(
      "q must be a txId or a transaction hash (0x + 64 hex), an address (0x + 40 hex) or an API key id (16 hex)",
      { field: "q" },
    );
  return paged(
    (limit) => services.batchSearch.page({ ...filter, ...narrowed, limit }),
    (last) => timeCursor(last.createdAt, last.txId),
  );
}

/** A batch's page: what it is, each transaction with what the operator may do to it, its timeline, events and payments. */
export async function transactionDetail(services: Services, txId: string): Promise<BatchDetail> {
  const [batch, [row], events, payments, actions] = await Promise.all([
    services.batches.get(txId),
    services.batchSearch.page({ txId, limit: 1 }),
    services.batchSearch.events(txId),
    services.payments.forBatch(txId.toLowerCase()),
    services.auditLog.list({ limit: 100, target: txId.toLowerCase() }),
  ]);
  if (!batch || !row) throw notFound(`No batch with txId ${txId}`, { field: "txId" });
  return {
    batch: { ...row, body: batch.body, outcome: batch.outcome },
    transactions: batch.transactions.map((tx) => transactionView(batch, tx)),
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

function transactionView(batch: Batch, tx: BatchTransaction): BatchDetail["transactions"][number] {
  const fees = feesOf(tx);
  const waitsToBeMined =
    batch.status === "sending" && !!tx.signedRaw && (tx.status === "signed" || tx.status === "broadcast");
  return {
    index: tx.index,
    status: tx.status,
    hash: tx.txHash,
    from: tx.unsigned.from,
    to: tx.unsigned.to,
    nonce: tx.unsigned.nonce,
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    blockNumber: tx.blockNumber,
    gasUsed: tx.gasUsed,
    error: tx.error,
    replaced: (tx.replaced ?? []).map((r) => ({
      hash: r.hash,
      maxFeePerGas: r.maxFeePerGas,
      maxPriorityFeePerGas: r.maxPriorityFeePerGas,
      replacedAt: r.replacedAt,
    })),
    waiting: tx.waiting?.reason ?? null,
    reorgs: tx.reorgs ?? 0,
    actions: batch.executionMode === "service-relayed" && waitsToBeMined ? ["rebroadcast", "replace", "cancel"] : [],
  };
}

const gwei = (wei: unknown) =>
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
      return step("confirmed", `block ${tx?.blockNumber}, gas used ${tx?.gasUsed}`);
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
        `${payment.step} payment of ${payment.amount} by ${payment.payer}${payment.releaseReason ? `: ${payment.releaseReason}` : ""}`,
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
function timeline(batch: Batch, row: BatchRow, events: EventEnvelope[], actions: AuditEntry[]): TimelineItem[] {
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

export type TransactionAction = "rebroadcast" | "replace" | "cancel";

const ACTIONS = { rebroadcast, replace: replaceWithHigherFees, cancel: cancelRelayed } as const;

/** An operator's action on a relayed transaction, done through the engine and written to the audit log. */
export async function transactionAction(
  services: Services,
  operator: OperatorRecord,
  txId: string,
  index: number,
  action: TransactionAction,
): Promise<ActionOutcome> {
  const outcome = await ACTIONS[action](services, txId.toLowerCase(), index);
  await services.auditLog.record({
    actor: operator.email,
    action: `transaction.${action}`,
    target: outcome.txId,
    before: { index, hash: outcome.previousHash },
    after: outcome,
  });
  services.logger.info(
    { operator: operator.email, txId: outcome.txId, index, action, hash: outcome.hash },
    "operator acted on a relayed transaction",
  );
  return outcome;
}
