import type { BatchRow } from "../../store/batch-search";
import { roleAllows } from "../../store/operators";
import type { BatchDetail } from "../../wire/console";
import { actionForm, badge, code, facts, field, html, pager, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";

const STATUSES = ["", "prepared", "sending", "success", "rejected"];

/** The transactions page: the search form and a page of batches, newest first. */
export function transactionsPage(
  ctx: PageContext,
  query: { q?: string; status?: string },
  list: { items: BatchRow[]; next: string | null },
): string {
  const { base } = ctx;
  const search = html`<form method="get" action="${base}/console/transactions" class="inline" role="search" aria-label="Search transactions">
${field("q", "txId, hash, address or API key id", { name: "q", value: query.q ?? "" })}
${field("status", "Status", { name: "status", value: query.status ?? "", options: STATUSES })}
<button type="submit">Search</button></form>`;
  const rows = list.items.map((b) => [
    html`<a href="${base}/console/transactions/${b.txId}">${b.txId.slice(0, 18)}…</a>`,
    time(b.createdAt),
    b.method,
    b.executionMode,
    badge(b.status),
    b.chainId,
    code(b.signer),
    b.apiKeyId ? code(b.apiKeyId) : html`<span class="muted">x402</span>`,
    b.hashes.map((h) => html`${code(h)} `),
  ]);
  return page(
    ctx,
    "transactions",
    "Transactions",
    html`<section>${search}</section>
<section aria-labelledby="found"><h2 id="found">Batches</h2>
${table("Batches, newest first", ["txId", "Prepared", "Method", "Execution", "Status", "Chain", "Signer", "Key", "Hashes"], rows, "No batch matches.")}
${pager(`${base}/console/transactions`, { q: query.q, status: query.status }, list.next)}</section>`,
  );
}

/** One batch: what it is, its transactions with the operator's actions, its timeline, events and payments. */
export function transactionPage(ctx: PageContext, d: BatchDetail): string {
  const { batch } = d;
  const admin = roleAllows(ctx.operator.role, "admin");
  const about = facts([
    ["txId", code(batch.txId)],
    ["Status", badge(batch.status)],
    ["Method", batch.method],
    ["Execution", batch.executionMode],
    ["Chain", batch.chainId],
    ["Signer", code(batch.signer)],
    ["API key", batch.apiKeyId ? code(batch.apiKeyId) : "none (paid with x402)"],
    ["Prepared", time(batch.createdAt)],
    ["Sent", time(batch.sentAt)],
    ["Ended", time(batch.completedAt)],
    ["Error", batch.error ?? html`<span class="muted">—</span>`],
  ]);
  const transactions = d.transactions.map(
    (
      t,
    ) => html`<section aria-labelledby="tx-${t.index}"><h3 id="tx-${t.index}">Transaction ${t.index + 1} ${badge(t.status)}</h3>
${facts([
  ["Hash", code(t.hash)],
  ["From → to", html`${code(t.from)} → ${code(t.to)}`],
  ["Nonce", t.nonce],
  ["Fees (max, tip)", `${t.maxFeePerGas} / ${t.maxPriorityFeePerGas} wei`],
  ["Block", t.blockNumber ?? "—"],
  ["Gas used", t.gasUsed ?? "—"],
  ["Replaced", t.replaced.length ? t.replaced.map((r) => html`${code(r.hash)} (${time(r.replacedAt)}) `) : "—"],
  ["Waiting", t.waiting ?? "—"],
  ["Reorgs", t.reorgs],
  ["Error", t.error ?? "—"],
])}
${admin && t.actions.length ? actions(ctx, batch.txId, t.index, t.nonce) : ""}
</section>`,
  );
  const timeline = html`<ol class="timeline">${d.timeline.map((s) => html`<li>${time(s.at)} <strong>${s.what}</strong>${s.index === null ? "" : ` (transaction ${s.index + 1})`} ${s.hash ? code(s.hash) : ""} <span>${s.detail}</span></li>`)}</ol>`;
  const payments = table(
    "Payments of this batch",
    ["Payment", "Step", "Status", "Amount", "Payer", "Settlement", "Reason"],
    d.payments.map((p) => [
      html`<a href="${ctx.base}/console/payments/${p.id}">${p.id.slice(0, 8)}…</a>`,
      p.subject.split(":")[0],
      badge(p.status),
      p.amount,
      code(p.payer),
      code(p.settlementTransaction),
      p.releaseReason ?? "",
    ]),
    "No x402 payment (an API key's credits paid, or nothing yet).",
  );
  const events = table(
    "Events of this batch",
    ["Event", "Type", "When", "Data"],
    d.events.map((e) => [
      e.id,
      e.type,
      time(e.timestamp),
      html`<details><summary>data</summary><pre>${JSON.stringify(e.data, null, 2)}</pre></details>`,
    ]),
    "No event kept (they are pruned after EVENT_RETENTION_DAYS).",
  );
  return page(
    ctx,
    "transactions",
    `Batch ${batch.txId.slice(0, 18)}…`,
    html`<section aria-labelledby="about"><h2 id="about">The batch</h2>${about}
<h3>Request</h3><pre>${JSON.stringify(batch.body, null, 2)}</pre>
${batch.outcome ? html`<h3>Outcome</h3><pre>${JSON.stringify(batch.outcome, null, 2)}</pre>` : ""}</section>
<section aria-labelledby="txs"><h2 id="txs">Transactions</h2>${transactions}</section>
<section aria-labelledby="timeline"><h2 id="timeline">Timeline</h2>${timeline}</section>
<section aria-labelledby="payments"><h2 id="payments">Payments</h2>${payments}</section>
<section aria-labelledby="events"><h2 id="events">Events</h2>${events}</section>`,
  );
}

function actions(ctx: PageContext, txId: string, index: number, nonce: number): Html {
  const at = (what: string) => `${ctx.base}/console/api/transactions/${txId}/${what}`;
  const n = index + 1;
  return html`<div aria-label="Actions on transaction ${n}" role="group">
${actionForm({ action: at("rebroadcast"), label: "Re-broadcast now", hidden: { index }, confirm: `Send transaction ${n} to the node again now (the same signed bytes)?`, done: `Transaction ${n} was sent again.` })}
${actionForm({ action: at("replace"), label: "Replace with higher fees", hidden: { index }, confirm: `Replace transaction ${n} with the same one at higher fees (at least 12.5% more)? The relayer pays the difference.`, done: `Transaction ${n} was replaced with higher fees.` })}
${actionForm({ action: at("cancel"), label: "Cancel", danger: true, hidden: { index }, confirm: `Cancel transaction ${n}: replace it with a no-op at nonce ${nonce}? Once the no-op is mined the batch ends rejected, its payment released.`, done: `Transaction ${n} is being cancelled: a no-op took its place.` })}
</div>`;
}
