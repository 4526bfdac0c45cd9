import { keccak256, type TransactionReceipt } from "ethers";
import { sendRaw } from "../chains/broadcast";
import type { Chain } from "../chains/registry";
import { errorFacts, type Logger } from "../logger";
import type { MethodDefinition } from "../methods/types";
import type { Services } from "../services";
import type { Batch, BatchTransaction } from "./types";

/** How often a reported hash with no receipt is looked up (is the node aware of it, was its nonce used?). */
const UNSEEN_CHECK_MS = 2_000;
/** Between blocks a waiting transaction's receipt is looked up at least this often (a lagging or load-balanced node). */
const RECHECK_MS = 2_000;
const NONCE_USED = /nonce too low|nonce has already been used|NONCE_EXPIRED|already been used/i;
/** A broadcast transaction the node forgot (dropped from its pool) is sent again this often, same bytes, same hash. */
const REBROADCAST_MS = 30_000;

/** Signs a service-relayed transaction right before its broadcast (the relayer). Absent for client-signed batches. */
export type RelaySigner = (batch: Batch, tx: BatchTransaction, options?: { replacing?: string; data?: string }) => Promise<{ signedRaw: string; txHash: string }>;

/**
 * Drives sending batches to an end: broadcast each transaction in order, wait until it is confirmed, and only then
 * the next; stop at the first revert or refusal. Every step is read from and written to the store first, so a batch
 * interrupted by a crash resumes where it stopped: re-sending the same signed bytes can never send anything twice.
 */
export class BatchRunner {
  private readonly active = new Map<string, Promise<Batch | undefined>>();
  private sweeper?: NodeJS.Timeout;
  private stopped = false;
  /** Resolves on stop(): block waits end at once, so a shutdown never waits out a block interval. */
  private stopping!: () => void;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopping = resolve));
  relaySigner?: RelaySigner;

  constructor(
    private readonly services: Services,
    private readonly methods: (name: string) => MethodDefinition | undefined,
    private readonly log: Logger,
  ) {}

  /**
   * Runs (or joins the run of) one batch in this process. `sending` is the batch as its send just stored it (status
   * sending), which spares reading it back. Resolves with the batch as the run left it (what the store now holds), or
   * undefined when the run did not end it here.
   */
  run(txId: string, sending?: Batch): Promise<Batch | undefined> {
    const running = this.active.get(txId);
    if (running) return running;
    const run = this.drive(txId, sending)
      .catch((error) => {
        this.log.error({ txId, err: errorFacts(error) }, "batch run failed; it will be resumed");
        return undefined;
      })
      .finally(() => this.active.delete(txId));
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

  /** Resumes every batch left mid-flight (after a restart), and keeps doing so periodically. */
  async resumeAll(): Promise<number> {
    const inFlight = await this.services.batches.inFlight();
    for (const txId of inFlight) void this.run(txId);
    return inFlight.length;
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

  private async drive(txId: string, sending?: Batch): Promise<Batch | undefined> {
    const { batches, chains, config } = this.services;
    const stored = sending ?? (await batches.get(txId));
    if (!stored || stored.status !== "sending") return undefined;
    // Our own copy, kept equal to the rows as this run writes them (see `update`).
    const batch: Batch = { ...stored, transactions: [...stored.transactions] };
    const chain = chains.find(batch.chainId);
    if (!chain) throw new Error(`chain ${batch.chainId} of batch ${txId} is not served`);
    const receipts: TransactionReceipt[] = [];
    // The last transaction's confirmation is written with the batch's end (one database transaction fewer).
    let lastConfirmed: { index: number; blockNumber: number; gasUsed: bigint } | undefined;

    for (const tx of batch.transactions) {
      if (this.stopped) return undefined;
      if (tx.status === "reverted" || tx.status === "refused" || tx.status === "unseen") return batch;
      let current = tx;
      if (current.status === "prepared") {
        if (!this.relaySigner || batch.executionMode !== "service-relayed") throw new Error(`transaction ${tx.index} of ${txId} was never signed`);
        const method = this.methods(batch.method);
        const payer = method?.bindRelayed ? await this.payerOf(batch) : undefined;
        const data = method?.bindRelayed && payer ? await method.bindRelayed(this.services, batch, current.index, payer) : undefined;
        const signed = await this.relaySigner(batch, current, { data });
        current = { ...current, ...signed, status: "signed" };
      }
      const receipt = await this.untilMined(batch, chain, current);
      if (!receipt) return this.stopped ? undefined : this.ended(batch); // refused, mismatched, or timed out (left for the sweeper)
      if (receipt.status !== 1) {
        await this.reject(batch, current, "reverted", `transaction ${current.index + 1} reverted on-chain`, receipt);
        this.log.warn({ txId, index: current.index, hash: receipt.hash }, "transaction reverted; batch rejected");
        return this.ended(batch);
      }
      if (!(await this.untilConfirmed(chain, receipt, config.CONFIRMATIONS))) return undefined;
      if (batch.transactions[current.index].status !== "confirmed") {
        const confirmed = { index: current.index, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed };
        if (current.index === batch.transactions.length - 1) lastConfirmed = confirmed;
        else await batches.setTxConfirmed(txId, confirmed.index, confirmed.blockNumber, confirmed.gasUsed);
        const broadcastAt = batch.transactions[current.index].broadcastAt ?? new Date().toISOString();
        update(batch, current.index, { status: "confirmed", blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed.toString(), broadcastAt });
      }
      receipts.push(receipt);
    }

    return (await this.finish(batch, chain, receipts, lastConfirmed)) ? this.ended(batch) : batches.get(txId);
  }

  /**
   * The batch as this run left it. A relayed batch is read back: its relayer re-prices and may re-number its
   * transactions when it signs them.
   */
  private async ended(batch: Batch): Promise<Batch | undefined> {
    return batch.executionMode === "service-relayed" ? this.services.batches.get(batch.txId) : batch;
  }

  /**
   * Broadcasts if needed and waits for the receipt, looking again at every new block of the chain (its shared
   * watcher). Undefined when the batch ended (refused) or the wait timed out.
   */
  private async untilMined(batch: Batch, chain: Chain, tx: BatchTransaction, resigned = 0): Promise<TransactionReceipt | undefined> {
    const { batches, config } = this.services;
    const hash = tx.txHash!;
    const deadline = Date.now() + config.RECEIPT_TIMEOUT_MS;
    let lastBroadcast = 0;
    let lastSeenCheck = 0;
    let nonceTakenSeen = 0;
    while (!this.stopped) {
      const head = chain.blocks.head; // read before looking: a block landing meanwhile still wakes the wait below
      // Signed bytes this run has not broadcast yet are sent before anything is looked up (a copy the node has, or
      // one mined before a crash, is recognised by sendRaw); a hash in flight is looked up first.
      const freshBytes = tx.status === "signed" && lastBroadcast === 0;
      const receipt = freshBytes ? null : await chain.provider.getTransactionReceipt(hash);
      if (!receipt && !tx.signedRaw && Date.now() - lastSeenCheck >= UNSEEN_CHECK_MS) {
        // A reported hash the service has no bytes for: it may never appear (a typo, a dropped or replaced transaction).
        lastSeenCheck = Date.now();
        const verdict = await this.unseenVerdict(chain, tx, nonceTakenSeen);
        if (verdict === "nonce taken once") nonceTakenSeen++;
        else if (verdict) {
          await this.reject(batch, tx, "unseen", verdict);
          this.log.warn({ txId: batch.txId, index: tx.index, hash }, "reported transaction never appeared; batch rejected");
          return undefined;
        }
      }
      if (receipt) {
        chain.blocks.observe(receipt.blockNumber);
        if (tx.status === "broadcast" && !tx.signedRaw) {
          const mismatch = await this.checkReportedTransaction(chain, batch, tx);
          if (mismatch) {
            await this.reject(batch, tx, "refused", mismatch);
            return undefined;
          }
        }
        return receipt;
      }
      if (tx.signedRaw && Date.now() - lastBroadcast >= REBROADCAST_MS) {
        const known = tx.status === "broadcast" && lastBroadcast === 0 ? await chain.provider.getTransaction(hash) : null;
        if (!known) {
          const refusal = await sendRaw(chain.provider, tx.signedRaw, hash);
          if (refusal && batch.executionMode === "service-relayed" && NONCE_USED.test(refusal) && resigned < 3 && this.relaySigner) {
            // Someone else used the relayer's nonce: take a fresh one and sign again (the old bytes can never be mined).
            resigned++;
            await this.services.relayer.syncNonces();
            tx = { ...tx, ...(await this.relaySigner(batch, tx, { replacing: hash })), status: "signed" };
            return this.untilMined(batch, chain, tx, resigned);
          }
          if (refusal) {
            await this.reject(batch, tx, "refused", refusal);
            this.log.warn({ txId: batch.txId, index: tx.index, refusal }, "node refused the transaction; batch rejected");
            return undefined;
          }
        }
        lastBroadcast = Date.now();
        if (freshBytes) continue; // a chain that mines at once has the receipt already (confirmed is then written at once)
      }
      // A reported hash has its own bound (the unseen verdict above); only transactions with bytes wait for the sweeper.
      if (tx.signedRaw && Date.now() > deadline) {
        this.log.warn({ txId: batch.txId, index: tx.index, hash }, "no receipt yet; batch stays pending");
        return undefined;
      }
      if (tx.status === "signed" && lastBroadcast > 0) {
        await batches.setTxBroadcast(batch.txId, tx.index);
        tx = { ...tx, status: "broadcast", broadcastAt: tx.broadcastAt ?? new Date().toISOString() };
        update(batch, tx.index, { status: "broadcast", broadcastAt: tx.broadcastAt });
      }
      await Promise.race([chain.blocks.next(head, RECHECK_MS), this.stopSignal]);
    }
    return undefined;
  }

  /**
   * Why a reported hash will never be mined, or undefined while it still may be: its nonce went to another transaction
   * (seen on two checks in a row, so a lagging node does not decide it), or it stayed unknown for RECEIPT_TIMEOUT_MS.
   * "nonce taken once" after the first such check.
   */
  private async unseenVerdict(chain: Chain, tx: BatchTransaction, nonceTakenSeen: number): Promise<string | undefined> {
    const hash = tx.txHash!;
    if (await chain.provider.getTransaction(hash)) return undefined;
    const { from, nonce } = tx.unsigned;
    if ((await chain.provider.getTransactionCount(from, "latest")) > nonce) {
      if (nonceTakenSeen === 0) return "nonce taken once";
      return `reported hash ${hash} is not on chain ${chain.chainId} and nonce ${nonce} of ${from} was used by another transaction; report the right hash for this txId`;
    }
    const since = tx.broadcastAt ? Date.parse(tx.broadcastAt) : Date.now();
    const timeout = this.services.config.RECEIPT_TIMEOUT_MS;
    if (Date.now() - since >= timeout) {
      return `reported hash ${hash} did not appear on chain ${chain.chainId} within ${Math.round(timeout / 1000)} s; report the right hash for this txId`;
    }
    return undefined;
  }

  /** A client-reported hash must be the prepared transaction: same sender, target, data, value and nonce. */
  private async checkReportedTransaction(chain: Chain, batch: Batch, tx: BatchTransaction): Promise<string | undefined> {
    const onChain = await chain.provider.getTransaction(tx.txHash!);
    if (!onChain) return undefined;
    const p = tx.unsigned;
    const same =
      onChain.from.toLowerCase() === p.from.toLowerCase() &&
      (onChain.to ?? "").toLowerCase() === p.to.toLowerCase() &&
      onChain.data.toLowerCase() === p.data.toLowerCase() &&
      onChain.nonce === p.nonce &&
      onChain.value === BigInt(p.value);
    return same ? undefined : `reported hash ${tx.txHash} is not transaction ${tx.index + 1} of batch ${batch.txId}`;
  }

  /** Waits until the receipt's block has `confirmations` blocks on top of it, counting itself; false when stopped. */
  private async untilConfirmed(chain: Chain, receipt: TransactionReceipt, confirmations: number): Promise<boolean> {
    const target = receipt.blockNumber + confirmations - 1;
    while (!this.stopped && chain.blocks.head < target) await Promise.race([chain.blocks.reach(target, RECHECK_MS), this.stopSignal]);
    return !this.stopped;
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
    if (relayed && status === "refused") await this.services.relayer.onRefused(this.services.chains.find(batch.chainId)!, tx);
    if (relayed || (tx.index === 0 && status !== "reverted")) {
      await this.services.db.transaction((q) => this.services.credits.refund(q, batch.txId));
    }
    await this.services.x402?.releaseForBatch(batch.txId, `the operation failed: ${error}`);
  }

  /** The wallet whose x402 payment pays for a batch: its send payment's payer, else its prepare payment's. */
  private async payerOf(batch: Batch): Promise<string | undefined> {
    if (batch.apiKeyId) return undefined;
    const payments = await this.services.payments.forBatch(batch.txId);
    const paid = payments.filter((p) => p.status !== "released");
    return (paid.find((p) => p.subject.startsWith("send:")) ?? paid[0])?.payer;
  }

  /**
   * Records what the receipts prove and marks the batch successful, atomically and at most once. False when another
   * runner (or instance) finished it.
   */
  private async finish(batch: Batch, chain: Chain, receipts: TransactionReceipt[], lastConfirmed?: { index: number; blockNumber: number; gasUsed: bigint }): Promise<boolean> {
    const method = this.methods(batch.method);
    const payer = await this.payerOf(batch);
    const marked = await this.services.db.transaction(async (q) => {
      const { batches } = this.services;
      // Ended first: the row lock makes a second finisher (another runner or instance) find it ended and write nothing.
      if (!(await batches.markSuccess(q, batch.txId, lastConfirmed))) return false;
      const outcome = await method?.onConfirmed?.(q, {
        services: this.services,
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
      return true;
    });
    if (!marked) return false;
    batch.status = "success";
    this.log.info({ txId: batch.txId, method: batch.method }, "batch confirmed");
    // A batch prepared under a key is never paid with x402 (access/gate.ts admitSend): nothing to settle or look up.
    if (!batch.apiKeyId) await this.services.x402?.settleForBatch(batch.txId);
    return true;
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
