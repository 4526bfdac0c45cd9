import { roleAllows } from "../../store/operators";
import type { EndpointRow } from "../../store/webhook-admin";
import type { ListPage } from "../paging";
import { DELIVERY_EVENT_TYPES, DELIVERY_STATUSES } from "../queries";
import type { DeliveryView } from "../webhook-attempts";
import { filterForm, filteredBy, kept, type FilterError } from "./filters";
import { actionForm, badge, facts, field, hashOf, html, number, pager, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";
import { endpointState, tenantOf } from "./webhooks";

const FILTERS = ["status", "type", "from", "to"];

/** Every attempt of a delivery: the request (headers, the body they share) and the answer, as a provider shows them. */
function attemptsOf(d: DeliveryView): Html {
  if (!d.attempts.length) return html`<span class="muted">none yet</span>`;
  const summary = d.attempts.map((a) => a.response.statusCode ?? "no answer").join(", ");
  const cut =
    d.requestBodyBytes > d.requestBody.length
      ? ` (first ${d.requestBody.length} of ${number(d.requestBodyBytes)} bytes)`
      : "";
  return html`<details id="attempts-${d.id}" class="attempts"><summary>${d.attempts.length} attempt${d.attempts.length > 1 ? "s" : ""}: ${summary}</summary>
<h4>Request body${cut}</h4><pre class="body">${d.requestBody}</pre>
<ol class="plain">${d.attempts.map(
    (a) => html`<li><h4>Attempt ${a.attempt}, ${time(a.at)}, ${number(a.durationMs)} ms</h4>
<p><strong>Request</strong> ${a.request.method} <code>${a.request.url}</code></p>
<pre class="headers">${Object.entries(a.request.headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n")}</pre>
<p><strong>Response</strong> ${a.response.statusCode === null ? "no answer" : html`status ${a.response.statusCode}`}${a.response.error ? html` — ${a.response.error}` : ""}</p>
${a.response.body === null ? html`<p class="muted">No body.</p>` : html`<pre class="body">${a.response.body}</pre>`}</li>`,
  )}</ol></details>`;
}

function deliveryRow(ctx: PageContext, e: EndpointRow, d: DeliveryView, admin: boolean): unknown[] {
  const here = (id: string) => html`<a href="${ctx.base}/console/webhooks/${e.id}#delivery-${id}">${id}</a>`;
  return [
    html`<span id="delivery-${d.id}">${d.id}</span>`,
    html`${d.eventType} <span class="muted">(event ${d.eventId})</span>`,
    d.txId ? hashOf(d.txId, { href: `${ctx.base}/console/transactions/${d.txId}` }) : "—",
    html`${badge(e.state === "disabled" && d.status === "pending" ? "paused" : d.status)}${d.replayOf ? html` <span class="replay">replay of delivery ${here(d.replayOf)}</span>` : ""}${d.replays.length ? html` <span class="replays">replayed as ${d.replays.map((r, i) => html`${i ? ", " : ""}${here(r)}`)}</span>` : ""}${d.waiting ? html`<br><span class="waiting">${d.waiting}</span>` : ""}`,
    attemptsOf(d),
    d.status === "pending" && !d.heldBehind && e.state !== "disabled"
      ? time(d.nextAttemptAt)
      : html`<span class="muted">—</span>`,
    admin && e.state !== "disabled"
      ? actionForm({
          action: `${ctx.base}/console/api/webhooks/${e.id}/replay`,
          label: "Replay",
          hidden: { deliveryId: d.id },
          confirm: `Deliver event ${d.eventId} (${d.eventType}) to ${e.url} again now?`,
          done: `Delivery ${d.id} is being replayed.`,
        })
      : "",
  ];
}

function changes(ctx: PageContext, e: EndpointRow): Html {
  const api = `${ctx.base}/console/api/webhooks/${e.id}`;
  if (e.state === "disabled")
    return html`<section aria-labelledby="enable"><h2 id="enable">Enable the endpoint</h2>
<p>Its ${number(e.pending)} deliveries owed are attempted again at once, its failures forgotten.</p>
${actionForm({ action: `${api}/enable`, label: "Enable", confirm: `Enable ${e.url} again? Its deliveries owed are attempted at once.`, done: "The endpoint is enabled." })}</section>`;
  const now = new Date();
  const local = (d: Date) => d.toISOString().slice(0, 19);
  return html`<section aria-labelledby="bulk"><h2 id="bulk">Replay failed deliveries</h2>
${actionForm({
  action: `${api}/replay-failed`,
  label: "Replay every failed delivery in this range",
  confirm: `Deliver every failed delivery of ${e.id} created in this range again now?`,
  done: "The failed deliveries of the range are being replayed.",
  fields: html`${field("from", "From (UTC)", { name: "from", type: "datetime-local", required: true, value: local(new Date(now.getTime() - 24 * 3_600_000)), dataType: "time" })}${field("to", "To (UTC)", { name: "to", type: "datetime-local", required: true, value: local(new Date(now.getTime() + 60_000)), dataType: "time" })}`,
})}
<h2>Disable the endpoint</h2>
${actionForm({ action: `${api}/disable`, label: "Disable", danger: true, confirm: `Disable ${e.url}? Nothing is delivered to it until it is enabled again.`, done: "The endpoint is disabled.", fields: field("reason", "Reason (told to its owner)", { name: "reason" }) })}
</section>`;
}

/** An endpoint, its deliveries (every attempt's request and response), replays linked both ways, enable or disable. */
export function webhookPage(
  ctx: PageContext,
  d: { endpoint: EndpointRow },
  values: Record<string, string | undefined>,
  list: ListPage<DeliveryView> | undefined,
  error?: FilterError,
): string {
  const { base } = ctx;
  const e = d.endpoint;
  const admin = roleAllows(ctx.operator.role, "admin");
  const form = filterForm({
    action: `${base}/console/webhooks/${e.id}`,
    label: "Filter deliveries",
    values,
    error,
    fields: [
      { name: "status", label: "Status", kind: "select", options: ["", ...DELIVERY_STATUSES] },
      {
        name: "type",
        label: "Event type",
        kind: "select",
        // The types it subscribes to (every type when it names none).
        options: ["", ...(e.eventTypes.length ? [...e.eventTypes, "webhook.test"] : DELIVERY_EVENT_TYPES)],
      },
      { name: "from", label: "Created from", kind: "time" },
      { name: "to", label: "to", kind: "time" },
    ],
  });
  const results = list
    ? html`${table(
        "Deliveries, newest first",
        ["Delivery", "Event", "Batch", "Status", "Attempts (request and response)", "Next attempt", "Action"],
        list.items.map((r) => deliveryRow(ctx, e, r, admin)),
        "No delivery matches.",
      )}
${pager(`${base}/console/webhooks/${e.id}`, kept(values, FILTERS), list)}`
    : html`<p class="muted">Nothing is listed until the filter is corrected.</p>`;
  return page(
    ctx,
    "webhooks",
    `Webhook ${e.id}`,
    html`<section aria-labelledby="about"><h2 id="about">The endpoint</h2>${facts([
      ["URL", html`<code>${e.url}</code>`],
      ["Tenant", tenantOf(base, e)],
      ["Events", e.eventTypes.length ? e.eventTypes.join(", ") : "every type"],
      ["State", endpointState(e)],
      ["Owed, failed, delivered", `${number(e.pending)}, ${number(e.failed)}, ${number(e.delivered)}`],
    ])}</section>
${admin ? changes(ctx, e) : ""}
<section aria-labelledby="deliveries"><h2 id="deliveries">Deliveries${filteredBy(values, { status: "status", type: "event type", from: "from", to: "to" })}</h2>
${form}
${results}</section>`,
  );
}
