import type { AuditEntry } from "../../store/audit-log";
import { code, field, html, pager, table, time } from "./html";
import { page, type PageContext } from "./layout";

const shown = (v: unknown) =>
  v === null || v === undefined ? html`<span class="muted">—</span>` : html`<pre>${JSON.stringify(v, null, 1)}</pre>`;

/** Every change operators made, newest first: who, what, on what, when, before and after. */
export function auditPage(
  ctx: PageContext,
  actor: string | undefined,
  list: { items: AuditEntry[]; next: string | null },
): string {
  const { base } = ctx;
  const filter = html`<form method="get" action="${base}/console/audit" class="inline" aria-label="Filter the audit log">${field("actor", "Operator", { name: "actor", value: actor ?? "", placeholder: "e-mail or admin tool" })}<button type="submit">Filter</button></form>`;
  const rows = list.items.map((e) => [time(e.at), e.actor, e.action, code(e.target), shown(e.before), shown(e.after)]);
  return page(
    ctx,
    "audit",
    "Audit log",
    html`<section>${filter}</section><section>${table("Changes, newest first", ["When", "Who", "What", "On", "Before", "After"], rows, "No change recorded.")}${pager(`${base}/console/audit`, { actor }, list.next)}</section>`,
  );
}
