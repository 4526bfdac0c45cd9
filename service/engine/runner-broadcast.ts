import type { TransactionReceipt } from "ethers";
import type { Logger } from "../logger";
import type { Batch, BatchTransaction } from "../model/batch";
import type { PaymentRecord } from "../store/payments";
import {
  PaymentNotCarried,
  TransactionEnded,
  WouldRevert,
  type OperationSettlement,
  type RelayedSignature,
} from "./relayer";
import type { BatchEnding } from "./runner-ending";
import type { BatchHooks, RelaySigner, RunnerDeps, RunnerStop, SettlementPort } from "./runner-ports";

/** A batch waiting for its payment tries again after this long, doubling up to RETRY_MAX_MS. */
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * What comes before a batch's transactions reach the chain: its payments settled first or carried by its transaction
 * (through the settlement port), a relayed transaction simulated, completed with its payer and signed by the relayer.
 * Part of the batch runner (engine/runner.ts).
 */
export class FirstBroadcast {
  constructor(
    private readonly services: RunnerDeps,
    private readonly methods: (name: string) => BatchHooks | undefined,
    private readonly settlement: SettlementPort | undefined,
    private readonly relaySigner: RelaySigner,
    private readonly ending: BatchEnding,
    private readonly stop: RunnerStop,
    private readonly log: Logger,
  ) {}

  /** Payers this process's runs learnt on the way (the payment their last transaction carries), by txId. */
  readonly payers = new Map<string, string>();

  /**
   * The payment a send reserved just before it started its batch's run here, by txId. A service-relayed batch has no
   * other (its prepare is free, and a subject is paid once), so it is all of the batch's payments: not read back.
   */
  readonly sendPayments = new Map<string, PaymentRecord>();

  /** The wallet whose x402 payment pays for a batch: its send payment's payer, else its prepare payment's. */
  async payerOf(batch: Batch): Promise<string | undefined> {
    if (batch.apiKeyId) return undefined;
    const known = this.payers.get(batch.txId);
    if (known) return known;
    const payments = await this.services.payments.forBatch(batch.txId);
    const paid = payments.filter((p) => p.status !== "released");
    return (paid.find((p) => p.subject.startsWith("send:")) ?? paid[0])?.payer;
  }

  /**
   * No work before its payment: before a keyless batch's first broadcast, the payment its only transaction can carry
   * (relayed on the payment chain by a key that delegates to PaidRelayDelegate) rides in it, and every other payment
   * is settled first, once a simulation shows the relayed transaction would go through. A payment the payer made
   * unusable refuses the batch (released: nothing charged, nothing sent); one owed for a failure of ours (the
   * settlement wallet without gas) is tried again while the batch waits.
   */
  async payFirst(batch: Batch, canCarry = true): Promise<{ carried?: OperationSettlement } | "refused" | "stopped"> {
    const settlement = this.settlement;
    if (batch.apiKeyId || !settlement) return {};
    const first = batch.transactions[0];
    const relayedUnsigned = batch.executionMode === "service-relayed" && first.status === "prepared";
    const carries =
      canCarry &&
      relayedUnsigned &&
      batch.transactions.length === 1 &&
      !!this.services.relayer.delegate(batch.chainId, first.unsigned.from);
    let known: PaymentRecord[] | undefined = this.sendPayments.has(batch.txId)
      ? [this.sendPayments.get(batch.txId)!]
      : undefined;
    let simulated = false;
    for (let pause = RETRY_START_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      const plan = await settlement.paymentPlan(batch.txId, batch.chainId, carries, known);
      known = undefined; // read again after an attempt
      if (!plan.first.length) return { carried: plan.carried };
      if (relayedUnsigned && !simulated) {
        const revert = await this.wouldRevert(batch, first);
        if (revert) {
          await this.ending.refuse(
            batch,
            first,
            `transaction ${first.index + 1} would revert: ${revert}; nothing was sent`,
          );
          return "refused";
        }
        simulated = true;
      }
      const outcome = await settlement.settleFirst(plan.first);
      if (outcome.kind === "paid") return {};
      if (outcome.kind === "refused") {
        await this.ending.refuse(batch, first, `${outcome.reason}; nothing was sent`);
        return "refused";
      }
      this.log.warn(
        { txId: batch.txId, reason: outcome.reason, retryInMs: pause },
        "the batch's payment is owed and not settled yet; the batch waits for it",
      );
      await Promise.race([new Promise((resolve) => setTimeout(resolve, pause)), this.stop.signal]);
      if (this.stop.stopped()) return "stopped";
    }
  }

  /** Why a relayed transaction would revert now (simulated from its relayer: simulateRelayedCall), or undefined. */
  private async wouldRevert(batch: Batch, tx: BatchTransaction): Promise<string | undefined> {
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
  async signRelayed(
    batch: Batch,
    tx: BatchTransaction,
    carried?: OperationSettlement,
  ): Promise<
    { current: BatchTransaction; acceptedAt?: number; receipt?: Promise<TransactionReceipt | null> } | "refused"
  > {
    if (batch.executionMode !== "service-relayed")
      throw new Error(`transaction ${tx.index} of ${batch.txId} was never signed`);
    const data = await this.boundData(batch, tx);
    const settle = tx.index === batch.transactions.length - 1 ? carried : undefined;
    if (settle) this.payers.set(batch.txId, settle.payer);
    let signature: RelayedSignature;
    try {
      signature = await this.relaySigner(batch, tx, { data, settle });
    } catch (error) {
      if (error instanceof WouldRevert) {
        await this.ending.refuse(
          batch,
          tx,
          `transaction ${tx.index + 1} would revert: ${error.reason}; nothing was sent`,
          error.outOfGas ? "ours" : "payer",
        );
        return "refused";
      }
      if (error instanceof TransactionEnded) return "refused"; // ended by another runner: read back
      if (!(error instanceof PaymentNotCarried)) throw error;
      this.log.warn(
        { txId: batch.txId, reason: error.message },
        "the payment cannot ride in its operation's transaction; it is settled first",
      );
      const paid = await this.payFirst(batch, false);
      if (paid === "refused") return "refused";
      if (paid === "stopped") throw error;
      return this.signRelayed(batch, tx);
    }
    const { signedRaw, txHash, stored, acceptedAt, receipt } = signature;
    // The relayer re-priced (and numbered) it: what it stored, or read back when another runner signed it first.
    const current = stored ??
      (await this.services.batches.transaction(batch.txId, tx.index)) ?? {
        ...tx,
        signedRaw,
        txHash,
        status: "signed" as const,
      };
    return { current, acceptedAt, receipt };
  }
}
