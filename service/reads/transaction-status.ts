import type { z } from "zod";
import { TtlCache } from "../cache/ttl-cache";
import { chainIdHex } from "../chains/networks";
import { reportable } from "../engine/send";
import { statusView } from "../model/batch-views";
import type { Batch } from "../model/batch";
import { badRequest, notFound } from "../errors";
import type { ChainTransactionStatus, PaymentView } from "../wire/responses";
import type { PaymentRecord } from "../store/payments";
import { refundView, type RefundRecord } from "../store/payment-refunds";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import { JsonText } from "../wire/json-text";

/** What transaction-status reads. */
export type StatusServices = Pick<Stores, "batches" | "batchTransactions" | "payments" | "paymentRefunds"> & {
  chains: ChainRegistry;
  config: Config;
};

/** What a final batch's status is made of; it never changes again, so every request may be answered from memory. */
interface FinalStatus {
  batch: Batch;
  payments: PaymentRecord[];
  /** Payments owed back after a failure of ours, by payment (read only for a rejected batch that had a payment settled). */
  refunds?: Map<string, RefundRecord>;
  /** Its answers once serialized, by the hash they were asked with ("" for none). */
  answers?: Map<string, JsonText>;
}

/** Final batches kept per process (oldest dropped first): a few MB at most. */
const FINAL_STATUSES_KEPT = 2_000;

/**
 * Final batches' statuses by txId, and their transactions' hashes. Final means nothing about it can change any more:
 * the batch succeeded or was rejected for good (not a client-broadcast one that may be reported again), each of its
 * payments is settled or released, and each refund owed is refunded. A pending or prepared batch is always read from
 * the database.
 */
class FinalStatuses {
  readonly byTxId = new TtlCache<string, FinalStatus>(Infinity, FINAL_STATUSES_KEPT);
  /**
   * Final batches whose blocks a deep reorg may still take away (younger than REORG_WATCH_BLOCKS): kept briefly, so
   * that a reorg noticed by another instance shows here within RECENT_FINAL_MS (this instance's own is forgotten at once).
   */
  readonly recentByTxId = new TtlCache<string, FinalStatus>(RECENT_FINAL_MS, FINAL_STATUSES_KEPT);
  readonly txIdByHash = new TtlCache<string, string>(Infinity, FINAL_STATUSES_KEPT * 4);
  /** When a batch was last forgotten: a status read from the database before that is not kept. */
  private readonly forgottenAt = new TtlCache<string, number>(60_000, FINAL_STATUSES_KEPT);

  constructor(private readonly services: StatusServices) {}

  get(txId: string): FinalStatus | undefined {
    return this.byTxId.get(txId) ?? this.recentByTxId.get(txId);
  }

  keepIfFinal(status: FinalStatus, readAt: number): void {
    if (!isFinal(status) || (this.forgottenAt.get(status.batch.txId) ?? -Infinity) >= readAt) return;
    (this.deepEnough(status.batch) ? this.byTxId : this.recentByTxId).set(status.batch.txId, status);
    for (const t of status.batch.transactions) if (t.txHash) this.txIdByHash.set(t.txHash, status.batch.txId);
  }

  /**
   * A kept status's answer, serialized once for each way it is asked: without a hash, or with one of the batch's own
   * (any other hash is answered afresh, so callers cannot grow the map).
   */
  answer(status: FinalStatus, hash: string | undefined, build: () => unknown): unknown {
    const key = hash?.toLowerCase() ?? "";
    if (key && !status.batch.transactions.some((t) => t.txHash === key)) return build();
    const answers = (status.answers ??= new Map());
    let text = answers.get(key);
    if (!text) answers.set(key, (text = JsonText.of(build())));
    return text;
  }

  forget(txId: string): void {
    this.byTxId.delete(txId);
    this.recentByTxId.delete(txId);
    this.forgottenAt.set(txId, Date.now());
  }

  /** Every mined transaction of the batch has REORG_WATCH_BLOCKS on top of it (a rejected batch that never mined: too). */
  private deepEnough(batch: Batch): boolean {
    const head = this.services.chains.find(batch.chainId)?.blocks.head ?? -1;
    const newest = Math.max(-1, ...batch.transactions.map((t) => t.blockNumber ?? -1));
    return newest < 0 || (head >= 0 && head - newest >= this.services.config.REORG_WATCH_BLOCKS);
  }
}

/** How long a recently final status is answered from memory. */
const RECENT_FINAL_MS = 1_000;

export function isFinal({ batch, payments, refunds }: FinalStatus): boolean {
  const batchFinal =
    (batch.status === "success" && !batch.transactions.some((t) => t.reorgedAt)) ||
    (batch.status === "rejected" && !reportable(batch));
  return (
    batchFinal &&
    payments.every((p) => p.status === "settled" || p.status === "released") &&
    [...(refunds?.values() ?? [])].every((r) => r.status === "refunded")
  );
}

/** One cache per service instance, keyed by its batch store (the runner forgets through it, before the service is whole). */
const finalStatuses = new WeakMap<StatusServices["batches"], FinalStatuses>();
const finalStatusesOf = (services: StatusServices) => {
  let cache = finalStatuses.get(services.batches);
  if (!cache) finalStatuses.set(services.batches, (cache = new FinalStatuses(services)));
  return cache;
};

/** A batch a reorg changed: its status is read from the database again. */
export function forgetFinalStatus(services: Pick<StatusServices, "batches">, txId: string): void {
  finalStatuses.get(services.batches)?.forget(txId.toLowerCase());
}

/**
 * Who may read a batch: a batch prepared under an API key, only that key; a batch prepared without one (paid with
 * x402, or relayed), whoever names it. Its txId is 32 random bytes (newTxId), so naming it is a
 * capability; its transactions' hashes are public on the chain once sent, and so is what they carry.
 */
export function mayReadBatch(batch: Pick<Batch, "apiKeyId">, callerKeyId: string | undefined): boolean {
  return batch.apiKeyId === null || batch.apiKeyId === callerKeyId;
}

/**
 * GET /get-transaction-status: a batch by txId, or by one of its hashes; a hash this service never saw, from the chains.
 * A batch the caller may not read is answered as if the service did not know it: 404 by txId, the chain's public facts
 * by hash. `beforeChains` runs before the chains are asked about a hash (the caller's limit on such reads).
 */
export async function transactionStatus(
  services: StatusServices,
  query: { txId?: string; hash?: string },
  callerKeyId?: string,
  beforeChains: () => Promise<void> = async () => undefined,
) {
  if (!query.hash && !query.txId) throw badRequest("hash or txId is required", { field: "hash" });
  const cache = finalStatusesOf(services);
  const hash = query.hash?.toLowerCase();
  const txId =
    query.txId?.toLowerCase() ??
    (hash && (cache.txIdByHash.get(hash) ?? (await services.batchTransactions.txIdByHash(hash))));
  if (!txId) {
    await beforeChains();
    return chainTransactionStatus(services, query.hash!);
  }
  const unknown = () =>
    notFound(`No prepared transactions with txId ${query.txId ?? txId}`, { txId: query.txId ?? txId });
  let status = cache.get(txId);
  const kept = status !== undefined;
  if (!status) {
    const readAt = Date.now();
    const batch = await services.batches.get(txId);
    if (!batch) throw unknown();
    const payments = await services.payments.forBatch(batch.txId);
    status = { batch, payments, refunds: await refundsOf(services, batch, payments) };
    cache.keepIfFinal(status, readAt);
  }
  if (!mayReadBatch(status.batch, callerKeyId)) {
    if (query.txId) throw unknown();
    await beforeChains();
    return chainTransactionStatus(services, query.hash!);
  }
  const final = status;
  const answer = () => ({
    ...statusView(final.batch, query.hash),
    payments: final.payments.map((p) => paymentView(p, final.refunds?.get(p.id))),
  });
  return kept ? cache.answer(final, query.hash, answer) : answer();
}

/** A payment as its payer reads it, with its refund when it is owed back (`refund`). */
export function paymentView(p: PaymentRecord, refund?: RefundRecord): z.infer<typeof PaymentView> {
  return {
    status: p.status,
    amount: p.amount,
    network: p.network,
    payer: p.payer,
    step: p.subject.split(":")[0],
    settlementTransaction: p.settlement?.transaction ?? p.settleTxHash ?? null,
    ...(p.releaseReason ? { releaseReason: p.releaseReason } : {}),
    ...(refund ? { refund: refundView(refund) } : {}),
  };
}

/**
 * The refunds of a batch's payments: only a rejected batch with a settled payment can owe one (a failure of ours after
 * the payment), so no other batch costs a read.
 */
export async function refundsOf(
  services: Pick<Stores, "paymentRefunds">,
  batch: Pick<Batch, "txId" | "status">,
  payments: PaymentRecord[],
): Promise<Map<string, RefundRecord> | undefined> {
  if (batch.status !== "rejected" || !payments.some((p) => p.status === "settled")) return undefined;
  const refunds = await services.paymentRefunds.forBatch(batch.txId);
  return new Map(refunds.map((r) => [r.paymentId, r]));
}

/** A hash this service never saw: answer from the chains it serves. */
async function chainTransactionStatus(
  services: StatusServices,
  hash: string,
): Promise<z.infer<typeof ChainTransactionStatus>> {
  for (const chain of services.chains.list()) {
    const [receipt, tx] = await Promise.all([
      chain.provider.getTransactionReceipt(hash),
      chain.provider.getTransaction(hash),
    ]);
    if (receipt) {
      return {
        status: receipt.status === 1 ? "success" : "rejected",
        txId: null,
        chainId: chain.chainId,
        chainIdHex: chainIdHex(chain.chainId),
        txHash: hash,
        txHashes: [hash],
        blockNumber: receipt.blockNumber,
        gasUsed: receipt.gasUsed.toString(),
        transactions: [],
      };
    }
    if (tx)
      return {
        status: "pending",
        txId: null,
        chainId: chain.chainId,
        txHash: hash,
        txHashes: [hash],
        blockNumber: null,
        gasUsed: null,
        transactions: [],
      };
  }
  throw notFound(`Transaction ${hash} is unknown to this service and to the chains it serves`, { hash });
}
