import type { DeliveryRow, EndpointRow } from "../../store/webhook-admin";
import { roleAllows } from "../../store/operators";
import { actionForm, badge, code, facts, field, html, pager, table, time } from "./html";
import { page, type PageContext } from "./layout";

/** Every tenant's endpoints with their backlog. */
export function webhooksPage(ctx: PageContext, list: { items: EndpointRow[]; next: string | null }): string {
  const { base } = ctx;
  const rows = list.items.map((e) => [
    html`<a href="${base}/console/webhooks/${e.id}">${e.id}</a>`,
    e.keyEmail ? html`${e.keyEmail} ${code(e.apiKeyId)}` : html`batch ${code(e.txId)}`,
    code(e.url),
    e.disabledAt
      ? html`${badge("disabled")} ${e.disabledReason}`
      : e.failingSince
        ? html`${badge("failed")} failing since ${time(e.failingSince)}`
        : badge("active"),
    e.pending,
    e.failed,
    e.delivered,
  ]);
  return page(
    ctx,
    "webhooks",
    "Webhooks",
    html`<section aria-labelledby="endpoints"><h2 id="endpoints">Endpoints</h2>
${table("Webhook endpoints", ["Endpoint", "Tenant", "URL", "State", "Owed", "Failed", "Delivered"], rows, "No webhook endpoint.")}
${pager(`${base}/console/webhooks`, {}, list.next)}</section>`,
  );
}

/** An endpoint's deliveries and their attempts, with the replays and the switch-off. */
export function webhookPage(
  ctx: PageContext,
  d: { endpoint: EndpointRow; deliveries: DeliveryRow[]; next: string | null },
  query: { status?: string },
): string {
  const { base } = ctx;
  const e = d.endpoint;
  const admin = roleAllows(ctx.operator.role, "admin");
  const api = `${base}/console/api/webhooks/${e.id}`;
  const attempts = (r: DeliveryRow) =>
    r.attempts.length
      ? html`<ul>${r.attempts.map((a) => html`<li>#${a.attempt} ${time(a.at)}: ${a.statusCode ?? "no answer"}, ${a.durationMs} ms${a.error ? html` — ${a.error}` : ""}</li>`)}</ul>`
      : html`<span class="muted">none yet</span>`;
  const rows = d.deliveries.map((r) => [
    r.id,
    html`${r.eventType} <span class="muted">(event ${r.eventId})</span>`,
    r.txId ? html`<a href="${base}/console/transactions/${r.txId}">${r.txId.slice(0, 14)}…</a>` : "—",
    html`${badge(r.status)}${r.manual ? " (replay)" : ""}`,
    attempts(r),
    time(r.nextAttemptAt),
    admin && !e.disabledAt
      ? actionForm({
          action: `${api}/replay`,
          label: "Replay",
          hidden: { deliveryId: r.id },
          confirm: `Deliver event ${r.eventId} (${r.eventType}) to ${e.url} again now?`,
          done: `Delivery ${r.id} is being replayed.`,
        })
      : "",
  ]);
  const now = new Date();
  const dayAgo = new Date(now.getTime() - 24 * 3_600_000);
  const local = (d: Date) => d.toISOString().slice(0, 19);
  const bulk = html`<section aria-labelledby="bulk"><h2 id="bulk">Replay failed deliveries</h2>
${actionForm({
  action: `${api}/replay-failed`,
  label: "Replay every failed delivery in this range",
  confirm: `Deliver every failed delivery of ${e.id} created in this range again now?`,
  done: "The failed deliveries of the range are being replayed.",
  fields: html`${field("from", "From (UTC)", { name: "from", type: "datetime-local", required: true, value: local(dayAgo), dataType: "time" })}${field("to", "To (UTC)", { name: "to", type: "datetime-local", required: true, value: local(new Date(now.getTime() + 60_000)), dataType: "time" })}`,
})}
<h2>Disable the endpoint</h2>
${actionForm({ action: `${api}/disable`, label: "Disable", danger: true, confirm: `Disable ${e.url}? Nothing is delivered to it until its owner enables it again.`, done: "The endpoint is disabled.", fields: field("reason", "Reason (told to its owner)", { name: "reason" }) })}
</section>`;
  return page(
    ctx,
    "webhooks",
    `Webhook ${e.id}`,
    html`<section aria-labelledby="about"><h2 id="about">The endpoint</h2>${facts([
      ["URL", code(e.url)],
      ["Tenant", e.keyEmail ? html`${e.keyEmail} ${code(e.apiKeyId)}` : html`batch ${code(e.txId)}`],
      ["Events", e.eventTypes.length ? e.eventTypes.join(", ") : "every type"],
      [
        "State",
        e.disabledAt ? html`${badge("disabled")} since ${time(e.disabledAt)}: ${e.disabledReason}` : badge("active"),
      ],
      ["Failing since", time(e.failingSince)],
      ["Owed, failed, delivered", `${e.pending}, ${e.failed}, ${e.delivered}`],
    ])}</section>
${admin && !e.disabledAt ? bulk : ""}
<section aria-labelledby="deliveries"><h2 id="deliveries">Deliveries</h2>
<form method="get" action="${base}/console/webhooks/${e.id}" class="inline" aria-label="Filter deliveries">${field("status", "Status", { name: "status", value: query.status ?? "", options: ["", "pending", "delivering", "delivered", "failed"] })}<button type="submit">Filter</button></form>
${table("Deliveries, newest first", ["Delivery", "Event", "Batch", "Status", "Attempts (status code, latency)", "Next retry", "Action"], rows, "No delivery.")}
${pager(`${base}/console/webhooks/${e.id}`, { status: query.status }, d.next)}</section>`,
  );
}
