import { formatUnits } from "ethers";
import type { z } from "zod";
import type { PaymentRow, PaymentTotal } from "../../store/payment-search";
import type { ConsoleRefund } from "../../wire/console-refunds";
import { badge, code, facts, field, html, pager, table, time } from "./html";
import { page, type PageContext } from "./layout";

const STATES = ["", "reserved", "settling", "settled", "released"];
const usdc = (amount: string) => `${formatUnits(amount, 6)} USDC`;

const paymentRow = (base: string, p: PaymentRow) => [
  html`<a href="${base}/console/payments/${p.id}">${p.id.slice(0, 8)}…</a>`,
  time(p.createdAt),
  badge(p.status),
  usdc(p.amount),
  code(p.payer),
  p.method ?? p.route,
  p.txId ? html`<a href="${base}/console/transactions/${p.txId}">${p.txId.slice(0, 14)}…</a>` : "—",
  code(p.settlementTransaction),
  p.releaseReason ?? "",
];
const HEADERS = [
  "Payment",
  "Reserved",
  "State",
  "Amount",
  "Payer",
  "Operation",
  "Batch",
  "Settlement transaction",
  "Reason",
];

/** Payments, newest first, with filters, and the totals per day and operation. */
export function paymentsPage(
  ctx: PageContext,
  query: { status?: string; payer?: string },
  list: { items: PaymentRow[]; next: string | null },
  totals: PaymentTotal[],
): string {
  const { base } = ctx;
  const filters = html`<form method="get" action="${base}/console/payments" class="inline" role="search" aria-label="Filter payments">
${field("status", "State", { name: "status", value: query.status ?? "", options: STATES })}
${field("payer", "Payer", { name: "payer", value: query.payer ?? "", placeholder: "0x…" })}
<button type="submit">Filter</button></form>`;
  const sums = table(
    "Totals per day and operation (settled payments)",
    ["Day (UTC)", "Operation", "Settled", "Charged", "Released"],
    totals.map((t) => [t.day, t.operation, t.settled, usdc(t.amount), t.released]),
    "No payment in the last 7 days.",
  );
  return page(
    ctx,
    "payments",
    "Payments",
    html`<section>${filters}</section>
<section aria-labelledby="list"><h2 id="list">x402 payments</h2>${table(
      "Payments, newest first",
      HEADERS,
      list.items.map((p) => paymentRow(base, p)),
      "No payment matches.",
    )}
${pager(`${base}/console/payments`, { status: query.status, payer: query.payer }, list.next)}</section>
<section aria-labelledby="totals"><h2 id="totals">Totals, the last 7 days</h2>${sums}</section>`,
  );
}

/**
 * One payment, its settlement transaction and the other payments that transaction carried; its refund when it is owed
 * back after a failure of the service's.
 */
export function paymentPage(
  ctx: PageContext,
  d: { payment: PaymentRow; batchMates: PaymentRow[] },
  refund?: z.infer<typeof ConsoleRefund>,
): string {
  const p = d.payment;
  const owedBack = refund
    ? html`<section aria-labelledby="refund"><h2 id="refund">Owed back</h2>${facts([
        ["Refund", html`${badge(refund.status)} <a href="${ctx.base}/console/refunds">Refunds</a>`],
        ["Why", refund.reason],
        ["Refund transaction", code(refund.transaction)],
        ["Paid by", refund.refundedBy ?? "—"],
        ["Refunded", time(refund.refundedAt)],
      ])}</section>`
    : "";
  return page(
    ctx,
    "payments",
    `Payment ${p.id.slice(0, 8)}…`,
    html`<section aria-labelledby="about"><h2 id="about">The payment</h2>${facts([
      ["Id", code(p.id)],
      ["State", badge(p.status)],
      ["Reason", p.releaseReason ?? "—"],
      ["Amount", usdc(p.amount)],
      ["Payer", code(p.payer)],
      ["Paid to", code(p.payTo)],
      ["Network", p.network],
      ["For", html`${p.method ?? p.route} (${code(p.subject)})`],
      ["Batch", p.txId ? html`<a href="${ctx.base}/console/transactions/${p.txId}">${p.txId}</a>` : "—"],
      ["Settlement transaction", code(p.settlementTransaction)],
      [
        "Settled how",
        p.settledInOperation
          ? "inside its relayed operation (EIP-7702)"
          : p.settlementTransaction
            ? "by a settlement transaction of the facilitator"
            : "—",
      ],
      ["Reserved", time(p.createdAt)],
      ["Last change", time(p.updatedAt)],
    ])}</section>${owedBack}
<section aria-labelledby="mates"><h2 id="mates">Other payments of its settlement transaction</h2>
${table(
  "Payments settled by the same transaction",
  HEADERS,
  d.batchMates.map((m) => paymentRow(ctx.base, m)),
  "None: this payment was settled alone (or inside its operation).",
)}</section>`,
  );
}
