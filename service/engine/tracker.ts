import type { TransactionReceipt } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import type { Chain } from "../chains/registry";
import type { BroadcastVerdict } from "../chains/rpc-errors";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { BatchTransactions } from "../store/batch-transactions";
import { feeCapWei, replacementFees, type Fees } from "../chains/fee-bump";
import type { Batch, BatchTransaction } from "../model/batch";
import { PaymentNotCarried, WouldRevert } from "./relayer";
import type { FailureCause as Cause } from "./runner-ports";
import { feesOf, isNoOp, reportedMismatch } from "./transaction-facts";

/** How often a reported hash with no receipt is looked up (is the node aware of it, was its nonce used?). */
const UNSEEN_CHECK_MS = 2_000;
/** Between blocks a waiting transaction's receipt is looked up at least this often (a lagging or load-balanced node). */
export const RECHECK_MS = 2_000;
/** A transaction the node forgot (dropped from its pool) is sent again, same bytes, at most this often. */
const REBROADCAST_MIN_MS = 1_000;
/** Another party (a client's replacement, another instance's fee bump) may have replaced it: re-read it this often. */
const RELOAD_MS = 5_000;
/** A relayed transaction is bumped at most this often, however fast blocks come (instant chains). */
const MIN_BUMP_INTERVAL_MS = 1_000;

/** A look-up of a transaction's receipts under way, for the hash it had when it was asked. */
interface ReceiptsAsked {
  current: string;
  receipts: Promise<(TransactionReceipt | null)[]>;
}

export type MinedOutcome =
  | { kind: "mined"; receipt: TransactionReceipt; tx: BatchTransaction }
  /**
   * The batch ends at this transaction: refused by the node, a reported hash that never appeared, or a relayed one the
   * operator cancelled (a no-op took its nonce: the operation never ran, as if it had reverted). `cause`: whose
   * failure it is (runner-ports.ts FailureCause; a failure of ours owes the payment back).
   */
  | {
      kind: "ended";
      status: "refused" | "unseen" | "reverted";
      error: string;
      tx: BatchTransaction;
      cause: Cause;
      /** The mined cancellation's receipt (its block is the transaction's). */
      receipt?: TransactionReceipt;
    }
  /** No receipt within RECEIPT_TIMEOUT_MS: the batch stays pending (resumed by the sweeper). */
  | { kind: "timeout" }
  | { kind: "stopped" };

/** What the tracker needs from the rest of the engine. */
export interface TrackerDeps {
  batchTransactions: BatchTransactions;
  config: Config;
  log: Logger;
  stop: { stopped: () => boolean; signal: Promise<void> };
  /** Relayed transactions: sign again with a fresh nonce (someone else used ours). */
  resign?: (tx: BatchTransaction) => Promise<BatchTransaction>;
  /** Relayed transactions: sign the same nonce with higher fees, store it, broadcast it. Undefined: someone was first. */
  replace?: (
    tx: BatchTransaction,
    fees: Fees,
  ) => Promise<{ tx: BatchTransaction; verdict: BroadcastVerdict } | undefined>;
  /** Relayed transactions: a nonce below this one is missing on chain; fill or rewind it (throttled by the relayer). */
  healNonces?: () => Promise<void>;
}

/**
 * Gets one transaction of a batch mined, as the best relayers do on public networks: its bytes are broadcast before
 * anything is looked up; every hash sent for it is watched and whichever is mined wins; a transaction the node
 * forgot is sent again within a block or two; a relayed one that is not mined after RELAYER_BUMP_AFTER_BLOCKS, or
 * whose fee cap fell below the base fee, is replaced with higher fees (up to RELAYER_MAX_FEE_GWEI); a client-signed one
 * below the base fee says why it waits and which fees would be mined now. A passing RPC failure changes nothing: it
 * is retried at the next block, never taken as a verdict.
 */
export class TransactionTracker {
  private lastBroadcast = 0;
  private lastSeenCheck = 0;
  private lastReload = Date.now();
  private lastBump = 0;
  /** The fees of the bytes last looked at (parsing signed bytes is most of a look at a pending transaction). */
  private feesSeen?: { signedRaw: string; fees: Fees };
  /** The head when the current bytes were last sent (fee bumps count blocks from there). */
  private sentAtHead = -1;
  private nonceTakenSeen = 0;
  private resigned = 0;

  /** A receipt look-up made with the relayer's broadcast, used by the first look. */
  private asked?: ReceiptsAsked;

  /**
   * `acceptedAt`: the node took these bytes then (the relayer broadcast them): they are looked up, not sent again;
   * `receipt`: their receipt, asked for with that broadcast.
   */
  constructor(
    private readonly deps: TrackerDeps,
    private readonly batch: Batch,
    private readonly chain: Chain,
    private tx: BatchTransaction,
    acceptedAt?: number,
    receipt?: Promise<TransactionReceipt | null>,
  ) {
    if (acceptedAt) {
      this.lastBroadcast = acceptedAt;
      this.sentAtHead = chain.blocks.head;
      if (receipt && tx.txHash) this.asked = { current: tx.txHash, receipts: receipt.then((r) => [r]) };
    }
  }

  get current(): BatchTransaction {
    return this.tx;
  }

  /** Someone replaced the transaction (a client's replacement through the API): use what is stored now. */
  async reload(): Promise<void> {
    const stored = await this.deps.batchTransactions.transaction(this.batch.txId, this.tx.index);
    this.lastReload = Date.now();
    if (stored && stored.txHash !== this.tx.txHash) {
      this.tx = stored;
      this.lastBroadcast = 0; // new bytes: sent at once by whoever stored them, and again here if the node lacks them
    }
  }

  async untilMined(): Promise<MinedOutcome> {
    const deadline = Date.now() + this.deps.config.RECEIPT_TIMEOUT_MS;
    while (!this.deps.stop.stopped()) {
      const head = this.chain.blocks.head; // read before looking: a block landing meanwhile still wakes the wait below
      // Signed bytes this run has not broadcast yet are sent before anything is looked up (a copy the node has, or one
      // mined before a crash, is recognised as accepted); a hash in flight is looked up first.
      const freshBytes = !!this.tx.signedRaw && this.tx.status === "signed" && this.lastBroadcast === 0;
      let asked = this.asked;
      this.asked = undefined;
      if (freshBytes) {
        // The receipt is asked for together with the broadcast: both calls travel in one JSON-RPC batch, which the node
        // answers in order, so a chain that mines at once answers with it (one round trip, not two). A passing failure of
        // that look-up is no verdict: it is looked up again below.
        const sending = this.send(head);
        asked = this.askReceipts();
        const ended = await sending;
        if (ended) return ended;
      }
      // A node may answer the batched look-up before it has mined the bytes it was sent with (Hardhat runs a batch's
      // calls concurrently): fresh bytes are looked up once more before their broadcast is recorded, so a chain that
      // mines at once costs a second look, not a store write and a look.
      const mined = (await this.findReceipt(asked)) ?? (freshBytes ? await this.findReceipt() : undefined);
      if (mined) return mined;
      const ended = this.tx.signedRaw ? await this.keepMoving(head) : await this.checkReported();
      if (ended) return ended;
      // A reported hash has its own bound (the unseen verdict); only transactions with bytes wait for the sweeper.
      if (this.tx.signedRaw && Date.now() > deadline) {
        this.deps.log.warn(
          { txId: this.batch.txId, index: this.tx.index, hash: this.tx.txHash },
          "no receipt yet; batch stays pending",
        );
        return { kind: "timeout" };
      }
      if (this.tx.status === "signed" && this.lastBroadcast > 0) await this.markBroadcast();
      if (freshBytes) continue; // a chain that mines at once has the receipt already
      await Promise.race([this.chain.blocks.next(head, RECHECK_MS), this.deps.stop.signal]);
    }
    return { kind: "stopped" };
  }

  /** The receipts of every hash sent for this transaction (the current one, and those it replaced), asked for now. */
  private askReceipts(): ReceiptsAsked {
    const hashes = [this.tx.txHash!, ...(this.tx.replaced ?? []).map((r) => r.hash)];
    const receipts = Promise.all(hashes.map((h) => this.chain.provider.getTransactionReceipt(h)));
    receipts.catch(() => undefined); // awaited (or dropped) by findReceipt
    return { current: this.tx.txHash!, receipts };
  }

  /**
   * The receipt of whichever hash sent for this transaction was mined (the current one, or one it replaced). `asked`
   * is a look-up already under way; it is used when it found a receipt for the transaction as it stands now.
   */
  private async findReceipt(asked?: ReceiptsAsked): Promise<MinedOutcome | undefined> {
    const early = asked && asked.current === this.tx.txHash ? await asked.receipts.catch(() => undefined) : undefined;
    const receipts = early ?? (await this.askReceipts().receipts);
    const receipt = receipts.find((r) => r !== null);
    if (!receipt) return undefined;
    this.chain.blocks.observe(receipt.blockNumber);
    if (receipt.hash.toLowerCase() !== this.tx.txHash!.toLowerCase()) {
      // An earlier form won: it becomes the transaction's hash, the current one is listed as replaced.
      await this.deps.batchTransactions.promoteReplaced(this.batch.txId, this.tx.index, receipt.hash);
      this.tx = (await this.deps.batchTransactions.transaction(this.batch.txId, this.tx.index)) ?? this.tx;
      this.deps.log.info(
        { txId: this.batch.txId, index: this.tx.index, hash: receipt.hash },
        "an earlier form of the transaction was mined",
      );
    }
    if (this.tx.status === "broadcast" && !this.tx.signedRaw) {
      const mismatch = await this.checkReportedTransaction();
      if (mismatch) return { kind: "ended", status: "refused", error: mismatch, tx: this.tx, cause: "payer" };
    }
    if (this.batch.executionMode === "service-relayed" && isNoOp(receipt)) {
      const error = `cancelled by the operator: a no-op transaction (${receipt.hash}, block ${receipt.blockNumber}) took nonce ${this.tx.unsigned.nonce}; the operation did not run`;
      this.deps.log.warn(
        { txId: this.batch.txId, index: this.tx.index, hash: receipt.hash },
        "relayed transaction cancelled; batch rejected",
      );
      return { kind: "ended", status: "reverted", error, tx: this.tx, cause: "ours", receipt };
    }
    return { kind: "mined", receipt, tx: this.tx };
  }

  /**
   * Not mined yet: send the bytes again when the node lost them, replace a relayed transaction with higher fees when it
   * is stuck, note why a client-signed one waits; re-read it now and then (someone may have replaced it).
   */
  private async keepMoving(head: number): Promise<MinedOutcome | undefined> {
    if (Date.now() - this.lastReload >= RELOAD_MS) await this.reload();
    if (
      Date.now() - this.lastBroadcast >= REBROADCAST_MIN_MS &&
      !(await this.chain.provider.getTransaction(this.tx.txHash!))
    ) {
      const ended = await this.send(head);
      if (ended) return ended;
    }
    if (this.batch.executionMode === "service-relayed") await this.bumpIfStuck(head, false);
    else await this.noteWaiting();
    return undefined;
  }

  /** Broadcasts the current bytes and acts on the node's verdict. */
  private async send(head: number): Promise<MinedOutcome | undefined> {
    const verdict = await broadcast(this.chain.provider, this.tx.signedRaw!, this.tx.txHash!);
    this.deps.log.debug(
      { txId: this.batch.txId, index: this.tx.index, hash: this.tx.txHash, verdict },
      this.lastBroadcast ? "transaction sent again" : "transaction sent",
    );
    this.lastBroadcast = Date.now();
    // Blocks are counted (for a fee bump) from the last time the node took the bytes: a node that lost them, or a
    // reorg that took them away, starts the count again.
    if (verdict.kind === "accepted" || this.sentAtHead < 0) this.sentAtHead = head;
    switch (verdict.kind) {
      case "accepted":
      case "transient":
        return undefined; // a passing failure: sent again at the next look
      case "nonce-ahead":
        // An earlier nonce is missing from the node: the relayer fills or rewinds its own; a client's is the client's.
        await this.deps.healNonces?.();
        return undefined;
      case "underpriced":
        if (this.batch.executionMode === "service-relayed") await this.bumpIfStuck(head, true);
        else await this.noteWaiting(verdict.message);
        return undefined;
      case "nonce-used":
        return this.nonceUsed(verdict.message);
      case "refused":
        this.deps.log.warn(
          { txId: this.batch.txId, index: this.tx.index, refusal: verdict.message },
          "node refused the transaction; batch rejected",
        );
        // Bytes the relayer signed are ours (e.g. the relayer without gas money); a client's are the client's.
        return { kind: "ended", status: "refused", error: verdict.message, tx: this.tx, cause: this.ownBytes() };
    }
  }

  /**
   * The node says the nonce is used, and no hash of ours has a receipt. Seen twice in a row (a lagging node is not
   * believed at once): a relayed transaction is signed again with a fresh nonce; a client-signed one is refused.
   */
  private async nonceUsed(message: string): Promise<MinedOutcome | undefined> {
    if (++this.nonceTakenSeen < 2) return undefined;
    if (this.deps.resign && this.resigned < 3) {
      this.resigned++;
      this.nonceTakenSeen = 0;
      try {
        this.tx = await this.deps.resign(this.tx);
      } catch (error) {
        // Signed again only if it would still go through, and with the payment it carried: else it ends here unsent.
        if (!(error instanceof WouldRevert || error instanceof PaymentNotCarried)) throw error;
        return {
          kind: "ended",
          status: "refused",
          error: `signed again after its nonce was used elsewhere, it ${error instanceof WouldRevert ? `would revert: ${error.reason}` : `cannot carry its payment: ${error.message}`}; nothing was sent`,
          tx: this.tx,
          cause: error instanceof WouldRevert && !error.outOfGas ? "payer" : "ours",
        };
      }
      this.lastBroadcast = 0;
      this.sentAtHead = -1;
      return undefined;
    }
    return { kind: "ended", status: "refused", error: message, tx: this.tx, cause: this.ownBytes() };
  }

  /** Whose are this transaction's bytes: the relayer's (a failure of them is ours), or the client's. */
  private ownBytes(): Cause {
    return this.batch.executionMode === "service-relayed" ? "ours" : "payer";
  }

  /** The fees the transaction's current bytes carry. */
  private currentFees(): Fees {
    const { signedRaw } = this.tx;
    if (!signedRaw) return feesOf(this.tx);
    if (this.feesSeen?.signedRaw !== signedRaw) this.feesSeen = { signedRaw, fees: feesOf(this.tx) };
    return this.feesSeen.fees;
  }

  /** Replaces a relayed transaction with higher fees when it is not mined after some blocks or is priced out. */
  private async bumpIfStuck(head: number, underpriced: boolean): Promise<void> {
    if (!this.deps.replace || Date.now() - this.lastBump < MIN_BUMP_INTERVAL_MS) return;
    const current = this.currentFees();
    const stale = this.sentAtHead >= 0 && head - this.sentAtHead >= this.deps.config.RELAYER_BUMP_AFTER_BLOCKS;
    const market = await marketFees(this.chain);
    if (!underpriced && !stale && current.maxFeePerGas >= market.baseFeePerGas) return;
    this.lastBump = Date.now();
    const fees = replacementFees(current, market, feeCapWei(this.deps.config.RELAYER_MAX_FEE_GWEI));
    if (!fees) {
      await this.setWaiting(
        `the fee cap RELAYER_MAX_FEE_GWEI (${this.deps.config.RELAYER_MAX_FEE_GWEI} gwei) leaves no room for a replacement`,
        market,
      );
      return;
    }
    const replaced = await this.deps.replace(this.tx, fees);
    if (!replaced) return this.reload();
    this.tx = replaced.tx;
    this.lastBroadcast = Date.now();
    this.sentAtHead = head;
    this.deps.log.info(
      {
        txId: this.batch.txId,
        index: this.tx.index,
        hash: this.tx.txHash,
        maxFeePerGas: fees.maxFeePerGas.toString(),
        baseFeePerGas: market.baseFeePerGas.toString(),
        verdict: replaced.verdict.kind,
      },
      "relayed transaction replaced with higher fees",
    );
  }

  /** A client-signed transaction whose fee cap is below the base fee: say so, with fees that would be mined now. */
  private async noteWaiting(refusal?: string): Promise<void> {
    const market = await marketFees(this.chain);
    const { maxFeePerGas } = this.currentFees();
    if (maxFeePerGas >= market.baseFeePerGas && !refusal) {
      if (this.tx.waiting) await this.setWaiting(undefined, market);
      return;
    }
    const reason = refusal
      ? `the node does not take it yet: ${refusal}`
      : `its maxFeePerGas ${maxFeePerGas} wei is below the base fee ${market.baseFeePerGas} wei: it is mined once the base fee falls, or sign a replacement (same nonce, higher fees) and send it for this txId`;
    await this.setWaiting(reason, market);
  }

  private async setWaiting(
    reason: string | undefined,
    market: { baseFeePerGas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  ): Promise<void> {
    const waiting = reason
      ? {
          reason,
          baseFeePerGas: market.baseFeePerGas.toString(),
          suggestedMaxFeePerGas: market.maxFeePerGas.toString(),
          suggestedMaxPriorityFeePerGas: market.maxPriorityFeePerGas.toString(),
          since: this.tx.waiting?.since ?? new Date().toISOString(),
        }
      : null;
    if (JSON.stringify(waiting) === JSON.stringify(this.tx.waiting ?? null)) return;
    this.tx = (await this.deps.batchTransactions.setWaiting(this.batch.txId, this.tx.index, waiting)) ?? this.tx;
  }

  private async markBroadcast(): Promise<void> {
    // The head it went out at, as fresh as the chain's watcher has it (its last poll may be old): the console counts
    // its pending age in blocks from there.
    const head = (await this.chain.blocks.freshHead()) ?? (this.sentAtHead >= 0 ? this.sentAtHead : null);
    // The event is built from the signed transaction as the store returned it: one statement. Not signed any more
    // (another runner recorded its broadcast first): read back.
    const { txId } = this.batch;
    this.tx =
      (await this.deps.batchTransactions.setTxBroadcast(txId, this.tx.index, head, {
        batch: this.batch,
        tx: this.tx,
      })) ??
      (await this.deps.batchTransactions.transaction(txId, this.tx.index)) ??
      this.tx;
  }

  /** A reported hash the service has no bytes for may never appear (a typo, a dropped or replaced transaction). */
  private async checkReported(): Promise<MinedOutcome | undefined> {
    if (Date.now() - this.lastSeenCheck < UNSEEN_CHECK_MS) return undefined;
    this.lastSeenCheck = Date.now();
    const verdict = await this.unseenVerdict();
    if (verdict === "nonce taken once") this.nonceTakenSeen++;
    else if (verdict) {
      this.deps.log.warn(
        { txId: this.batch.txId, index: this.tx.index, hash: this.tx.txHash },
        "reported transaction never appeared; batch rejected",
      );
      return { kind: "ended", status: "unseen", error: verdict, tx: this.tx, cause: "payer" };
    }
    return undefined;
  }

  /**
   * Why a reported hash will never be mined, or undefined while it still may be: its nonce went to another transaction
   * (seen on two checks in a row, so a lagging node does not decide it), or it stayed unknown for RECEIPT_TIMEOUT_MS.
   */
  private async unseenVerdict(): Promise<string | undefined> {
    const hash = this.tx.txHash!;
    const chainId = this.chain.chainId;
    if (await this.chain.provider.getTransaction(hash)) return undefined;
    const { from, nonce } = this.tx.unsigned;
    if ((await this.chain.provider.getTransactionCount(from, "latest")) > nonce) {
      if (this.nonceTakenSeen === 0) return "nonce taken once";
      return `reported hash ${hash} is not on chain ${chainId} and nonce ${nonce} of ${from} was used by another transaction; report the right hash for this txId`;
    }
    const since = this.tx.broadcastAt ? Date.parse(this.tx.broadcastAt) : Date.now();
    const timeout = this.deps.config.RECEIPT_TIMEOUT_MS;
    if (Date.now() - since >= timeout) {
      return `reported hash ${hash} did not appear on chain ${chainId} within ${Math.round(timeout / 1000)} s; report the right hash for this txId`;
    }
    return undefined;
  }

  /** A client-reported hash must be the prepared transaction: same sender, target, data, value and nonce. */
  private async checkReportedTransaction(): Promise<string | undefined> {
    const onChain = await this.chain.provider.getTransaction(this.tx.txHash!);
    if (!onChain) return undefined;
    return reportedMismatch(onChain, this.tx.unsigned)
      ? `reported hash ${this.tx.txHash} is not transaction ${this.tx.index + 1} of batch ${this.batch.txId}`
      : undefined;
  }
}
