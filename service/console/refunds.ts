import type { z } from "zod";
import { badRequest, conflict, notFound } from "../errors";
import { transferredIn } from "../payments/refund-transactions";
import type { OperatorRecord } from "../store/operators";
import type { RefundRecord, RefundStatus } from "../store/payment-refunds";
import { REFUND_STATUSES } from "../store/payment-refunds";
import type { Services } from "../usecases/services";
import type { ConsoleRefund } from "../wire/console-refunds";
import { PAGE_SIZE, parseTimeCursor, timeCursor, UUID } from "./paging";

/** A refund as the console shows it. */
export function refundRow(r: RefundRecord): z.infer<typeof ConsoleRefund> {
  return {
    paymentId: r.paymentId,
    txId: r.txId,
    network: r.network,
    asset: r.asset,
    payer: r.payer,
    amount: r.amount,
    reason: r.reason,
    status: r.status,
    attempts: r.attempts,
    lastError: r.lastError,
    nextAttemptAt: r.nextAttemptAt,
    transaction: r.txHash,
    refundedBy: r.refundedBy,
    createdAt: r.createdAt,
    refundedAt: r.refundedAt,
  };
}

/**
 * Payments owed back after a failure of ours, newest first, a page at a time (optionally in one state), with what is
 * still owed and the refund wallet that pays them (none: the operator does, and marks each here).
 */
export async function listRefunds(services: Services, query: { status?: string; before?: string }) {
  if (query.status && !REFUND_STATUSES.includes(query.status as RefundStatus))
    throw badRequest(`status must be one of ${REFUND_STATUSES.join(", ")}`, { field: "status" });
  const before = parseTimeCursor(query.before, "before", UUID);
  // Refunds are few: paged older-only (olderPager), one row more than a page telling whether there is an older one.
  const [rows, totals] = await Promise.all([
    services.paymentRefunds.page({
      limit: PAGE_SIZE + 1,
      status: (query.status || undefined) as RefundStatus | undefined,
      before: before && { createdAt: before.at, paymentId: before.id },
    }),
    services.paymentRefunds.totals(),
  ]);
  const items = rows.slice(0, PAGE_SIZE);
  const last = items[items.length - 1];
  const page = { items, next: rows.length > PAGE_SIZE && last ? timeCursor(last.createdAt, last.paymentId) : null };
  return {
    items: page.items.map(refundRow),
    next: page.next,
    refundWallet: services.paymentRefunder?.walletAddress ?? null,
    owed: totals.owed,
  };
}

/**
 * An operator paid an owed refund themselves (from any wallet) and marks it refunded with their transaction, which
 * must be confirmed on the payment's chain and transfer at least the amount of the asset to the payer (each
 * transaction marks one refund). Audited (payments.refund-marked). A refund the refund wallet is sending, or that is
 * refunded already, is refused (409): it is paid once.
 */
export async function markRefundPaid(
  services: Services,
  operator: OperatorRecord,
  paymentId: string,
  transaction: string,
): Promise<z.infer<typeof ConsoleRefund>> {
  const refund = await services.paymentRefunds.get(paymentId);
  if (!refund) throw notFound(`No refund is owed for payment ${paymentId}`, { field: "paymentId" });
  if (refund.status !== "owed")
    throw conflict(
      refund.status === "sending"
        ? `The refund wallet is sending this refund (${refund.txHash}): it cannot be marked paid by hand`
        : `This refund was paid already (${refund.txHash}, by ${refund.refundedBy})`,
      { status: refund.status },
    );
  const chain = services.chains.find(refund.chainId);
  if (!chain) throw conflict(`Chain ${refund.chainId} of this refund is not served here`, { chainId: refund.chainId });
  const receipt = await chain.provider.getTransactionReceipt(transaction);
  if (!receipt)
    throw badRequest(`transaction ${transaction} is not mined on chain ${refund.chainId}`, { field: "transaction" });
  if (!transferredIn(receipt, refund))
    throw badRequest(
      `transaction ${transaction} does not transfer ${refund.amount} base units of ${refund.asset} to ${refund.payer}`,
      { field: "transaction" },
    );
  const head = await chain.provider.getBlockNumber();
  if (head - receipt.blockNumber + 1 < chain.confirmations)
    throw conflict(
      `transaction ${transaction} has ${head - receipt.blockNumber + 1} of ${chain.confirmations} confirmations: mark it once it has them`,
      { field: "transaction" },
    );
  const marked = await services.paymentRefunds
    .markPaidBy(paymentId, operator.email, transaction, receipt.blockNumber)
    .catch((error: { code?: string; message?: string }) => {
      if (error.code === "23505" || /unique|duplicate/i.test(error.message ?? ""))
        throw conflict(`transaction ${transaction} already marks another refund paid`, { field: "transaction" });
      throw error;
    });
  if (!marked) throw conflict("This refund is no longer owed (marked or sent meanwhile)", { status: "changed" });
  await services.auditLog.record({
    actor: operator.email,
    action: "payments.refund-marked",
    target: paymentId,
    before: { status: refund.status, amount: refund.amount, payer: refund.payer },
    after: { status: marked.status, transaction: marked.txHash, blockNumber: marked.blockNumber },
  });
  return refundRow(marked);
}
