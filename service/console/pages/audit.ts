import type { AuditView } from "../audit";
import type { ListPage } from "../paging";
import { filterForm, filteredBy, kept, type FilterError } from "./filters";
import { code, html, pager, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";

const FILTERS = ["actor", "action", "target", "from", "to"];
/** Changes of an entry shown before the rest fold away. */
const SHOWN = 8;

/** What changed, field by field: removed values struck, added ones marked, the unchanged ones counted. */
function diff(e: AuditView): Html {
  if (!e.changes.length && !e.unchanged) return html`<span class="muted">nothing recorded</span>`;
  const items = e.changes.map((c) => {
    const name = c.path ? html`<code>${c.path}</code> ` : "";
    if (c.change === "added") return html`<li>${name}<ins>${c.after}</ins></li>`;
    if (c.change === "removed")
      return html`<li>${name}<del>${c.before}</del> <span class="muted">(removed)</span></li>`;
    return html`<li>${name}<del>${c.before}</del> → <ins>${c.after}</ins></li>`;
  });
  const unchanged = e.unchanged
    ? html`<li class="muted">${e.unchanged} field${e.unchanged > 1 ? "s" : ""} unchanged</li>`
    : "";
  if (items.length <= SHOWN) return html`<ul class="diff">${items}${unchanged}</ul>`;
  // A record created or removed whole (a key and its thirty credit balances) shows its first fields, the rest folded.
  return html`<ul class="diff">${items.slice(0, SHOWN)}</ul><details id="audit-${e.id}"><summary>${items.length - SHOWN} more fields</summary><ul class="diff">${items.slice(SHOWN)}${unchanged}</ul></details>`;
}

/** Every change operators made, newest first: who, what, on what, when, and what changed; filtered, paged both ways. */
export function auditPage(
  ctx: PageContext,
  actions: string[],
  values: Record<string, string | undefined>,
  list: ListPage<AuditView> | undefined,
  error?: FilterError,
): string {
  const { base } = ctx;
  const form = filterForm({
    action: `${base}/console/audit`,
    label: "Filter the audit log",
    values,
    error,
    fields: [
      { name: "actor", label: "Operator", kind: "text", placeholder: "e-mail or admin tool" },
      {
        name: "action",
        label: "Action",
        kind: "select",
        options: ["", ...new Set([...actions, ...(values.action ? [values.action] : [])])],
      },
      { name: "target", label: "On", kind: "text", placeholder: "a key id, a txId, an endpoint" },
      { name: "from", label: "From", kind: "time" },
      { name: "to", label: "to", kind: "time" },
    ],
  });
  const rows = (list?.items ?? []).map((e) => [time(e.at), e.actor, e.action, code(e.target), diff(e)]);
  const results = list
    ? html`${table("Changes, newest first", ["When", "Who", "What", "On", "What changed (before → after)"], rows, "No change recorded.")}${pager(`${base}/console/audit`, kept(values, FILTERS), list)}`
    : html`<p class="muted">Nothing is listed until the filter is corrected.</p>`;
  return page(
    ctx,
    "audit",
    "Audit log",
    html`<section>${form}</section><section aria-labelledby="changes"><h2 id="changes">Changes${filteredBy(values, { actor: "by", action: "action", target: "on", from: "from", to: "to" })}</h2>${results}</section>`,
  );
}
