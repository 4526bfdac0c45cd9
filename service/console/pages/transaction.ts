import { roleAllows } from "../../store/operators";
import type { BatchDetail } from "../../wire/console";
import { gwei, usdc } from "../timeline";
import { actionForm, badge, code, facts, hashOf, html, number, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";

type TransactionView = BatchDetail["transactions"][number];

/** Its fee cap against the chain's base fee now: whether it can be mined at all, and by how much. */
function feeVersusBaseFee(t: TransactionView): Html | string {
  const fees = `at most ${gwei(t.maxFeePerGas)}, tip ${gwei(t.maxPriorityFeePerGas)}`;
  if (t.baseFeePerGas === null) return fees;
  const cap = BigInt(t.maxFeePerGas);
  const base = BigInt(t.baseFeePerGas);
  if (cap < base)
    return html`${fees}; ${badge("failed")} <strong>below the base fee now (${gwei(t.baseFeePerGas)})</strong>: it cannot be mined until the base fee falls under its cap or it is replaced with higher fees`;
  const times = base > 0n ? Number((cap * 100n) / base) / 100 : null;
  return `${fees}; the base fee now is ${gwei(t.baseFeePerGas)}${times === null ? "" : ` (its cap is ${times}× that)`}`;
}

function pendingFor(t: TransactionView): string {
  const p = t.pending;
  if (!p) return "—";
  const blocks =
    p.blocks === null
      ? "blocks not known"
      : `${p.estimated ? "≈ " : ""}${number(p.blocks)} block${p.blocks === 1 ? "" : "s"}${p.sinceBlock === null ? (p.estimated ? " (estimated from its time)" : "") : ` (since block ${p.sinceBlock})`}`;
  return `${blocks}, ${p.seconds === null ? "time not known" : `${number(p.seconds)} s`}`;
}

function transactionSection(ctx: PageContext, d: BatchDetail, t: TransactionView): Html {
  const explorer = d.chain?.explorer;
  const admin = roleAllows(ctx.operator.role, "admin");
  const n = t.index + 1;
  return html`<section aria-labelledby="tx-${t.index}" class="transaction" data-state="${t.state}"><h3 id="tx-${t.index}">Transaction ${n} ${badge(t.state)}</h3>
<p class="state-text">${t.stateText}</p>
${facts([
  [t.liveHash ? "Live hash" : "Hash", hashOf(t.hash, { explorer, kind: "tx", full: true })],
  [
    "From → to",
    html`${hashOf(t.from, { explorer, kind: "address" })} → ${hashOf(t.to, { explorer, kind: "address" })}`,
  ],
  ["Nonce", t.nonce],
  ["Pending for", pendingFor(t)],
  ["Fees", t.pending ? feeVersusBaseFee(t) : `at most ${gwei(t.maxFeePerGas)}, tip ${gwei(t.maxPriorityFeePerGas)}`],
  ["Block", t.blockNumber === null ? "—" : hashOf(String(t.blockNumber), { explorer, kind: "block", full: true })],
  ["Gas used", t.gasUsed === null ? "—" : `${number(Number(t.gasUsed))} gas`],
  ["Revert reason", t.revertReason ?? "—"],
  [
    "Replaced (no longer live)",
    t.replaced.length
      ? html`<ul class="plain">${t.replaced.map((r) => html`<li>${hashOf(r.hash, { explorer, kind: "tx" })} at most ${gwei(r.maxFeePerGas ?? "")}, replaced ${time(r.replacedAt)}</li>`)}</ul>`
      : "—",
  ],
  ["Waiting because", t.waiting ?? "—"],
  ["Reorgs", t.reorgs],
  ["Error", t.error ?? "—"],
])}
${admin && t.actions.length ? actions(ctx, d.batch.txId, t) : ""}
</section>`;
}

/** What the operator may still do to it: a cancellation can be sent again or outbid, not cancelled again. */
function actions(ctx: PageContext, txId: string, t: TransactionView): Html {
  const at = (what: string) => `${ctx.base}/console/api/transactions/${txId}/${what}`;
  const n = t.index + 1;
  const cancelling = t.state === "cancelling";
  const what = cancelling ? "the cancellation" : `transaction ${n}`;
  return html`<div aria-label="Actions on transaction ${n}" role="group" class="actions">
${t.actions.includes("rebroadcast") ? actionForm({ action: at("rebroadcast"), label: cancelling ? "Re-broadcast the cancellation" : "Re-broadcast now", hidden: { index: t.index }, confirm: `Send ${what} to the node again now (the same signed bytes)?`, done: `${cancelling ? "The cancellation" : `Transaction ${n}`} was sent again.` }) : ""}
${t.actions.includes("replace") ? actionForm({ action: at("replace"), label: cancelling ? "Replace the cancellation with higher fees" : "Replace with higher fees", hidden: { index: t.index }, confirm: `Replace ${what} with the same one at higher fees (at least 12.5% more)? The relayer pays the difference.`, done: `${cancelling ? "The cancellation" : `Transaction ${n}`} was replaced with higher fees.` }) : ""}
${t.actions.includes("cancel") ? actionForm({ action: at("cancel"), label: "Cancel", danger: true, hidden: { index: t.index }, confirm: `Cancel transaction ${n}: replace it with a no-op at nonce ${t.nonce}? Once the no-op is mined the batch ends rejected, its payment released.`, done: `Transaction ${n} is being cancelled: a no-op took its place.` }) : ""}
</div>`;
}

/** One batch: what it is, its transactions as they stand with the operator's actions, its timeline, events and payments. */
export function transactionPage(ctx: PageContext, d: BatchDetail): string {
  const { batch } = d;
  const explorer = d.chain?.explorer;
  const about = facts([
    ["txId", hashOf(batch.txId, { full: true })],
    ["Status", badge(batch.status)],
    ["Method", batch.method],
    ["Execution", batch.executionMode],
    ["Chain", d.chain ? `${d.chain.name} (${batch.chainId})` : `${batch.chainId} (not served here)`],
    ["Signer", hashOf(batch.signer, { explorer, kind: "address" })],
    ["API key", batch.apiKeyId ? code(batch.apiKeyId) : "none (paid with x402)"],
    ["Prepared", time(batch.createdAt)],
    ["Sent", time(batch.sentAt)],
    ["Ended", time(batch.completedAt)],
    ["Error", batch.error ?? html`<span class="muted">—</span>`],
  ]);
  const timeline = html`<ol class="timeline">${d.timeline.map((s) => html`<li>${time(s.at)} <strong>${s.what}</strong>${s.index === null ? "" : ` (transaction ${s.index + 1})`} ${s.hash ? hashOf(s.hash, { explorer, kind: "tx" }) : ""} <span>${s.detail}</span></li>`)}</ol>`;
  const payments = table(
    "Payments of this batch",
    ["Payment", "Step", "Status", "Amount", "Payer", "Settlement", "Reason"],
    d.payments.map((p) => [
      html`<a href="${ctx.base}/console/payments/${p.id}">${p.id.slice(0, 8)}…</a>`,
      p.subject.split(":")[0],
      badge(p.status),
      usdc(p.amount),
      hashOf(p.payer),
      hashOf(p.settlementTransaction),
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
      html`<details id="event-${e.id}"><summary>data</summary><pre>${JSON.stringify(e.data, null, 2)}</pre></details>`,
    ]),
    "No event kept (they are pruned after EVENT_RETENTION_DAYS).",
  );
  return page(
    ctx,
    "transactions",
    `Batch ${batch.txId.slice(0, 10)}…${batch.txId.slice(-4)}`,
    html`<section aria-labelledby="about"><h2 id="about">The batch</h2>${about}
<details id="request"><summary>Request, as it was parsed</summary><pre>${JSON.stringify(batch.body, null, 2)}</pre></details>
${batch.outcome ? html`<details id="outcome"><summary>Outcome</summary><pre>${JSON.stringify(batch.outcome, null, 2)}</pre></details>` : ""}</section>
<section aria-labelledby="txs"><h2 id="txs">Transactions</h2>${d.transactions.map((t) => transactionSection(ctx, d, t))}</section>
<section aria-labelledby="timeline"><h2 id="timeline">Timeline</h2>${timeline}</section>
<section aria-labelledby="payments"><h2 id="payments">Payments</h2>${payments}</section>
<section aria-labelledby="events"><h2 id="events">Events</h2>${events}</section>`,
    { live: true },
  );
}
