import type { TransactionReceipt } from "ethers";
import type { Logger } from "../logger";
import type { Batch } from "../model/batch";
import type { Queryable } from "../store/db";
import type { PaymentRecord, PaymentStore } from "../store/payments";
import { paidIn, settledBy, transferWithAuthorizationCalldata } from "./eip3009";
import type { PaymentTerms } from "./payment-terms";
import type { PaymentRefunder } from "./refunds";
import type { BeforeBroadcast, OperationSettlement, RunEnd, RunPayments } from "./run-payments";
import type { PaymentSettler } from "./settler";

/**
 * A payment is settled inside its operation's transaction only when its authorization stays valid at least this long:
 * that transaction must be mined before validBefore (else it reverts, operation included). Closer to its expiry, the
 * operation is sent alone and the payment settled after it (or released), as before.
 */
const IN_OPERATION_MARGIN_S = 60;

/**
 * The runner's port to a batch's payments (payments/run-payments.ts RunPayments), and its one implementation. Before
 * the first broadcast, the payment its transaction carries or those settled first; the relayer's bind and record-hash
 * calls for a carried payment; at the end, settled with the batch (inside its last database transaction when carried),
 * released with it, or owed back after a failure of ours (payments/refunds.ts); after a deep reorg, settling again.
 * One payment's own lifecycle is the settler's (payments/settler.ts).
 */
export class BatchSettlement implements RunPayments {
  constructor(
    private readonly services: { payments: PaymentStore },
    private readonly terms: PaymentTerms,
    private readonly settler: PaymentSettler,
    private readonly log: Logger,
    /** Where payments owed back after a failure of ours go (payments/refunds.ts). */
    private readonly refunder: PaymentRefunder,
  ) {}

  /** A batch prepared under a key is never paid with x402 (auth/gate.ts admitSend). */
  paysFor(batch: Batch): boolean {
    return !batch.apiKeyId;
  }

  /**
   * What a batch's payments need before its first broadcast. One payment may ride in the batch's only transaction
   * (`canCarry`: relayed by a key that delegates to PaidRelayDelegate): the relayer's EIP-7702 delegate runs the
   * EIP-3009 transfer and the operation atomically, so neither happens without the other. Every other payment is
   * settled first, one after the other, once the operation would go through: an external facilitator (it sends its
   * own transactions), a payment on another chain than the operation, an authorization close to its expiry, a
   * signature only the facilitator can use (ERC-6492), a batch of several transactions or one the client signed.
   * Refused when one was released (its authorization can no longer be used: nothing charged, nothing done), unless a
   * later payment of the same share replaced it (a send refused, then sent again); waiting
   * when one is still owed after a failure of ours (the caller tries again shortly).
   */
  async beforeBroadcast(
    batch: Batch,
    options: {
      canCarry: boolean;
      known?: PaymentRecord[];
      wouldRevert: (payer?: string) => Promise<string | undefined>;
    },
  ): Promise<BeforeBroadcast> {
    const all = options.known ?? (await this.services.payments.forBatch(batch.txId));
    const paid = all.filter((p) => p.status !== "released");
    // A share (the prepare's, the send's) whose every payment was released is unpaid: its work is not done for free.
    const unpaid = all.find((p) => !paid.some((q) => q.subject === p.subject));
    if (unpaid)
      return { kind: "refused", reason: `the payment was released: ${unpaid.releaseReason ?? "unknown reason"}` };
    const payer = (paid.find((p) => p.subject.startsWith("send:")) ?? paid[0])?.payer;
    const open = all.filter((p) => p.status === "reserved" || (p.status === "settling" && !p.settleInOperation));
    const carried = options.canCarry ? this.carrierOf(open, batch.chainId) : undefined;
    const first = open.filter((p) => p !== carried?.payment);
    if (!first.length) return { kind: "go", carried, payer };
    const revert = await options.wouldRevert(payer);
    if (revert) return { kind: "refused", reason: revert };
    for (const payment of first) {
      const outcome = await this.settler.settleOutcome(payment);
      if (outcome.kind === "released")
        return { kind: "refused", reason: `the payment could not be settled: ${outcome.reason}` };
      if (outcome.kind === "pending") return { kind: "waiting", reason: outcome.reason };
    }
    return { kind: "go", payer };
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
    const hashes: string[] = [];
    return {
      payment,
      payer: payment.payer,
      asset: payment.asset,
      calldata,
      bindInSameTransaction: (q) => payments.bindToOperation(q, payment.id),
      recordHashInSameTransaction: async (q, hash) => {
        await payments.setOperationHash(q, payment.id, hash);
        hashes.push(hash.toLowerCase());
      },
      // What setOperationHash writes, on the payment as beforeBroadcast had it (reserved).
      recorded: () =>
        hashes.length === 1
          ? { ...payment, status: "settling", settleInOperation: true, settleTxHash: hashes[0] }
          : undefined,
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
      bindInSameTransaction: (q) => payments.stillBoundToOperation(q, bound.id),
      recordHashInSameTransaction: (q, hash) => payments.setOperationHash(q, bound.id, hash),
      recorded: () => undefined, // signed again: the batch's end reads its payments back
    };
  }

  readInSameTransaction(q: Queryable, txId: string): Promise<PaymentRecord[]> {
    return this.services.payments.forBatch(txId, q);
  }

  knownAtEnd(
    carried: OperationSettlement | undefined,
    receipt: TransactionReceipt | undefined,
  ): PaymentRecord[] | undefined {
    const payment = carried?.recorded();
    if (!payment || !receipt || payment.settleTxHash !== receipt.hash.toLowerCase()) return undefined;
    return [payment];
  }

  /**
   * Inside the database transaction that ends a relayed batch successfully (`q`): settles the payments its last
   * transaction carried (`receipt`, mined with status 1 and showing each one's authorization used), so the batch's
   * success and its payment's settlement are one commit and cost no trip of their own. Answers the payments it
   * settled, kept for the send's answer once that transaction committed (afterRun); the rest are settled then.
   */
  async settleCarriedInSameTransaction(
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

  owedBackInSameTransaction(q: Queryable, txId: string, reason: string): Promise<number> {
    return this.refunder.owedBackWithin(q, txId, reason);
  }

  releaseReservedInSameTransaction(q: Queryable, txId: string, reason: string): Promise<void> {
    return this.services.payments.releaseReservedWithin(q, txId, `the operation failed: ${reason}`);
  }

  /**
   * Once a run's end committed. A success: what settleCarriedInSameTransaction settled is logged and kept for the
   * send's answer, and the batch's other payments are settled, with what the runner hands over (its `receipts` spare
   * a payment settled in the last one a lookup, the batch a read of it, `payments` a read of them). A batch confirmed
   * but not recorded: its payments settled all the same (the operation ran on chain). A rejection: the payments owed
   * back are sent (or listed for the operator), the reserved ones released.
   */
  async afterRun(end: RunEnd): Promise<void> {
    if (end.kind === "success") {
      for (const payment of end.settledHere) {
        this.settler.keepSettled(payment);
        this.log.info(
          { paymentId: payment.id, transaction: payment.settlement?.transaction },
          "payment settled with its operation",
        );
      }
      const settledHere = new Set(end.settledHere.map((p) => p.id));
      const rest = end.payments?.filter((p) => !settledHere.has(p.id));
      return this.settleForBatch(end.batch.txId, end.receipts, end.batch, rest);
    }
    if (end.kind === "confirmed-unrecorded") return this.settleForBatch(end.txId, end.receipts);
    this.refunder.owedBackCommitted(end.txId, end.owed);
    if (!end.released) await this.releaseForBatch(end.txId, `the operation failed: ${end.reason}`);
  }

  async afterSettlementReorg(paymentId: string): Promise<string | undefined> {
    const txId = (await this.services.payments.get(paymentId))?.txId ?? undefined;
    await this.settler.afterDeepReorg(paymentId);
    return txId;
  }

  /**
   * A reorg deeper than its confirmations took a batch's transaction off the chain: a payment settled in it is
   * settling again, and settled (or released) once the runner has it back on chain (afterBackOnChain).
   */
  async afterOperationReorg(txId: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.settleInOperation && p.status === "settled") await this.services.payments.unsettle(p.id);
    }
  }

  afterBackOnChain(txId: string): Promise<void> {
    return this.settleForBatch(txId);
  }

  /** Settles a confirmed batch's payments that are not settled yet. */
  private async settleForBatch(
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

  private async releaseForBatch(txId: string, reason: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.status === "reserved") await this.settler.release(p.id, reason);
      // Settled in the operation's transaction, which reverted or never reached the chain: the payment went with it.
      else if (p.status === "settling" && p.settleInOperation) await this.settler.release(p.id, reason, true);
    }
  }
}
