import { badRequest, notFound } from "../errors";
import type { PaymentFilter, PaymentRow, PaymentTotal } from "../store/payment-search";
import type { Services } from "../usecases/services";
import { recently } from "./recently";
import { listPage, parseTimeCursor, timeCursor, UUID, type ListPage } from "./paging";
import type { PaymentsQuery } from "./queries";

/**
 * x402 payments, newest first, a page at a time both ways: by state, payer, batch, settlement transaction, chain,
 * what they paid for and a time range of their reservation.
 */
export async function listPayments(services: Services, query: PaymentsQuery): Promise<ListPage<PaymentRow>> {
  if (query.chain !== undefined && !services.chains.find(query.chain))
    throw badRequest(
      `chain must be a chain this service serves: ${services.chains
        .list()
        .map((c) => c.chainId)
        .join(", ")}`,
      { field: "chain" },
    );
  const filter: PaymentFilter = {
    status: query.status,
    payer: query.payer,
    txId: query.txId,
    settlementTransaction: query.settlement,
    chainId: query.chain,
    operation: query.method,
    from: query.from,
    to: query.to,
  };
  const before = parseTimeCursor(query.before, "before", UUID);
  const after = parseTimeCursor(query.after, "after", UUID);
  return listPage(
    (limit) =>
      services.paymentSearch.page({
        ...filter,
        before: before && { createdAt: before.at, id: before.id },
        after: after && { createdAt: after.at, id: after.id },
        limit,
      }),
    (first) => services.paymentSearch.count(filter, first),
    (row) => timeCursor(row.createdAt, row.id),
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

/** Totals are read again at most this often for one span (every page of the payments list shows them). */
const TOTALS_TTL_MS = 30_000;

/** What the payments of the last `days` days charged, per day and operation (read at most every 30 s). */
export async function paymentTotals(
  services: Services,
  days: number,
): Promise<{ days: number; totals: PaymentTotal[] }> {
  const totals = await recently(services, `payment-totals-${days}`, TOTALS_TTL_MS, () =>
    services.paymentSearch.totals(days),
  );
  return { days, totals };
}
