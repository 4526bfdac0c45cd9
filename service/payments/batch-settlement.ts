import type { TransactionReceipt } from "ethers";
import type { SettlementPort } from "../engine/runner-ports";
import type { OperationSettlement } from "../engine/relayer";
import type { Logger } from "../logger";
import type { Batch } from "../model/batch";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";
import type { Stores } from "../store/stores";
import { paidIn, settledBy, transferWithAuthorizationCalldata } from "./eip3009";
import type { PaymentTerms } from "./payment-terms";
import type { PaymentRefunder } from "./refunds";
import type { PaymentSettler } from "./settler";

/**
 * A payment is settled inside its operation's transaction only when its authorization stays valid at least this long:
 * that transaction must be mined before validBefore (else it reverts, operation included). Closer to its expiry, the
 * operation is sent alone and the payment settled after it (or released), as before.
 */
const IN_OPERATION_MARGIN_S = 60;

/** A batch's payments before its first broadcast: the one its transaction carries, and those settled first. */
export interface PaymentPlan {
  carried?: OperationSettlement & { payment: PaymentRecord };
  first: PaymentRecord[];
}

/** Payments settled before their operation (BatchSettlement.settleFirst). */
export type PaidFirst = { kind: "paid" } | { kind: "refused"; reason: string } | { kind: "waiting"; reason: string };

/**
 * The runner's settlement port (engine/runner-ports.ts SettlementPort): what happens to a batch's payments around its
 * run. Before the first broadcast, the payment its transaction carries or those settled first; the relayer's bind
 * and set-hash callbacks for a carried payment; at the end, settled with the batch (inside its last database
 * transaction when carried), released with it, or owed back after a failure of ours (payments/refunds.ts); after a
 * deep reorg, settling again. One payment's own lifecycle is the settler's (payments/settler.ts).
 */
export class BatchSettlement implements SettlementPort {
  constructor(
    private readonly services: Pick<Stores, "payments">,
    private readonly terms: PaymentTerms,
    private readonly settler: PaymentSettler,
    private readonly log: Logger,
    /** Where payments owed back after a failure of ours go (payments/refunds.ts). */
    private readonly refunder: PaymentRefunder,
  ) {}

  /** Inside the transaction that ends a batch rejected for a failure of ours: its settled payments owed back. */
  owedBackWithin(q: Queryable, txId: string, reason: string): Promise<number> {
    return this.refunder.owedBackWithin(q, txId, reason);
  }

  owedBackCommitted(txId: string, owed: number): void {
    this.refunder.owedBackCommitted(txId, owed);
  }

  /**
   * What a batch's payments need before its first broadcast (PaymentPlan). One payment may ride in the batch's only
   * transaction (`canCarry`: relayed by a key that delegates to PaidRelayDelegate): the relayer's EIP-7702 delegate
   * runs the EIP-3009 transfer and the operation atomically, so neither happens without the other. Every other payment
   * is settled first: an external facilitator (it sends its own transactions), a payment on another chain than the
   * operation, an authorization close to its expiry, a signature only the facilitator can use (ERC-6492), a batch of
   * several transactions or one the client signed. `known`: all of the batch's payments, when the caller has them.
   */
  async paymentPlan(txId: string, chainId: number, canCarry: boolean, known?: PaymentRecord[]): Promise<PaymentPlan> {
    const open = (known ?? (await this.services.payments.forBatch(txId))).filter(
      (p) => p.status === "reserved" || (p.status === "settling" && !p.settleInOperation),
    );
    const carried = canCarry ? this.carrierOf(open, chainId) : undefined;
    return { carried, first: open.filter((p) => p !== carried?.payment) };
  }

  /** The one reserved payment of `open` that can ride in the operation's transaction on `chainId`, if any. */
  private carrierOf(
    open: PaymentRecord[],
    chainId: number,
  ): (OperationSettlement & { payment: PaymentRecord }) | undefined {
    if (!this.terms.facilitator.settlesInOperation || chainId !== this.terms.chain.chainId || open.length !== 1)
      return undefined;
    const [payment] = open;
    if (payment.status !== "reserved" || payment.validBefore - Math.floor(Date.now() / 1000) <= IN_OPERATION_MARGIN_S)
      return undefined;
    const calldata = transferWithAuthorizationCalldata(payment.payload);
    if (!calldata) return undefined;
    const { payments } = this.services;
    return {
      payment,
      payer: payment.payer,
      asset: payment.asset,
      calldata,
      bind: (q) => payments.bindToOperation(q, payment.id),
      setHash: (q, hash) => payments.setOperationHash(q, payment.id, hash),
    };
  }

  /**
   * The payment already bound to a relayed batch's transaction, for signing that transaction again with a fresh nonce
   * (its first nonce was used by someone else): the new bytes carry the payment as the first did.
   */
  async boundSettlement(txId: string): Promise<OperationSettlement | undefined> {
    const bound = (await this.services.payments.forBatch(txId)).find(
      (p) => p.status === "settling" && p.settleInOperation,
    );
    const calldata = bound && transferWithAuthorizationCalldata(bound.payload);
    if (!bound || !calldata) return undefined;
    const { payments } = this.services;
    return {
      payer: bound.payer,
      asset: bound.asset,
      calldata,
      bind: (q) => payments.stillBoundToOperation(q, bound.id),
      setHash: (q, hash) => payments.setOperationHash(q, bound.id, hash),
    };
  }

  /**
   * Settles `payments` before their operation is broadcast, one after the other: paid when every one is settled;
   * refused when one was released (its authorization can no longer be used: nothing charged, nothing done); waiting
   * when one is still owed after a failure of ours (the caller tries again shortly).
   */
  async settleFirst(payments: PaymentRecord[]): Promise<PaidFirst> {
    for (const payment of payments) {
      const outcome = await this.settler.settleOutcome(payment);
      if (outcome.kind === "released")
        return { kind: "refused", reason: `the payment could not be settled: ${outcome.reason}` };
      if (outcome.kind === "pending") return { kind: "waiting", reason: outcome.reason };
    }
    return { kind: "paid" };
  }

  /**
   * Inside the database transaction that ends a relayed batch successfully (`q`): settles the payments its last
   * transaction carried (`receipt`, mined with status 1 and showing each one's authorization used), so the batch's
   * success and its payment's settlement are one commit and cost no trip of their own. Answers the payments it
   * settled, to be kept for the send's answer once that transaction committed (keepSettledAfterCommit); the rest are
   * left to settleForBatch.
   */
  async settleWithinFinish(
    q: Queryable,
    batch: Batch,
    receipt: TransactionReceipt | undefined,
    payments: PaymentRecord[],
  ): Promise<PaymentRecord[]> {
    const last = batch.transactions[batch.transactions.length - 1];
    if (!receipt || receipt.status !== 1 || !last?.txHash || receipt.hash.toLowerCase() !== last.txHash.toLowerCase())
      return [];
    const settled: PaymentRecord[] = [];
    for (const payment of payments) {
      if (!payment.settleInOperation || payment.status !== "settling" || !paidIn(receipt, payment)) continue;
      settled.push(await this.services.payments.settleWithin(q, payment, settledBy(receipt, payment), batch.apiKeyId));
    }
    return settled;
  }

  /** What settleWithinFinish settled, once its transaction committed: logged, and kept for the send's answer. */
  keepSettledAfterCommit(settled: PaymentRecord[]): void {
    for (const payment of settled) {
      this.settler.keepSettled(payment);
      this.log.info(
        { paymentId: payment.id, transaction: payment.settlement?.transaction },
        "payment settled with its operation",
      );
    }
  }

  /**
   * A reorg deeper than its confirmations took a batch's transaction off the chain: a payment settled in it is
   * settling again, and settled (or released) once the runner has it back on chain (settleForBatch).
   */
  async afterOperationReorg(txId: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.settleInOperation && p.status === "settled") await this.services.payments.unsettle(p.id);
    }
  }

  /**
   * Settles a confirmed batch's payments. The runner hands over what it has: its `receipts` (in order) spare a payment
   * settled in the last one a lookup, `ended` (the batch as its run just stored it) a read of the batch, and
   * `payments` (read in the transaction that ended it) a read of its payments.
   */
  async settleForBatch(
    txId: string,
    receipts?: TransactionReceipt[],
    ended?: Batch,
    payments?: PaymentRecord[],
  ): Promise<void> {
    for (const p of payments ?? (await this.services.payments.forBatch(txId))) {
      if (p.status === "reserved" || p.status === "settling")
        await this.settler.settle(p.id, receipts?.[receipts.length - 1], { payment: p, batch: ended });
    }
  }

  async releaseForBatch(txId: string, reason: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.status === "reserved") await this.settler.release(p.id, reason);
      // Settled in the operation's transaction, which reverted or never reached the chain: the payment went with it.
      else if (p.status === "settling" && p.settleInOperation) await this.settler.release(p.id, reason, true);
    }
  }

  /** A reorg deeper than its confirmations took a settlement off the chain: settled again. */
  afterDeepReorg(paymentId: string): Promise<void> {
    return this.settler.afterDeepReorg(paymentId);
  }
}
