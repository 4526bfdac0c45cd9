import { badRequest, conflict, notFound } from "../errors";
import type { DeliveryFilter, DeliveryRow, EndpointRow } from "../store/webhook-admin";
import type { OperatorRecord } from "../store/operators";
import { replayDelivery } from "../usecases/webhook-replay";
import type { Services } from "../usecases/services";
import { listPage, parseEndpointCursor, parseIdCursor, type ListPage } from "./paging";
import type { DeliveriesQuery, EndpointsQuery } from "./queries";
import { deliveryView, type DeliveryView } from "./webhook-attempts";

/** At most this many failed deliveries are sent again by one replay of a time range. */
export const REPLAY_RANGE_MAX = 500;

/** Every tenant's webhook endpoints with their backlog and state, a page at a time both ways. */
export async function listEndpoints(services: Services, query: EndpointsQuery): Promise<ListPage<EndpointRow>> {
  const filter = { state: query.state, owed: query.owed === "1" };
  const before = parseEndpointCursor(query.before, "before");
  const after = parseEndpointCursor(query.after, "after");
  return listPage(
    (limit) => services.webhookAdmin.endpoints({ ...filter, before, after, limit }),
    (first) => services.webhookAdmin.countEndpoints(filter, first?.id),
    (row) => row.id,
  );
}

/**
 * An endpoint and a page of its deliveries (every attempt of each, what it sends, what holds it back), newest first,
 * by status, event type and time range.
 */
export async function endpointDetail(
  services: Services,
  id: string,
  query: DeliveriesQuery,
): Promise<{ endpoint: EndpointRow } & ListPage<DeliveryView>> {
  const endpoint = await knownEndpoint(services, id);
  const filter: DeliveryFilter = { status: query.status, eventType: query.type, from: query.from, to: query.to };
  const before = parseIdCursor(query.before, "before");
  const after = parseIdCursor(query.after, "after");
  const page = await listPage(
    (limit) => services.webhookAdmin.deliveries(endpoint.id, { ...filter, before, after, limit }),
    (first) => services.webhookAdmin.countDeliveries(endpoint.id, filter, first?.id),
    (row) => row.id,
  );
  return { endpoint, ...page, items: page.items.map((d) => deliveryView(endpoint, d)) };
}

/** Delivers one delivery's event again now (as its tenant's redeliver does), linked to it, written to the audit log. */
export async function replayOne(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  const endpoint = await knownEndpoint(services, endpointId);
  const replayed = await replayDelivery(services, endpoint, deliveryId);
  await services.auditLog.record({
    actor: operator.email,
    action: "webhook.replay",
    target: endpoint.id,
    before: { deliveryId },
    after: { deliveryId: replayed.id, eventId: replayed.eventId },
  });
  return deliveryView(endpoint, (await services.webhookAdmin.delivery(endpoint.id, replayed.id))!);
}

/** Delivers again every failed delivery of an endpoint created in [from, to) (at most REPLAY_RANGE_MAX), audited. */
export async function replayFailed(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
  range: { from: string; to: string },
): Promise<DeliveryView[]> {
  const endpoint = await knownEndpoint(services, endpointId);
  if (Date.parse(range.from) >= Date.parse(range.to)) throw badRequest("to must be after from", { field: "to" });
  if (endpoint.disabledAt)
    throw conflict(`Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): enable it first`, {
      field: "id",
    });
  const failed = await services.webhookAdmin.failedIn(endpoint.id, range.from, range.to, REPLAY_RANGE_MAX);
  const replayed: string[] = [];
  for (const deliveryId of failed) replayed.push((await replayDelivery(services, endpoint, deliveryId)).id);
  await services.auditLog.record({
    actor: operator.email,
    action: "webhook.replay-failed",
    target: endpoint.id,
    before: { from: range.from, to: range.to, failed },
    after: { replayed },
  });
  if (!replayed.length) return [];
  const newest: DeliveryRow[] = await services.webhookAdmin.deliveries(endpoint.id, {
    limit: replayed.length,
    before: String(BigInt(replayed[replayed.length - 1]) + 1n),
  });
  return newest.filter((d) => replayed.includes(d.id)).map((d) => deliveryView(endpoint, d));
}

/** Disables an endpoint for every delivery (the operator, or its owner with PATCH, enables it again), audited. */
export async function disableEndpoint(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
  reason: string | undefined,
): Promise<EndpointRow> {
  const endpoint = await knownEndpoint(services, endpointId);
  const why = `disabled by the operator ${operator.email}${reason ? `: ${reason}` : ""}`;
  if (!(await services.webhookAdmin.disable(endpoint.id, why)))
    throw conflict(`Webhook endpoint ${endpoint.id} is already disabled (${endpoint.disabledReason})`, { field: "id" });
  const after = (await services.webhookAdmin.endpoint(endpoint.id))!;
  await services.auditLog.record({
    actor: operator.email,
    action: "webhook.disable",
    target: endpoint.id,
    before: { state: endpoint.state, disabledAt: endpoint.disabledAt },
    after: { state: after.state, disabledAt: after.disabledAt, disabledReason: after.disabledReason },
  });
  return after;
}

/**
 * Enables a disabled endpoint again (whoever disabled it: the operator, its owner, or the dispatcher after failing for
 * WEBHOOK_DISABLE_AFTER), its failures forgotten; the deliveries it is still owed are attempted at once. Audited.
 */
export async function enableEndpoint(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
): Promise<EndpointRow> {
  const endpoint = await knownEndpoint(services, endpointId);
  if (!(await services.webhookAdmin.enable(endpoint.id)))
    throw conflict(`Webhook endpoint ${endpoint.id} is not disabled (it is ${endpoint.state})`, { field: "id" });
  services.webhooks.endpointChanges++; // a dispatcher that knew of no enabled endpoint looks again
  services.webhookDispatcher.wake();
  const after = (await services.webhookAdmin.endpoint(endpoint.id))!;
  await services.auditLog.record({
    actor: operator.email,
    action: "webhook.enable",
    target: endpoint.id,
    before: { state: endpoint.state, disabledAt: endpoint.disabledAt, disabledReason: endpoint.disabledReason },
    after: { state: after.state, disabledAt: after.disabledAt },
  });
  return after;
}

async function knownEndpoint(services: Services, id: string): Promise<EndpointRow> {
  const endpoint = await services.webhookAdmin.endpoint(id);
  if (!endpoint) throw notFound(`No webhook endpoint ${id}`, { field: "id" });
  return endpoint;
}
