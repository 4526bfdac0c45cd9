import type { TransactionReceipt } from "ethers";
import type { Logger } from "../logger";
import type { Batch, BatchTransaction } from "../model/batch";
import type { OperationSettlement, RunPayments } from "../payments/run-payments";
import type { PaymentRecord } from "../store/payments";
import { PaymentNotCarried, TransactionEnded, WouldRevert, type RelayedSignature } from "./relayer";
import type { BatchHooks, BatchRun, FailureCause, RelaySigner, RunnerDeps, RunnerStop } from "./runner-ports";

/** A batch waiting for its payment tries again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * What comes before a batch's transactions reach the chain: its payments settled first or carried by its transaction
 * (through the payments port, RunPayments), a relayed transaction simulated, completed with its payer and signed by the relayer.
 * Part of the batch runner (engine/runner.ts).
 */
export class FirstBroadcast {
  constructor(
    private readonly services: RunnerDeps,
    private readonly methods: (name: string) => BatchHooks | undefined,
    private readonly payments: RunPayments,
    private readonly relaySigner: RelaySigner,
    private readonly stop: RunnerStop,
    private readonly log: Logger,
  ) {}

  /**
   * No work before its payment: before a keyless batch's first broadcast, the payment its only transaction can carry
   * (relayed on the payment chain by a key that delegates to PaidRelayDelegate) rides in it, and every other payment
   * is settled first, once a simulation shows the relayed transaction would go through (RunPayments.beforeBroadcast).
   * A payment the payer made unusable refuses the batch (the caller ends it: nothing charged, nothing sent); one owed
   * for a failure of ours (the settlement wallet without gas) is tried again while the batch waits. `sendPayment`: the
   * payment the send reserved just before the run, handed to the payments on the first attempt instead of read back.
   */
  async payFirst(
    run: BatchRun,
    batch: Batch,
    sendPayment: PaymentRecord | undefined,
    canCarry = true,
  ): Promise<Paid | Refusal | "stopped"> {
    if (!this.payments.paysFor(batch)) return {};
    const first = batch.transactions[0];
    const relayedUnsigned = batch.executionMode === "service-relayed" && first.status === "prepared";
    const carries =
      canCarry &&
      relayedUnsigned &&
      batch.transactions.length === 1 &&
      !!this.services.relayer.delegate(batch.chainId, first.unsigned.from);
    let known = sendPayment ? [sendPayment] : undefined;
    let simulated = !relayedUnsigned;
    const wouldRevert = async (payer?: string) => {
      if (simulated) return undefined;
      simulated = true;
      const revert = await this.wouldRevert(batch, first, payer);
      return revert && `transaction ${first.index + 1} would revert: ${revert}`;
    };
    for (let pause = RETRY_START_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      const outcome = await this.payments.beforeBroadcast(batch, { canCarry: carries, known, wouldRevert });
      known = undefined; // read again after an attempt
      if (outcome.kind === "go") {
        run.payer ??= outcome.payer;
        run.carried = outcome.carried; // its binding, kept for the batch's end (RunPayments.knownAtEnd)
        return { carried: outcome.carried };
      }
      if (outcome.kind === "refused") return { refused: `${outcome.reason}; nothing was sent`, tx: first };
      this.log.warn(
        { txId: batch.txId, reason: outcome.reason, retryInMs: pause },
        "the batch's payment is owed and not settled yet; the batch waits for it",
      );
      await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stop.signal]);
      if (this.stop.stopped()) return "stopped";
    }
  }

  /** Why a relayed transaction would revert now (simulated from its relayer: simulateRelayedCall), or undefined. */
  private async wouldRevert(batch: Batch, tx: BatchTransaction, payer?: string): Promise<string | undefined> {
    const data = await this.boundData(batch, tx, payer);
    try {
      await this.services.relayer.simulate(batch, tx, data);
      return undefined;
    } catch (error) {
      if (error instanceof WouldRevert) return error.reason;
      throw error;
    }
  }

  /** Calldata a relayed transaction is completed with at send time (it names the payer), when its method does so. */
  private async boundData(batch: Batch, tx: BatchTransaction, payer?: string): Promise<string | undefined> {
    const method = this.methods(batch.method);
    return method?.bindRelayed && payer ? method.bindRelayed(batch, tx.index, payer) : undefined;
  }

  /**
   * A relayed transaction is signed (nonce, fees, calldata naming the payer) right before its broadcast, which the
   * relayer makes: `acceptedAt` when the node took the bytes. `carried`: the payment it carries (payFirst). A
   * transaction that would revert is refused unsigned (the caller ends the batch); a payment that can no longer ride
   * in it is settled first. "ended": another runner ended the batch meanwhile (read it back); "stopped": the runner
   * stopped while that payment waited to be settled (the next start resumes the batch).
   */
  async signRelayed(
    run: BatchRun,
    batch: Batch,
    tx: BatchTransaction,
    carried?: OperationSettlement,
  ): Promise<
    | { current: BatchTransaction; acceptedAt?: number; receipt?: Promise<TransactionReceipt | null> }
    | Refusal
    | "ended"
    | "stopped"
  > {
    if (batch.executionMode !== "service-relayed")
      throw new Error(`transaction ${tx.index} of ${batch.txId} was never signed`);
    const data = await this.boundData(batch, tx, run.payer);
    const settle = tx.index === batch.transactions.length - 1 ? carried : undefined;
    if (settle) run.payer = settle.payer;
    let signature: RelayedSignature;
    try {
      signature = await this.relaySigner(batch, tx, { data, settle });
    } catch (error) {
      if (error instanceof WouldRevert)
        return {
          refused: `transaction ${tx.index + 1} would revert: ${error.reason}; nothing was sent`,
          tx,
          cause: error.outOfGas ? "ours" : "payer",
        };
      if (error instanceof TransactionEnded) return "ended"; // ended by another runner: read back
      if (!(error instanceof PaymentNotCarried)) throw error;
      this.log.warn(
        { txId: batch.txId, reason: error.message },
        "the payment cannot ride in its operation's transaction; it is settled first",
      );
      const paid = await this.payFirst(run, batch, undefined, false);
      if (paid === "stopped") return "stopped";
      if ("refused" in paid) return paid;
      return this.signRelayed(run, batch, tx);
    }
    const { stored, acceptedAt, receipt } = signature;
    // The relayer re-priced (and numbered) it: what it stored, or read back when another runner signed it first.
    const current = stored ?? (await this.services.batchTransactions.transaction(batch.txId, tx.index));
    if (!current) throw new Error(`transaction ${tx.index} of ${batch.txId} is not stored`);
    return { current, acceptedAt, receipt };
  }
}

/** The batch's payments allow its broadcast: `carried`, the one its transaction carries. */
export interface Paid {
  carried?: OperationSettlement;
}

/** The batch is refused before anything of it was sent, at `tx`, for `cause`'s failure (the payer's unless told). */
export interface Refusal {
  refused: string;
  tx: BatchTransaction;
  cause?: FailureCause;
}
