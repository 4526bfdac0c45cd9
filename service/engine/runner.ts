import type { TransactionReceipt } from "ethers";
import type { Chain } from "../chains/registry";
import type { WatchedBlock } from "../chains/reorg-watch";
import { isChainUnavailable } from "../chains/rpc-errors";
import { errorFacts, type Logger } from "../logger";
import type { RunPayments } from "../payments/run-payments";
import type { PaymentRecord } from "../store/payments";
import { untilConfirmed } from "../chains/confirmations";
import { TransactionTracker, type TrackerDeps } from "./tracker";
import type { Batch, BatchTransaction } from "../model/batch";
import { FirstBroadcast } from "./runner-broadcast";
import { BatchEnding, revertCause } from "./runner-ending";
import type { BatchRun, Confirmation, RelaySigner, RunnerDeps, RunnerWiring } from "./runner-ports";

/** A run that could not reach its chain tries again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * Drives sending batches to an end: broadcast each transaction in order, wait until it is confirmed on the canonical
 * chain, and only then the next; stop at the first revert or refusal. Every step is read from and written to the
 * store first, so a batch interrupted by a crash resumes where it stopped: re-sending the same signed bytes can never
 * send anything twice. A chain that cannot be reached pauses the run (it ends only a relayed batch nothing of which
 * was signed, after CHAIN_UNREACHABLE_GIVE_UP_MS: abandonIfUnreachable). Confirmed transactions stay
 * watched for deeper reorgs (chains/reorg-watch.ts): one taken off the chain is sent again.
 */
export class BatchRunner {
  private readonly active = new Map<string, Promise<Batch | undefined>>();
  /** The runs under way in this process, by txId: each one's state in one object. */
  private readonly runs = new Map<string, BatchRun>();
  /** Trackers of transactions waiting to be mined, by "<txId>:<index>" (a client's replacement tells them). */
  private readonly waiting = new Map<string, TransactionTracker>();
  private sweeper?: NodeJS.Timeout;
  private stopped = false;
  /** Resolves on stop(): block waits end at once, so a shutdown never waits out a block interval. */
  private stopping!: () => void;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopping = resolve));
  private readonly stop$ = { stopped: () => this.stopped, signal: this.stopSignal };

  private readonly payments: RunPayments;
  private readonly relaySigner: RelaySigner;
  private readonly onReorged: (txId: string) => void;
  private readonly ending: BatchEnding;
  private readonly broadcast: FirstBroadcast;

  constructor(
    private readonly services: RunnerDeps,
    wiring: RunnerWiring,
    private readonly log: Logger,
  ) {
    this.payments = wiring.payments;
    this.relaySigner = wiring.relaySigner;
    this.onReorged = wiring.onReorged;
    this.ending = new BatchEnding(services, wiring.methods, wiring.payments, log);
    this.broadcast = new FirstBroadcast(services, wiring.methods, wiring.payments, wiring.relaySigner, this.stop$, log);
    for (const chain of services.chains.list())
      chain.reorgWatch.onReorg = (entry) => void this.afterDeepReorg(chain, entry);
  }

  /**
   * Runs (or joins the run of) one batch in this process. `sending` is the batch as its send just stored it (status
   * sending), which spares reading it back; `payment`, the payment the send reserved for it. Resolves with the batch
   * as the run left it (what the store now holds), or undefined when the run did not end it here. Its payments hear
   * of its end (RunPayments.afterRun) before it resolves.
   */
  run(txId: string, sending?: Batch, payment?: PaymentRecord): Promise<Batch | undefined> {
    const running = this.active.get(txId);
    if (running) return running;
    const run: BatchRun = { txId, reorged: false };
    this.runs.set(txId, run);
    const ran = this.driveThroughOutages(run, sending, payment)
      .then(async (ended) => {
        if (run.end) await this.payments.afterRun(run.end);
        return ended;
      })
      .catch((error) => {
        this.log.error({ txId, err: errorFacts(error) }, "batch run failed; it will be resumed");
        return undefined;
      })
      .finally(() => {
        this.active.delete(txId);
        this.runs.delete(txId);
      });
    this.active.set(txId, ran);
    return ran;
  }

  /** Resolves when the batch's run ends (with its ended batch, see run) or after `ms` (undefined), whichever is first. */
  async waitFor(txId: string, ms: number): Promise<Batch | undefined> {
    const run = this.active.get(txId);
    if (!run) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      run,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
    ]);
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

  /** Transactions replaced before their run got to them (what their run holds of them is stale). */
  private readonly replacedAhead = new Set<string>();

  /** A reorg changed a batch's rows: its run under way, if any, reads them back at the end. */
  private reorgedDuringRun(txId: string): void {
    const run = this.runs.get(txId);
    if (run) run.reorged = true;
  }

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
      for (const t of await this.services.batchTransactions.recentlyConfirmed(
        chain.chainId,
        head - this.services.config.REORG_WATCH_BLOCKS,
      )) {
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

  /**
   * drive, again after a pause whenever the chain could not be reached (nothing it did is lost: it is all stored). A
   * relayed batch nothing of which was signed is abandoned once its chain has not answered for
   * CHAIN_UNREACHABLE_GIVE_UP_MS (runner-ending.ts abandonUnsent: a failure of ours); anything signed waits for its chain.
   */
  private async driveThroughOutages(
    run: BatchRun,
    sending?: Batch,
    sendPayment?: PaymentRecord,
  ): Promise<Batch | undefined> {
    const { txId } = run;
    let outageSince: number | undefined;
    for (let pause = RETRY_START_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      try {
        return await this.drive(run, sending, sendPayment);
      } catch (error) {
        if (this.stopped || !isChainUnavailable(error)) throw error;
        outageSince ??= Date.now();
        const abandoned = await this.abandonIfUnreachable(run, outageSince);
        if (abandoned) return abandoned;
        this.log.warn(
          { txId, err: errorFacts(error), retryInMs: pause },
          "chain not reachable; the batch waits and goes on",
        );
        sending = sendPayment = undefined; // read back what the run stored
        await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stopSignal]);
        if (this.stopped) return undefined;
      }
    }
  }

  /** A relayed batch whose chain has not answered since `since` for longer than the bound: abandoned when nothing was sent. */
  private async abandonIfUnreachable(run: BatchRun, since: number): Promise<Batch | undefined> {
    const waited = Date.now() - since;
    if (waited < this.services.config.CHAIN_UNREACHABLE_GIVE_UP_MS) return undefined;
    const batch = await this.services.batches.get(run.txId);
    if (batch?.status !== "sending" || batch.executionMode !== "service-relayed") return undefined;
    const reason = `chain ${batch.chainId} did not answer for ${Math.round(waited / 1000)} s before anything was sent; nothing was sent`;
    return this.ending.abandonUnsent(run, batch, reason);
  }

  /**
   * One attempt at the batch's run. `sending` and `sendPayment`: the batch as its send stored it and the payment the send
   * reserved for it. A service-relayed batch has no other payment (its prepare is free, and a subject is paid once), so
   * that one is all of its payments, handed to them before the first broadcast instead of read back.
   */
  private async drive(run: BatchRun, sending?: Batch, sendPayment?: PaymentRecord): Promise<Batch | undefined> {
    const { txId } = run;
    const { batches, chains } = this.services;
    // The batch as the store last answered: what markSending (or a read) returned, then each transaction as its last
    // write returned it. The run writes through the store and keeps the answers; it never patches a row itself.
    let batch = sending ?? (await batches.get(txId));
    if (!batch || batch.status !== "sending") return undefined;
    const chain = chains.find(batch.chainId);
    if (!chain) throw new Error(`chain ${batch.chainId} of batch ${txId} is not served`);
    const receipts: TransactionReceipt[] = [];
    // The last transaction's confirmation is written with the batch's end (one database transaction fewer).
    let lastConfirmed: Confirmation | undefined;
    const paid = await this.broadcast.payFirst(run, batch, sendPayment);
    if (paid === "stopped") return undefined;
    if ("refused" in paid) return this.ending.refused(run, batch, paid);

    for (let index = 0; index < batch.transactions.length; index++) {
      const tx: BatchTransaction = batch.transactions[index];
      if (this.stopped) return undefined;
      if (tx.status === "reverted" || tx.status === "refused" || tx.status === "unseen") return batch;
      const signed =
        tx.status === "prepared"
          ? await this.broadcast.signRelayed(run, batch, tx, paid.carried)
          : { current: await this.latest(batch, tx), acceptedAt: undefined, receipt: undefined };
      if (signed === "ended") return batches.get(txId); // ended by another runner
      if (signed === "stopped") return undefined; // resumed by the next start
      if ("refused" in signed) return this.ending.refused(run, batch, signed);
      const { current, acceptedAt, receipt: asked } = signed;
      const outcome = await this.untilConfirmedOnChain(batch, chain, current, acceptedAt, asked);
      if (outcome.kind === "stopped" || outcome.kind === "timeout") return undefined; // resumed later
      if (outcome.kind === "ended")
        return this.ending.reject(
          run,
          batch,
          outcome.tx,
          outcome.status,
          outcome.error,
          outcome.receipt,
          outcome.cause,
        );
      const { receipt } = outcome;
      if (receipt.status !== 1) {
        this.log.warn({ txId, index: current.index, hash: receipt.hash }, "transaction reverted; batch rejected");
        const error = `transaction ${current.index + 1} reverted on-chain`;
        return this.ending.reject(
          run,
          batch,
          outcome.tx,
          "reverted",
          error,
          receipt,
          revertCause(batch, outcome.tx, receipt),
        );
      }
      const written = await this.confirmed(batch, outcome.tx, receipt);
      batch = written.batch;
      lastConfirmed = written.last ?? lastConfirmed;
      this.watchForDeepReorg(chain, txId, current.index, receipt);
      receipts.push(receipt);
    }

    // The batch as the statement that ended it returned it: no read-back for an end.
    return (await this.ending.finish(run, batch, chain, receipts, lastConfirmed, run.payer)) ?? batches.get(txId);
  }

  /**
   * A transaction confirmed: stored so at once, unless it is the batch's last (its confirmation is written with the
   * batch's end, one database transaction fewer: answered as `last`, for finish). Answers the batch with the
   * transaction as the store returned it (the last one: as its tracker's last write returned it). Nothing written when
   * it was confirmed already.
   */
  private async confirmed(
    batch: Batch,
    tx: BatchTransaction,
    receipt: TransactionReceipt,
  ): Promise<{ batch: Batch; last?: Confirmation }> {
    if (batch.transactions[tx.index].status === "confirmed") return { batch };
    const confirmed: Confirmation = {
      index: tx.index,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      gasUsed: receipt.gasUsed,
    };
    if (tx.index === batch.transactions.length - 1) return { batch: withTransaction(batch, tx), last: confirmed };
    const { batchTransactions } = this.services;
    const stored =
      (await batchTransactions.setTxConfirmed(
        batch.txId,
        tx.index,
        receipt.blockNumber,
        receipt.gasUsed,
        receipt.blockHash,
      )) ?? (await batchTransactions.transaction(batch.txId, tx.index)); // confirmed by another runner first
    if (!stored) throw new Error(`transaction ${tx.index} of ${batch.txId} is not stored`);
    return { batch: withTransaction(batch, stored) };
  }

  /** A transaction as its run last had it returned, or what is stored when it was replaced meanwhile. */
  private async latest(batch: Batch, tx: BatchTransaction): Promise<BatchTransaction> {
    if (!this.replacedAhead.delete(`${batch.txId}:${tx.index}`)) return tx;
    return (await this.services.batchTransactions.transaction(batch.txId, tx.index)) ?? tx;
  }

  /**
   * Mined, then confirmed on the canonical chain: a reorg that takes the transaction away before its confirmations
   * sends it back to be mined again (its bytes are broadcast again if the node lost them).
   */
  private async untilConfirmedOnChain(
    batch: Batch,
    chain: Chain,
    tx: BatchTransaction,
    acceptedAt?: number,
    receipt?: Promise<TransactionReceipt | null>,
  ) {
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
        this.reorgedDuringRun(batch.txId);
        await this.services.batchTransactions.markReorged(batch.txId, tx.index, false, confirmed.blockNumber);
        this.log.warn(
          { txId: batch.txId, index: tx.index, hash: mined.receipt.hash, blockNumber: confirmed.blockNumber },
          "reorg took the transaction off the chain before its confirmations; waiting for it again",
        );
      }
    } finally {
      if (this.waiting.get(key) === tracker) this.waiting.delete(key);
    }
  }

  private trackerDeps(batch: Batch, chain: Chain): TrackerDeps {
    const relayed = batch.executionMode === "service-relayed";
    const { relayer, batchTransactions, config } = this.services;
    return {
      batchTransactions,
      config,
      log: this.log,
      stop: this.stop$,
      ...(relayed
        ? {
            resign: async (tx: BatchTransaction) => {
              // Someone else used the relayer's nonce: take a fresh one and sign again (the old bytes can never be mined),
              // with the payment the first bytes carried, if any.
              await relayer.syncNonces();
              const settle =
                tx.index === batch.transactions.length - 1
                  ? await this.payments.boundSettlement(batch.txId)
                  : undefined;
              const signature = await this.relaySigner(batch, tx, {
                replacing: tx.txHash!,
                data: tx.unsigned.data,
                settle,
              });
              return signature.stored ?? (await batchTransactions.transaction(batch.txId, tx.index))!;
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
      const txId = await this.payments.afterSettlementReorg(paymentId);
      if (txId) this.onReorged(txId);
      return;
    }
    const [txId, index] = [
      entry.key.slice(0, entry.key.lastIndexOf(":")),
      Number(entry.key.slice(entry.key.lastIndexOf(":") + 1)),
    ];
    this.log.error(
      { txId, index, chainId: chain.chainId, blockNumber: entry.blockNumber, blockHash: entry.blockHash },
      "reorg deeper than the confirmations took a confirmed transaction off the chain; sending it again",
    );
    this.reorgedDuringRun(txId);
    await this.services.batchTransactions
      .markReorged(txId, index, true, entry.blockNumber)
      .catch((error) => this.log.error({ txId, err: errorFacts(error) }, "could not record the reorg"));
    await this.payments
      .afterOperationReorg(txId)
      .catch((error) => this.log.error({ txId, err: errorFacts(error) }, "could not record the reorg of a payment"));
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
          await this.services.batchTransactions.markBackOnChain(txId, index, outcome.receipt);
          this.onReorged(txId);
          this.watchForDeepReorg(chain, txId, index, outcome.receipt);
          if (outcome.receipt.status !== 1)
            this.log.error(
              { txId, index, hash: outcome.receipt.hash },
              "transaction taken off the chain by a reorg reverted when it was mined again",
            );
          else
            this.log.info(
              { txId, index, hash: outcome.receipt.hash },
              "transaction taken off the chain by a reorg is back on chain",
            );
          // A payment settled in it follows its fate (settled again, or released if it reverted this time).
          await this.payments.afterBackOnChain(txId);
          return undefined;
        } catch (error) {
          if (!isChainUnavailable(error))
            this.log.error(
              { txId, index, err: errorFacts(error) },
              "could not bring a reorged transaction back; trying again",
            );
          await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stopSignal]);
        }
      }
      return undefined;
    })().finally(() => this.active.delete(key));
    this.active.set(key, run);
  }
}

/** `batch` with one of its transactions as the store returned it. */
function withTransaction(batch: Batch, tx: BatchTransaction): Batch {
  return { ...batch, transactions: batch.transactions.map((t) => (t.index === tx.index ? tx : t)) };
}
