import { keccak256, type TransactionReceipt } from "ethers";
import type { Chain } from "../chains/registry";
import type { WatchedBlock } from "../chains/reorg-watch";
import { isChainUnavailable } from "../chains/rpc-errors";
import { errorFacts, type Logger } from "../logger";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Queryable } from "../store/db";
import type { Stores } from "../store/stores";
import type { PaymentRecord } from "../store/payments";
import { PaymentNotCarried, WouldRevert, type OperationSettlement, type RelayedSignature, type Relayer } from "./relayer";
import { untilConfirmed } from "../chains/confirmations";
import { TransactionTracker, type TrackerDeps } from "./tracker";
import { RecordsRefused } from "./records-refused";
import type { Batch, BatchTransaction } from "../model/batch";

/** A run that could not reach its chain tries again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 15_000;

/** Signs a service-relayed transaction right before its broadcast (the relayer). Absent for client-signed batches. */
export type RelaySigner = (
  batch: Batch,
  tx: BatchTransaction,
  options?: { replacing?: string; data?: string; settle?: OperationSettlement },
) => Promise<RelayedSignature>;

/** What the runner uses: the stores it writes, the chains, the configuration and the relayer. */
export type RunnerDeps = Pick<Stores, "batches" | "credits" | "db" | "payments"> & { chains: ChainRegistry; config: Config; relayer: Relayer };

/** A confirmed batch as the runner hands it to its method (methods/hooks.ts adds what methods may use). */
export interface ConfirmedFacts {
  txId: string;
  chain: Chain;
  method: string;
  signer: string;
  apiKeyId: string | null;
  executionMode: Batch["executionMode"];
  /** The wallet whose x402 payment paid for the batch (its send share, else its prepare share), if any. */
  payer?: string;
  record: Record<string, unknown>;
  receipts: TransactionReceipt[];
}

/** What a batch's method does around the engine (bound to the method by methods/hooks.ts). */
export interface BatchHooks {
  /** Service-relayed: the calldata of transaction `index` once the payer is known; undefined keeps the prepared one. */
  bindRelayed?(batch: Batch, index: number, payer: string): Promise<string | undefined>;
  /** Writes what the receipts prove inside the transaction that ends the batch; may answer the batch's outcome. */
  onConfirmed?(q: Queryable, confirmed: ConfirmedFacts): Promise<Record<string, unknown> | void>;
}

/** Where the x402 payments of a batch are settled or released (payments/x402.ts), when x402 is on. */
export interface SettlementPort {
  /**
   * Before a batch's first broadcast: the payment its only transaction may carry (`canCarry`: relayed by a key that
   * delegates to PaidRelayDelegate) and those to settle first. `payments`: the batch's payments, when the caller knows them all.
   */
  paymentPlan(txId: string, chainId: number, canCarry: boolean, payments?: PaymentRecord[]): Promise<{ carried?: OperationSettlement; first: PaymentRecord[] }>;
  /** Settles payments before their operation is broadcast: paid, refused (released: nothing done) or waiting (owed). */
  settleFirst(payments: PaymentRecord[]): Promise<{ kind: "paid" } | { kind: "refused"; reason: string } | { kind: "waiting"; reason: string }>;
  /** The payment bound to a relayed batch's transaction, for signing it again with a fresh nonce. */
  boundSettlement(txId: string): Promise<OperationSettlement | undefined>;
  /** `ended`: the batch as the run that confirmed it just stored it; `payments`: its payments, read as it ended. */
  settleForBatch(txId: string, receipts?: TransactionReceipt[], ended?: Batch, payments?: PaymentRecord[]): Promise<void>;
  releaseForBatch(txId: string, reason: string): Promise<void>;
  /** A reorg deeper than its confirmations took a settlement off the chain. */
  afterDeepReorg(paymentId: string): Promise<void>;
  /** A deep reorg took a batch's transaction off the chain: a payment settled in it is settling again. */
  afterOperationReorg?(txId: string): Promise<void>;
  /**
   * Inside the transaction that ends a batch successfully: settles the payments its last transaction carried (the
   * receipt shows them paid); answers them, for keepSettledAfterCommit once that transaction committed.
   */
  settleWithinFinish?(q: Queryable, batch: Batch, receipt: TransactionReceipt | undefined, payments: PaymentRecord[]): Promise<PaymentRecord[]>;
  keepSettledAfterCommit?(settled: PaymentRecord[]): void;
}

/** What the last transaction's confirmation writes together with the batch's end. */
interface Confirmation {
  index: number;
  blockNumber: number;
  blockHash: string;
  gasUsed: bigint;
}

/**
 * Drives sending batches to an end: broadcast each transaction in order, wait until it is confirmed on the canonical
 * chain, and only then the next; stop at the first revert or refusal. Every step is read from and written to the
 * store first, so a batch interrupted by a crash resumes where it stopped: re-sending the same signed bytes can never
 * send anything twice. A chain that cannot be reached pauses the run, never ends it. Confirmed transactions stay
 * watched for deeper reorgs (chains/reorg-watch.ts): one taken off the chain is sent again.
 */
export class BatchRunner {
  private readonly active = new Map<string, Promise<Batch | undefined>>();
  /** Trackers of transactions waiting to be mined, by "<txId>:<index>" (a client's replacement tells them). */
  private readonly waiting = new Map<string, TransactionTracker>();
  private sweeper?: NodeJS.Timeout;
  private stopped = false;
  /** Resolves on stop(): block waits end at once, so a shutdown never waits out a block interval. */
  private stopping!: () => void;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopping = resolve));
  private readonly stop$ = { stopped: () => this.stopped, signal: this.stopSignal };
  relaySigner?: RelaySigner;
  /** Told when a reorg changed a batch that may have been final (read caches forget it). */
  onReorged: (txId: string) => void = () => undefined;
  /** Where payments of batches go once they end (x402), when it is on. */
  settlement?: SettlementPort;

  constructor(
    private readonly services: RunnerDeps,
    private readonly methods: (name: string) => BatchHooks | undefined,
    private readonly log: Logger,
  ) {
    for (const chain of services.chains.list()) chain.reorgWatch.onReorg = (entry) => void this.afterDeepReorg(chain, entry);
  }

  /**
   * Runs (or joins the run of) one batch in this process. `sending` is the batch as its send just stored it (status
   * sending), which spares reading it back. Resolves with the batch as the run left it (what the store now holds), or
   * undefined when the run did not end it here.
   */
  run(txId: string, sending?: Batch, payment?: PaymentRecord): Promise<Batch | undefined> {
    const running = this.active.get(txId);
    if (running) return running;
    if (payment) this.sendPayments.set(txId, payment);
    const run = this.driveThroughOutages(txId, sending)
      .catch((error) => {
        this.log.error({ txId, err: errorFacts(error) }, "batch run failed; it will be resumed");
        return undefined;
      })
      .finally(() => {
        this.active.delete(txId);
        this.reorgedDuringRun.delete(txId);
        this.payers.delete(txId);
        this.sendPayments.delete(txId);
      });
    this.active.set(txId, run);
    return run;
  }

  /** Resolves when the batch's run ends (with its ended batch, see run) or after `ms` (undefined), whichever is first. */
  async waitFor(txId: string, ms: number): Promise<Batch | undefined> {
    const run = this.active.get(txId);
    if (!run) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([run, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
    clearTimeout(timer);
    return ended;
  }

  /**
   * A transaction of a batch in flight was replaced through the API: its tracker in this process picks it up now, or
   * the run reads it again when it gets to it.
   */
  async replaced(txId: string, index: number): Promise<void> {
    const tracker = this.waiting.get(`${txId}:${index}`);
    if (tracker) await tracker.reload();
    else this.replacedAhead.add(`${txId}:${index}`);
  }

  /** Transactions replaced before their run got to them (their run's copy is stale). */
  private readonly replacedAhead = new Set<string>();
  /** Batches whose rows a reorg changed while their run was under way (its copy may not show it): read back at the end. */
  private readonly reorgedDuringRun = new Set<string>();

  /** Resumes every batch left mid-flight (after a restart), and keeps doing so periodically. */
  async resumeAll(): Promise<number> {
    const inFlight = await this.services.batches.inFlight();
    for (const txId of inFlight) void this.run(txId);
    return inFlight.length;
  }

  /** Watches the blocks of recently confirmed transactions again (after a restart), and re-sends those a reorg took away. */
  async watchRecent(): Promise<void> {
    for (const chain of this.services.chains.list()) {
      const head = await chain.provider.getBlockNumber().catch(() => undefined);
      if (head === undefined) continue;
      for (const t of await this.services.batches.recentlyConfirmed(chain.chainId, head - this.services.config.REORG_WATCH_BLOCKS)) {
        if (t.reorged) void this.bringBack(chain, t.txId, t.index);
        else chain.reorgWatch.add({ key: `${t.txId}:${t.index}`, blockNumber: t.blockNumber, blockHash: t.blockHash });
      }
    }
  }

  startSweeper(intervalMs = 30_000): void {
    this.sweeper = setInterval(() => void this.resumeAll().catch(() => undefined), intervalMs);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping();
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.allSettled([...this.active.values()]);
  }

  /** drive, again after a pause whenever the chain could not be reached (nothing it did is lost: it is all stored). */
  private async driveThroughOutages(txId: string, sending?: Batch): Promise<Batch | undefined> {
    for (let pause = RETRY_START_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      try {
        return await this.drive(txId, sending);
      } catch (error) {
        if (this.stopped || !isChainUnavailable(error)) throw error;
        this.log.warn({ txId, err: errorFacts(error), retryInMs: pause }, "chain not reachable; the batch waits and goes on");
        sending = undefined; // read back what the run stored
        await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stopSignal]);
        if (this.stopped) return undefined;
      }
    }
  }

  private async drive(txId: string, sending?: Batch): Promise<Batch | undefined> {
    const { batches, chains } = this.services;
    const stored = sending ?? (await batches.get(txId));
    if (!stored || stored.status !== "sending") return undefined;
    // Our own copy, kept equal to the rows as this run writes them (see `update`).
    const batch: Batch = { ...stored, transactions: [...stored.transactions] };
    const chain = chains.find(batch.chainId);
    if (!chain) throw new Error(`chain ${batch.chainId} of batch ${txId} is not served`);
    const receipts: TransactionReceipt[] = [];
    // The last transaction's confirmation is written with the batch's end (one database transaction fewer).
    let lastConfirmed: Confirmation | undefined;
    const paid = await this.payFirst(batch);
    if (paid === "stopped") return undefined;
    if (paid === "refused") return this.ended(batch);

    for (const tx of batch.transactions) {
      if (this.stopped) return undefined;
      if (tx.status === "reverted" || tx.status === "refused" || tx.status === "unseen") return batch;
      const signed = tx.status === "prepared" ? await this.signRelayed(batch, tx, paid.carried) : { current: await this.latest(batch, tx), acceptedAt: undefined, receipt: undefined };
      if (signed === "refused") return this.ended(batch);
      const { current, acceptedAt, receipt: asked } = signed;
      const outcome = await this.untilConfirmedOnChain(batch, chain, current, acceptedAt, asked);
      if (outcome.kind === "stopped" || outcome.kind === "timeout") return undefined; // resumed later
      if (outcome.kind === "ended") {
        await this.reject(batch, outcome.tx, outcome.status, outcome.error);
        return this.ended(batch);
      }
      const { receipt } = outcome;
      if (receipt.status !== 1) {
        await this.reject(batch, outcome.tx, "reverted", `transaction ${current.index + 1} reverted on-chain`, receipt);
        this.log.warn({ txId, index: current.index, hash: receipt.hash }, "transaction reverted; batch rejected");
        return this.ended(batch);
      }
      if (batch.transactions[current.index].status !== "confirmed") {
        const confirmed: Confirmation = { index: current.index, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, gasUsed: receipt.gasUsed };
        if (current.index === batch.transactions.length - 1) lastConfirmed = confirmed;
        else await batches.setTxConfirmed(txId, confirmed.index, confirmed.blockNumber, confirmed.gasUsed, confirmed.blockHash);
        const broadcastAt = batch.transactions[current.index].broadcastAt ?? new Date().toISOString();
        update(batch, current.index, { ...outcome.tx, status: "confirmed", blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, gasUsed: receipt.gasUsed.toString(), broadcastAt, waiting: null });
      }
      this.watchForDeepReorg(chain, txId, current.index, receipt);
      receipts.push(receipt);
    }

    // The run's copy holds what the relayer signed and what the trackers ended with: no read-back for a success.
    return (await this.finish(batch, chain, receipts, lastConfirmed)) ? batch : batches.get(txId);
  }

  /** The run's copy of a transaction, or what is stored when it was replaced meanwhile. */
  private async latest(batch: Batch, tx: BatchTransaction): Promise<BatchTransaction> {
    if (!this.replacedAhead.delete(`${batch.txId}:${tx.index}`)) return tx;
    return (await this.services.batches.transaction(batch.txId, tx.index)) ?? tx;
  }

  /**
   * No work before its payment: before a keyless batch's first broadcast, the payment its only transaction can carry
   * (relayed on the payment chain by a key that delegates to PaidRelayDelegate) rides in it, and every other payment
   * is settled first, once a simulation shows the relayed transaction would go through. A payment the payer made
   * unusable refuses the batch (released: nothing charged, nothing sent); one owed for a failure of ours (the
   * settlement wallet without gas) is tried again while the batch waits.
   */
  private async payFirst(batch: Batch, canCarry = true): Promise<{ carried?: OperationSettlement } | "refused" | "stopped"> {
    const settlement = this.settlement;
    if (batch.apiKeyId || !settlement) return {};
    const first = batch.transactions[0];
    const relayedUnsigned = batch.executionMode === "service-relayed" && first.status === "prepared";
    const carries = canCarry && relayedUnsigned && batch.transactions.length === 1 && !!this.services.relayer.delegate(batch.chainId, first.unsigned.from);
    let known: PaymentRecord[] | undefined = this.sendPayments.has(batch.txId) ? [this.sendPayments.get(batch.txId)!] : undefined;
    let simulated = false;
    for (let pause = RETRY_START_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      const plan = await settlement.paymentPlan(batch.txId, batch.chainId, carries, known);
      known = undefined; // read again after an attempt
      if (!plan.first.length) return { carried: plan.carried };
      if (relayedUnsigned && !simulated) {
        const revert = await this.wouldRevert(batch, first);
        if (revert) {
          await this.refuse(batch, first, `transaction ${first.index + 1} would revert: ${revert}; nothing was sent`);
          return "refused";
        }
        simulated = true;
      }
      const outcome = await settlement.settleFirst(plan.first);
      if (outcome.kind === "paid") return {};
      if (outcome.kind === "refused") {
        await this.refuse(batch, first, `${outcome.reason}; nothing was sent`);
        return "refused";
      }
      this.log.warn({ txId: batch.txId, reason: outcome.reason, retryInMs: pause }, "the batch's payment is owed and not settled yet; the batch waits for it");
      await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stopSignal]);
      if (this.stopped) return "stopped";
    }
  }

  /** Why a relayed transaction would revert now (simulated from its relayer on the pending block), or undefined. */
  private async wouldRevert(batch: Batch, tx: BatchTransaction): Promise<string | undefined> {
    if (!this.relaySigner) return undefined;
    const data = await this.boundData(batch, tx);
    try {
      await this.services.relayer.simulate(batch, tx, data);
      return undefined;
    } catch (error) {
      if (error instanceof WouldRevert) return error.reason;
      throw error;
    }
  }

  /** Calldata a relayed transaction is completed with at send time (it names the payer), when its method does so. */
  private async boundData(batch: Batch, tx: BatchTransaction): Promise<string | undefined> {
    const method = this.methods(batch.method);
    const payer = method?.bindRelayed ? await this.payerOf(batch) : undefined;
    return method?.bindRelayed && payer ? method.bindRelayed(batch, tx.index, payer) : undefined;
  }

  /**
   * A relayed transaction is signed (nonce, fees, calldata naming the payer) right before its broadcast, which the
   * relayer makes: `acceptedAt` when the node took the bytes. `carried`: the payment it carries (payFirst). A
   * transaction that would revert is refused unsigned; a payment that can no longer ride in it is settled first.
   */
  private async signRelayed(
    batch: Batch,
    tx: BatchTransaction,
    carried?: OperationSettlement,
  ): Promise<{ current: BatchTransaction; acceptedAt?: number; receipt?: Promise<TransactionReceipt | null> } | "refused"> {
    if (!this.relaySigner || batch.executionMode !== "service-relayed") throw new Error(`transaction ${tx.index} of ${batch.txId} was never signed`);
    const data = await this.boundData(batch, tx);
    const settle = tx.index === batch.transactions.length - 1 ? carried : undefined;
    if (settle) this.payers.set(batch.txId, settle.payer);
    let signature: RelayedSignature;
    try {
      signature = await this.relaySigner(batch, tx, { data, settle });
    } catch (error) {
      if (error instanceof WouldRevert) {
        await this.refuse(batch, tx, `transaction ${tx.index + 1} would revert: ${error.reason}; nothing was sent`);
        return "refused";
      }
      if (!(error instanceof PaymentNotCarried)) throw error;
      this.log.warn({ txId: batch.txId, reason: error.message }, "the payment cannot ride in its operation's transaction; it is settled first");
      const paid = await this.payFirst(batch, false);
      if (paid === "refused") return "refused";
      if (paid === "stopped") throw error;
      return this.signRelayed(batch, tx);
    }
    const { signedRaw, txHash, stored, acceptedAt, receipt } = signature;
    // The relayer re-priced (and numbered) it: what it stored, or read back when another runner signed it first.
    const current = stored ?? (await this.services.batches.transaction(batch.txId, tx.index)) ?? { ...tx, signedRaw, txHash, status: "signed" as const };
    return { current, acceptedAt, receipt };
  }

  /**
   * Mined, then confirmed on the canonical chain: a reorg that takes the transaction away before its confirmations
   * sends it back to be mined again (its bytes are broadcast again if the node lost them).
   */
  private async untilConfirmedOnChain(batch: Batch, chain: Chain, tx: BatchTransaction, acceptedAt?: number, receipt?: Promise<TransactionReceipt | null>) {
    const key = `${batch.txId}:${tx.index}`;
    const tracker = new TransactionTracker(this.trackerDeps(batch, chain), batch, chain, tx, acceptedAt, receipt);
    this.waiting.set(key, tracker);
    try {
      for (;;) {
        const mined = await tracker.untilMined();
        if (mined.kind !== "mined") return mined;
        const confirmed = await untilConfirmed(chain, mined.receipt, chain.confirmations, this.stop$);
        if (confirmed.kind === "confirmed") return { kind: "mined" as const, receipt: confirmed.receipt, tx: mined.tx };
        if (confirmed.kind === "stopped") return confirmed;
        chain.shallowReorgs++;
        this.reorgedDuringRun.add(batch.txId);
        await this.services.batches.markReorged(batch.txId, tx.index, false, confirmed.blockNumber);
        this.log.warn({ txId: batch.txId, index: tx.index, hash: mined.receipt.hash, blockNumber: confirmed.blockNumber }, "reorg took the transaction off the chain before its confirmations; waiting for it again");
      }
    } finally {
      if (this.waiting.get(key) === tracker) this.waiting.delete(key);
    }
  }

  private trackerDeps(batch: Batch, chain: Chain): TrackerDeps {
    const relayed = batch.executionMode === "service-relayed" && !!this.relaySigner;
    const { relayer, batches, config } = this.services;
    return {
      batches,
      config,
      log: this.log,
      stop: this.stop$,
      ...(relayed
        ? {
            resign: async (tx: BatchTransaction) => {
              // Someone else used the relayer's nonce: take a fresh one and sign again (the old bytes can never be mined),
              // with the payment the first bytes carried, if any.
              await relayer.syncNonces();
              const settle = tx.index === batch.transactions.length - 1 ? await this.settlement?.boundSettlement(batch.txId) : undefined;
              await this.relaySigner!(batch, tx, { replacing: tx.txHash!, data: tx.unsigned.data, settle });
              return (await batches.transaction(batch.txId, tx.index))!;
            },
            replace: (tx: BatchTransaction, fees) => relayer.replace(batch, tx, fees),
            healNonces: () => relayer.healNonces(chain),
          }
        : {}),
    };
  }

  /** Keeps a confirmed transaction's block in the chain's reorg watch until it is deep enough. */
  private watchForDeepReorg(chain: Chain, txId: string, index: number, receipt: TransactionReceipt): void {
    chain.reorgWatch.add({ key: `${txId}:${index}`, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash });
  }

  /**
   * A reorg deeper than its confirmations took a transaction off the chain. Its records stay (they took effect once),
   * but status says it is pending again, and the bytes are sent again until it is back on chain.
   */
  private async afterDeepReorg(chain: Chain, entry: WatchedBlock): Promise<void> {
    if (entry.key.startsWith("payment:")) {
      const paymentId = entry.key.slice("payment:".length);
      const txId = (await this.services.payments.get(paymentId))?.txId;
      await this.settlement?.afterDeepReorg(paymentId);
      if (txId) this.onReorged(txId);
      return;
    }
    const [txId, index] = [entry.key.slice(0, entry.key.lastIndexOf(":")), Number(entry.key.slice(entry.key.lastIndexOf(":") + 1))];
    this.log.error({ txId, index, chainId: chain.chainId, blockNumber: entry.blockNumber, blockHash: entry.blockHash }, "reorg deeper than the confirmations took a confirmed transaction off the chain; sending it again");
    if (this.active.has(txId)) this.reorgedDuringRun.add(txId);
    await this.services.batches.markReorged(txId, index, true, entry.blockNumber).catch((error) => this.log.error({ txId, err: errorFacts(error) }, "could not record the reorg"));
    await this.settlement?.afterOperationReorg?.(txId).catch((error) => this.log.error({ txId, err: errorFacts(error) }, "could not record the reorg of a payment"));
    this.onReorged(txId);
    await this.bringBack(chain, txId, index);
  }

  /** Gets a transaction a deep reorg took away back on chain (same bytes, or a higher-fee replacement if relayed). */
  private async bringBack(chain: Chain, txId: string, index: number): Promise<void> {
    const key = `${txId}:${index}:back`;
    if (this.active.has(key)) return;
    const run = (async () => {
      for (let pause = RETRY_START_MS; !this.stopped; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
        try {
          const batch = await this.services.batches.get(txId);
          const tx = batch?.transactions[index];
          if (!batch || !tx?.txHash) return undefined;
          const outcome = await this.untilConfirmedOnChain(batch, chain, { ...tx, status: "broadcast" });
          if (outcome.kind !== "mined") return undefined;
          await this.services.batches.markBackOnChain(txId, index, outcome.receipt);
          this.onReorged(txId);
          this.watchForDeepReorg(chain, txId, index, outcome.receipt);
          if (outcome.receipt.status !== 1) this.log.error({ txId, index, hash: outcome.receipt.hash }, "transaction taken off the chain by a reorg reverted when it was mined again");
          else this.log.info({ txId, index, hash: outcome.receipt.hash }, "transaction taken off the chain by a reorg is back on chain");
          // A payment settled in it follows its fate (settled again, or released if it reverted this time).
          await this.settlement?.settleForBatch(txId);
          return undefined;
        } catch (error) {
          if (!isChainUnavailable(error)) this.log.error({ txId, index, err: errorFacts(error) }, "could not bring a reorged transaction back; trying again");
          await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stopSignal]);
        }
      }
      return undefined;
    })().finally(() => this.active.delete(key));
    this.active.set(key, run);
  }

  /**
   * The batch as a run that ended it early (a revert, a refusal) left it. A relayed batch is read back: a transaction
   * the relayer re-signed or replaced on the way is only partly in the run's copy.
   */
  private async ended(batch: Batch): Promise<Batch | undefined> {
    return batch.executionMode === "service-relayed" ? this.services.batches.get(batch.txId) : batch;
  }

  /**
   * Ends a batch at a reverted or refused transaction. Its payment is released (nothing charged); its credit comes
   * back when the caller got nothing from it: a relayed batch, or one whose first transaction never reached the chain.
   */
  private async reject(
    batch: Batch,
    tx: BatchTransaction,
    status: "reverted" | "refused" | "unseen",
    error: string,
    receipt?: { blockNumber: number; gasUsed: bigint },
  ): Promise<void> {
    await this.services.batches.reject(batch.txId, tx.index, status, error, receipt);
    update(batch, tx.index, { status, error, blockNumber: receipt?.blockNumber ?? null, gasUsed: receipt?.gasUsed.toString() ?? null });
    Object.assign(batch, { status: "rejected", failedIndex: tx.index, error });
    const relayed = batch.executionMode === "service-relayed";
    // A relayed transaction the node refused never used its nonce; one refused before it was signed never had one.
    if (relayed && status === "refused" && tx.signedRaw) await this.services.relayer.onRefused(this.services.chains.find(batch.chainId)!, tx);
    if (relayed || (tx.index === 0 && status !== "reverted")) {
      await this.services.db.transaction((q) => this.services.credits.refund(q, batch.txId));
    }
    await this.settlement?.releaseForBatch(batch.txId, `the operation failed: ${error}`);
  }

  /** Ends a batch before anything of it was sent (its transaction would revert, or its payment failed): nothing spent. */
  private async refuse(batch: Batch, tx: BatchTransaction, error: string): Promise<void> {
    this.log.warn({ txId: batch.txId, index: tx.index, reason: error }, "batch refused before anything was sent");
    await this.reject(batch, tx, "refused", error);
  }

  /** Payers this process's runs learnt on the way (the payment their last transaction carries), by txId. */
  private readonly payers = new Map<string, string>();
  /**
   * The payment a send reserved just before it started its batch's run here, by txId. A service-relayed batch has no
   * other (its prepare is free, and a subject is paid once), so it is all of the batch's payments: not read back.
   */
  private readonly sendPayments = new Map<string, PaymentRecord>();

  /** The wallet whose x402 payment pays for a batch: its send payment's payer, else its prepare payment's. */
  private async payerOf(batch: Batch): Promise<string | undefined> {
    if (batch.apiKeyId) return undefined;
    const known = this.payers.get(batch.txId);
    if (known) return known;
    const payments = await this.services.payments.forBatch(batch.txId);
    const paid = payments.filter((p) => p.status !== "released");
    return (paid.find((p) => p.subject.startsWith("send:")) ?? paid[0])?.payer;
  }

  /**
   * Records what the receipts prove and marks the batch successful, atomically and at most once. False when another
   * runner (or instance) finished it.
   */
  private async finish(batch: Batch, chain: Chain, receipts: TransactionReceipt[], lastConfirmed?: Confirmation): Promise<boolean> {
    const method = this.methods(batch.method);
    const payer = await this.payerOf(batch);
    // A batch prepared under a key is never paid with x402 (access/gate.ts admitSend): nothing to settle or look up.
    const paid = !batch.apiKeyId && this.settlement;
    let marked: false | { toSettle: PaymentRecord[] | undefined; settledHere: PaymentRecord[] };
    try {
      marked = await this.finishIn(batch, chain, receipts, lastConfirmed, method, payer, paid);
    } catch (error) {
      if (!(error instanceof RecordsRefused)) throw error;
      await this.refuseRecords(batch, receipts, lastConfirmed, error.reason);
      return false;
    }
    if (!marked) return false;
    batch.status = "success";
    this.log.info({ txId: batch.txId, method: batch.method }, "batch confirmed");
    if (paid) {
      paid.keepSettledAfterCommit?.(marked.settledHere);
      const settled = new Set(marked.settledHere.map((p) => p.id));
      await paid.settleForBatch(batch.txId, receipts, batch, marked.toSettle?.filter((p) => !settled.has(p.id)));
    }
    return true;
  }

  /** finish's database transaction: the batch ended, the method's records, the payments it carried settled. */
  private finishIn(
    batch: Batch,
    chain: Chain,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    method: BatchHooks | undefined,
    payer: string | undefined,
    paid: false | undefined | SettlementPort,
  ) {
    return this.services.db.transaction(async (q) => {
      const { batches, payments } = this.services;
      // Ended first: the row lock makes a second finisher (another runner or instance) find it ended and write nothing.
      // The run's copy (equal to the rows it wrote) gives the events, written by the same statement, unless a reorg
      // changed the rows meanwhile. The payments to settle are read with it (one trip).
      const ended = this.reorgedDuringRun.has(batch.txId) ? undefined : { ...batch, status: "success" as const };
      const [success, toSettle] = await q.together(
        () => [batches.markSuccess(q, batch.txId, lastConfirmed, ended), paid ? payments.forBatch(batch.txId, q) : Promise.resolve(undefined)] as const,
      );
      if (!success) return false;
      const outcome = await method?.onConfirmed?.(q, {
        txId: batch.txId,
        chain,
        method: batch.method,
        signer: batch.signer,
        apiKeyId: batch.apiKeyId,
        executionMode: batch.executionMode,
        payer,
        record: batch.plan,
        receipts,
      });
      if (outcome) {
        await batches.setOutcome(q, batch.txId, outcome);
        batch.outcome = outcome;
      }
      // A payment settled inside the last transaction is settled with the batch's end: one commit, no trip of its own.
      const settledHere = paid && toSettle && paid.settleWithinFinish ? await paid.settleWithinFinish(q, batch, receipts[receipts.length - 1], toSettle) : [];
      return { toSettle, settledHere };
    });
  }

  /**
   * A confirmed batch whose method refused to record it (it lost a race: RecordsRefused): it ends rejected with the
   * reason, its transactions confirmed, nothing recorded, its credit back. A payment of a batch without a key is settled
   * as for a success: the operation ran on chain.
   */
  private async refuseRecords(batch: Batch, receipts: TransactionReceipt[], lastConfirmed: Confirmation | undefined, reason: string): Promise<void> {
    const { batches, credits, db } = this.services;
    if (!(await batches.rejectConfirmed(batch.txId, lastConfirmed, reason))) return;
    this.log.warn({ txId: batch.txId, method: batch.method, reason }, "batch confirmed on chain but not recorded: it lost a race; rejected");
    await db.transaction((q) => credits.refund(q, batch.txId));
    if (!batch.apiKeyId && this.settlement) await this.settlement.settleForBatch(batch.txId, receipts);
  }
}

/** The hash of signed raw bytes (what the chain will call the transaction). */
export function hashOfRaw(signedRaw: string): string {
  return keccak256(signedRaw);
}

/** Mirrors a row this run just wrote into its copy of the batch. */
function update(batch: Batch, index: number, patch: Partial<BatchTransaction>): void {
  batch.transactions[index] = { ...batch.transactions[index], ...patch };
}
