import { formatUnits } from "ethers";
import type { z } from "zod";
import { roleAllows } from "../../store/operators";
import type { ConsoleRefund, ConsoleRefundList } from "../../wire/console-refunds";
import { actionForm, badge, code, field, html, olderPager, table, time } from "./html";
import { page, type PageContext } from "./layout";

type Refund = z.infer<typeof ConsoleRefund>;
const STATES = ["", "owed", "sending", "refunded"];
const usdc = (amount: string) => `${formatUnits(amount, 6)} USDC`;

/** The form that marks an owed refund paid with the operator's own transaction (admin). */
const markForm = (base: string, r: Refund) =>
  actionForm({
    action: `${base}/console/api/refunds/${r.paymentId}/mark-paid`,
    label: `Mark paid`,
    confirm: `Mark the refund of ${usdc(r.amount)} to ${r.payer} paid? The transaction must be confirmed and transfer it to the payer.`,
    done: "The refund is marked paid.",
    fields: field(`tx-${r.paymentId}`, "Your transaction", { name: "transaction", required: true, placeholder: "0x…" }),
  });

/**
 * Payments owed back after a failure of the service's: what is owed, who pays it (the refund wallet, or the operator,
 * who pays from any wallet and marks it here with the transaction), and each refund's state.
 */
export function refundsPage(
  ctx: PageContext,
  query: { status?: string },
  list: z.infer<typeof ConsoleRefundList>,
): string {
  const { base } = ctx;
  const admin = roleAllows(ctx.operator.role, "admin");
  const who = list.refundWallet
    ? html`<p>The refund wallet ${code(list.refundWallet)} pays them back automatically (USDC on the payment's chain). An owed refund can also be paid by hand and marked here.</p>`
    : html`<p class="notice error" role="status">No refund wallet is configured (<code>X402_REFUND_PRIVATE_KEY</code>): pay each owed refund to its payer from a wallet of yours, then mark it paid here with your transaction.</p>`;
  const owed = list.owed.length
    ? html`<p>Still owed: ${list.owed.map((o) => html`<strong>${usdc(o.amount)}</strong> (${code(o.asset)}) `)}</p>`
    : html`<p class="muted">Nothing is owed.</p>`;
  const filter = html`<form method="get" action="${base}/console/refunds" class="inline" role="search" aria-label="Filter refunds">${field("status", "State", { name: "status", value: query.status ?? "", options: STATES })}<button type="submit">Filter</button></form>`;
  const rows = list.items.map((r) => [
    html`<a href="${base}/console/payments/${r.paymentId}">${r.paymentId.slice(0, 8)}…</a>`,
    time(r.createdAt),
    badge(r.status),
    usdc(r.amount),
    code(r.payer),
    html`<a href="${base}/console/transactions/${r.txId}">${r.txId.slice(0, 14)}…</a>`,
    r.reason,
    r.transaction ? html`${code(r.transaction)}${r.refundedBy ? html` by ${r.refundedBy}` : ""}` : "—",
    r.lastError ?? "",
    admin && r.status === "owed" ? markForm(base, r) : "",
  ]);
  return page(
    ctx,
    "refunds",
    "Refunds",
    html`<section><p>Only a failure of the payer's is charged: a payment settled for an operation that then failed for a reason of the service's is owed back, once.</p>${who}${owed}</section>
<section>${filter}</section>
<section aria-labelledby="list"><h2 id="list">Refunds, newest first</h2>${table(
      "Refunds, newest first",
      ["Payment", "Owed since", "State", "Amount", "Payer", "Batch", "Why", "Refund transaction", "Last problem", ""],
      rows,
      "No refund matches.",
    )}${olderPager(`${base}/console/refunds`, { status: query.status }, list.next)}</section>`,
  );
}
