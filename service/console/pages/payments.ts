import type { z } from "zod";
import type { PaymentRow, PaymentTotal } from "../../store/payment-search";
import type { ConsoleRefund } from "../../wire/console-refunds";
import type { ListPage } from "../paging";
import { PAYMENT_STATES } from "../queries";
import { usdc } from "../timeline";
import { filterForm, filteredBy, kept, type FilterError } from "./filters";
import { badge, code, facts, hashOf, html, number, pager, table, time } from "./html";
import { page, type PageContext } from "./layout";
import type { ChainChoice } from "./transactions";

/** The chain id of a payment's network (eip155:<id>), for its explorer. */
const chainOf = (network: string) => Number(network.split(":")[1]);

const paymentRow = (ctx: PageContext, p: PaymentRow) => {
  const explorer = ctx.explorers?.[chainOf(p.network)];
  return [
    hashOf(p.id, { href: `${ctx.base}/console/payments/${p.id}` }),
    time(p.createdAt),
    badge(p.status),
    usdc(p.amount),
    hashOf(p.payer, { explorer, kind: "address" }),
    p.method ?? p.route,
    p.txId ? hashOf(p.txId, { href: `${ctx.base}/console/transactions/${p.txId}` }) : "—",
    hashOf(p.settlementTransaction, { explorer, kind: "tx" }),
    p.releaseReason ?? "",
  ];
};
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
const FILTERS = ["status", "payer", "chain", "method", "txId", "settlement", "from", "to"];

/** Payments, newest first, with filters (in the URL), paged both ways; and the totals per day and operation. */
export function paymentsPage(
  ctx: PageContext,
  chains: ChainChoice[],
  values: Record<string, string | undefined>,
  list: ListPage<PaymentRow> | undefined,
  totals: PaymentTotal[],
  error?: FilterError,
): string {
  const { base } = ctx;
  const form = filterForm({
    action: `${base}/console/payments`,
    label: "Filter payments",
    values,
    error,
    fields: [
      { name: "status", label: "State", kind: "select", options: ["", ...PAYMENT_STATES] },
      { name: "payer", label: "Payer", kind: "text", placeholder: "0x…" },
      {
        name: "chain",
        label: "Chain",
        kind: "select",
        options: [["", "any"], ...chains.map((c): [string, string] => [String(c.chainId), `${c.name} (${c.chainId})`])],
      },
      { name: "method", label: "Paid for (method or route)", kind: "text", placeholder: "mintToken, /get-agents" },
      { name: "from", label: "Reserved from", kind: "time" },
      { name: "to", label: "to", kind: "time" },
    ],
  });
  const sums = table(
    "Totals per day and operation (settled payments)",
    ["Day (UTC)", "Operation", "Settled", "Charged", "Released"],
    totals.map((t) => [t.day, t.operation, number(t.settled), usdc(t.amount), number(t.released)]),
    "No payment in the last 7 days.",
  );
  const results = list
    ? html`${table(
        "Payments, newest first",
        HEADERS,
        list.items.map((p) => paymentRow(ctx, p)),
        "No payment matches.",
      )}
${pager(`${base}/console/payments`, kept(values, FILTERS), list)}`
    : html`<p class="muted">Nothing is listed until the filter is corrected.</p>`;
  return page(
    ctx,
    "payments",
    "Payments",
    html`<section>${form}</section>
<section aria-labelledby="list"><h2 id="list">x402 payments${filteredBy(values, { status: "state", payer: "payer", chain: "on chain", method: "for", txId: "of batch", settlement: "settled by", from: "from", to: "to" })}</h2>${results}</section>
<section aria-labelledby="totals"><h2 id="totals">Totals, the last 7 days <span class="muted">(read at most every 30 s)</span></h2>${sums}</section>`,
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
  const explorer = ctx.explorers?.[chainOf(p.network)];
  const owedBack = refund
    ? html`<section aria-labelledby="refund"><h2 id="refund">Owed back</h2>${facts([
        ["Refund", html`${badge(refund.status)} <a href="${ctx.base}/console/refunds">Refunds</a>`],
        ["Why", refund.reason],
        ["Refund transaction", hashOf(refund.transaction, { explorer, kind: "tx", full: true })],
        ["Paid by", refund.refundedBy ?? "—"],
        ["Refunded", time(refund.refundedAt)],
      ])}</section>`
    : "";
  return page(
    ctx,
    "payments",
    `Payment ${p.id.slice(0, 8)}…`,
    html`<section aria-labelledby="about"><h2 id="about">The payment</h2>${facts([
      ["Id", hashOf(p.id, { full: true })],
      ["State", badge(p.status)],
      ["Reason", p.releaseReason ?? "—"],
      ["Amount", usdc(p.amount)],
      ["Payer", hashOf(p.payer, { explorer, kind: "address", full: true })],
      ["Paid to", hashOf(p.payTo, { explorer, kind: "address", full: true })],
      ["Asset", hashOf(p.asset, { explorer, kind: "address" })],
      ["Network", p.network],
      ["For", html`${p.method ?? p.route} (${code(p.subject)})`],
      ["Batch", p.txId ? hashOf(p.txId, { href: `${ctx.base}/console/transactions/${p.txId}`, full: true }) : "—"],
      ["Settlement transaction", hashOf(p.settlementTransaction, { explorer, kind: "tx", full: true })],
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
  d.batchMates.map((m) => paymentRow(ctx, m)),
  "None: this payment was settled alone (or inside its operation).",
)}</section>`,
  );
}
