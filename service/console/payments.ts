import { isAddress } from "ethers";
import { badRequest, notFound } from "../errors";
import type { PaymentRow, PaymentTotal } from "../store/payment-search";
import type { PaymentStatus } from "../store/payments";
import type { Services } from "../usecases/services";
import { paged, parseTimeCursor, timeCursor } from "./paging";

export interface PaymentQuery {
  status?: PaymentStatus;
  payer?: string;
  txId?: string;
  settlement?: string;
  before?: string;
}

/** x402 payments, newest first, a page at a time: by state, payer, batch or settlement transaction. */
export async function listPayments(
  services: Services,
  query: PaymentQuery,
): Promise<{ items: PaymentRow[]; next: string | null }> {
  if (query.payer && !isAddress(query.payer))
    throw badRequest("payer must be an address (0x + 40 hex)", { field: "payer" });
  for (const field of ["txId", "settlement"] as const) {
    if (query[field] && !/^0x[0-9a-fA-F]{64}$/.test(query[field]))
      throw badRequest(`${field} must be 0x + 64 hex`, { field });
  }
  const before = parseTimeCursor(query.before);
  return paged(
    (limit) =>
      services.paymentSearch.page({
        status: query.status,
        payer: query.payer,
        txId: query.txId,
        settlementTransaction: query.settlement,
        before: before && { createdAt: before.at, id: before.id },
        limit,
      }),
    (last) => timeCursor(last.createdAt, last.id),
  );
}

/**
 * One payment and, when a transaction of its own settled it, the other payments that transaction carried (the
 * in-process facilitator settles several in one Multicall3 call).
 */
export async function paymentDetail(
  services: Services,
  id: string,
): Promise<{ payment: PaymentRow; batchMates: PaymentRow[] }> {
  const payment = await services.paymentSearch.get(id);
  if (!payment) throw notFound(`No payment ${id}`, { field: "id" });
  const settlement = payment.settlementTransaction;
  const shared =
    settlement && !payment.settledInOperation
      ? await services.paymentSearch.page({ settlementTransaction: settlement, limit: 500 })
      : [];
  return { payment, batchMates: shared.filter((p) => p.id !== payment.id) };
}

/** What the payments of the last `days` days charged, per day and operation. */
export async function paymentTotals(
  services: Services,
  days: number,
): Promise<{ days: number; totals: PaymentTotal[] }> {
  return { days, totals: await services.paymentSearch.totals(days) };
}
