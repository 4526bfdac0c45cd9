import { badRequest, conflict, notFound } from "../errors";
import type { DeliveryRow, EndpointRow } from "../store/webhook-admin";
import type { DeliveryStatus } from "../store/webhook-deliveries";
import type { OperatorRecord } from "../store/operators";
import { replayDelivery } from "../usecases/webhook-replay";
import type { Services } from "../usecases/services";
import { paged } from "./paging";

/** At most this many failed deliveries are sent again by one replay of a time range. */
export const REPLAY_RANGE_MAX = 500;

/** Every tenant's webhook endpoints with their backlog, a page at a time. */
export async function listEndpoints(
  services: Services,
  query: { before?: string; disabled?: boolean },
): Promise<{ items: EndpointRow[]; next: string | null }> {
  if (query.before && !/^wh_[0-9a-f]{1,64}$/.test(query.before))
    throw badRequest("before must be the `next` cursor of an earlier page", { field: "before" });
  return paged(
    (limit) => services.webhookAdmin.endpoints({ limit, before: query.before, disabled: query.disabled }),
    (last) => last.id,
  );
}

/** An endpoint and a page of its deliveries (every attempt of each), newest first. */
export async function endpointDetail(
  services: Services,
  id: string,
  query: { before?: string; status?: DeliveryStatus; from?: string; to?: string },
): Promise<{ endpoint: EndpointRow; deliveries: DeliveryRow[]; next: string | null }> {
  const endpoint = await knownEndpoint(services, id);
  if (query.before && !/^\d{1,18}$/.test(query.before))
    throw badRequest("before must be the `next` cursor of an earlier page", { field: "before" });
  const page = await paged(
    (limit) => services.webhookAdmin.deliveries(endpoint.id, { ...query, limit }),
    (last) => last.id,
  );
  return { endpoint, deliveries: page.items, next: page.next };
}

/** Delivers one delivery's event again now (as its tenant's redeliver does), written to the audit log. */
export async function replayOne(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryRow> {
  const endpoint = await knownEndpoint(services, endpointId);
  const replayed = await replayDelivery(services, endpoint, deliveryId);
  await services.auditLog.record({
    actor: operator.email,
    action: "webhook.replay",
    target: endpoint.id,
    before: { deliveryId },
    after: { deliveryId: replayed.id, eventId: replayed.eventId },
  });
  return (
    await services.webhookAdmin.deliveries(endpoint.id, { limit: 1, before: String(BigInt(replayed.id) + 1n) })
  )[0];
}

/** Delivers again every failed delivery of an endpoint created in [from, to) (at most REPLAY_RANGE_MAX), audited. */
export async function replayFailed(
  services: Services,
  operator: OperatorRecord,
  endpointId: string,
  range: { from: string; to: string },
): Promise<DeliveryRow[]> {
  const endpoint = await knownEndpoint(services, endpointId);
  if (Date.parse(range.from) >= Date.parse(range.to)) throw badRequest("to must be after from", { field: "to" });
  if (endpoint.disabledAt)
    throw conflict(
      `Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): its owner enables it first`,
      { field: "id" },
    );
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
  const newest = await services.webhookAdmin.deliveries(endpoint.id, {
    limit: replayed.length,
    before: String(BigInt(replayed[replayed.length - 1]) + 1n),
  });
  return newest.filter((d) => replayed.includes(d.id));
}

/** Disables an endpoint for every delivery (its owner may enable it again with PATCH), audited. */
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
    before: { disabledAt: endpoint.disabledAt },
    after: { disabledAt: after.disabledAt, disabledReason: after.disabledReason },
  });
  return after;
}

async function knownEndpoint(services: Services, id: string): Promise<EndpointRow> {
  const endpoint = await services.webhookAdmin.endpoint(id);
  if (!endpoint) throw notFound(`No webhook endpoint ${id}`, { field: "id" });
  return endpoint;
}
