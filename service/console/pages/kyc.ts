import { KYC_STATUSES } from "../../store/kyc";
import { roleAllows } from "../../store/operators";
import type { Investor } from "../../wire/console-changes";
import { actionForm, badge, code, facts, field, html, olderPager, time } from "./html";
import { page, type PageContext } from "./layout";

/** The review queue: each investor's details, the wallet it proved and the message it signed, and the decision. */
export function kycPage(ctx: PageContext, status: string, list: { items: Investor[]; next: string | null }): string {
  const { base } = ctx;
  const reviewer = roleAllows(ctx.operator.role, "reviewer");
  const filter = html`<form method="get" action="${base}/console/kyc" class="inline" aria-label="Filter investors">${field("status", "Status", { name: "status", value: status, options: [...KYC_STATUSES] })}<button type="submit">Show</button></form>`;
  const cards = list.items.map((i) => {
    const api = `${base}/console/api/kyc/${i.id}`;
    const name = [i.firstName, i.lastName].filter(Boolean).join(" ") || i.email;
    const decide =
      reviewer && (i.status === "submitted" || i.status === "invited" || i.status === "approved")
        ? html`<div role="group" aria-label="Decision on ${i.email}">
${i.status === "submitted" ? actionForm({ action: `${api}/approve`, label: `Approve ${i.email}`, confirm: `Approve ${name} (${i.email}) with wallet ${i.walletAddress}?`, done: `${i.email} is approved.` }) : ""}
${actionForm({ action: `${api}/reject`, label: `Reject ${i.email}`, danger: true, confirm: `Reject ${name} (${i.email})? The reason is sent to the issuer and shown to the investor.`, done: `${i.email} is rejected.`, fields: field(`reason-${i.id}`, "Reason", { name: "reason", required: true }) })}
</div>`
        : "";
    return html`<section aria-labelledby="inv-${i.id}"><h2 id="inv-${i.id}">${name} ${badge(i.status)}</h2>
${facts([
  ["E-mail", i.email],
  ["Invited by", html`${i.keyEmail ?? ""} ${code(i.keyId)}`],
  ["Country", i.country ?? "—"],
  ["Verified wallet", code(i.walletAddress)],
  ["Submitted", time(i.submittedAt)],
  ["Decided", i.reviewedAt ? html`${time(i.reviewedAt)} by ${i.decidedBy ?? i.reviewedBy}` : "—"],
  ["Reason", i.reason ?? "—"],
])}
${i.signedMessage ? html`<details><summary>The message the wallet signed</summary><pre>${i.signedMessage}</pre></details>` : ""}
${decide}</section>`;
  });
  return page(
    ctx,
    "kyc",
    "KYC review",
    html`<section>${filter}</section>${cards.length ? cards : html`<p class="muted">No investor is ${status}.</p>`}${olderPager(`${base}/console/kyc`, { status }, list.next)}`,
  );
}
