import type { EndpointRow } from "../../store/webhook-admin";
import type { ListPage } from "../paging";
import { ENDPOINT_STATES } from "../queries";
import { filterForm, filteredBy, kept, type FilterError } from "./filters";
import { badge, code, hashOf, html, number, pager, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";

/** An endpoint's state, named the same in the list, on its page and in the JSON: disabled, failing or active. */
export function endpointState(e: EndpointRow): Html {
  if (e.state === "disabled")
    return html`${badge("disabled")} <span>since ${time(e.disabledAt)}: ${e.disabledReason ?? "no reason given"}</span>`;
  if (e.state === "failing") return html`${badge("failing")} <span>since ${time(e.failingSince)}</span>`;
  return badge("active");
}

export const tenantOf = (base: string, e: EndpointRow): Html =>
  e.keyEmail
    ? html`${e.keyEmail} ${code(e.apiKeyId)}`
    : html`batch ${hashOf(e.txId, { href: `${base}/console/transactions/${e.txId}` })}`;

const FILTERS = ["state", "owed"];

/** Every tenant's endpoints with their state and backlog, filtered by state or by deliveries owed. */
export function webhooksPage(
  ctx: PageContext,
  values: Record<string, string | undefined>,
  list: ListPage<EndpointRow> | undefined,
  error?: FilterError,
): string {
  const { base } = ctx;
  const form = filterForm({
    action: `${base}/console/webhooks`,
    label: "Filter webhook endpoints",
    values,
    error,
    fields: [
      { name: "state", label: "State", kind: "select", options: ["", ...ENDPOINT_STATES] },
      { name: "owed", label: "With deliveries owed (enabled endpoints)", kind: "checkbox" },
    ],
  });
  const rows = (list?.items ?? []).map((e) => [
    html`<a href="${base}/console/webhooks/${e.id}">${e.id}</a>`,
    tenantOf(base, e),
    code(e.url),
    endpointState(e),
    e.pending ? html`<a href="${base}/console/webhooks/${e.id}?status=pending">${number(e.pending)}</a>` : "0",
    e.failed ? html`<a href="${base}/console/webhooks/${e.id}?status=failed">${number(e.failed)}</a>` : "0",
    number(e.delivered),
  ]);
  const results = list
    ? html`${table("Webhook endpoints", ["Endpoint", "Tenant", "URL", "State", "Owed", "Failed", "Delivered"], rows, "No webhook endpoint matches.")}
${pager(`${base}/console/webhooks`, kept(values, FILTERS), list)}`
    : html`<p class="muted">Nothing is listed until the filter is corrected.</p>`;
  return page(
    ctx,
    "webhooks",
    "Webhooks",
    html`<section>${form}</section>
<section aria-labelledby="endpoints"><h2 id="endpoints">Endpoints${filteredBy(values, { state: "state", owed: "with deliveries owed" })}</h2>
${results}</section>`,
  );
}
