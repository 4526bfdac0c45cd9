import { conflict, notFound } from "../errors";
import type { WebhookDispatcher } from "../events/dispatcher";
import type { DeliveryRecord, WebhookDeliveries } from "../store/webhook-deliveries";
import type { WebhookEndpointRecord } from "../store/webhooks";

/** What a redelivery uses. */
export type ReplayServices = {
  webhookDeliveries: Pick<WebhookDeliveries, "redeliver">;
  webhookDispatcher: Pick<WebhookDispatcher, "wake">;
};

/**
 * Delivers a delivery's event to its endpoint again, now: a new delivery outside the ordering (same webhook-id, so
 * receivers drop duplicates by it), and the dispatcher woken. The tenant's POST /webhooks/{id}/deliveries/{deliveryId}/
 * redeliver and the operator console's replays both come here. A disabled endpoint is refused (409): it would never
 * be delivered.
 */
export async function replayDelivery(
  services: ReplayServices,
  endpoint: Pick<WebhookEndpointRecord, "id" | "disabledAt" | "disabledReason">,
  deliveryId: string,
): Promise<DeliveryRecord> {
  if (endpoint.disabledAt)
    throw conflict(
      `Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): enable it first (PATCH { enabled: true })`,
      { field: "id" },
    );
  const delivery = await services.webhookDeliveries.redeliver(endpoint.id, deliveryId);
  if (!delivery)
    throw notFound(`No delivery ${deliveryId} of webhook endpoint ${endpoint.id}`, { field: "deliveryId" });
  services.webhookDispatcher.wake();
  return delivery;
}
