import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import type { Caller } from "../auth/gate";
import { conflict, notFound, validationError } from "../errors";
import { SUBSCRIBABLE_TYPES } from "../events/types";
import { responseFields } from "../wire/responses";
import { defineRoute } from "../http/route";
import { replayDelivery } from "../usecases/webhook-replay";
import type { Services } from "../usecases/services";
import { checkedUrl, endpointOf, keylessTarget } from "../usecases/webhook-endpoints";
import type { DeliveryRecord } from "../store/webhook-deliveries";
import type { WebhookEndpointRecord } from "../store/webhooks";

const { hash32, int } = responseFields;

/** Endpoints one key may have. */
const ENDPOINTS_PER_KEY = 20;
const DEFAULT_GRACE_SECONDS = 24 * 3600;

// ---------------------------------------------------------------------------------------------------------------
// Request schemas

const url = z.string().trim().min(1).max(2048).meta({
  description: "Where events are POSTed: https (http and local addresses in the sandbox only)",
  example: "https://example.com/webhooks/tak",
});
const eventTypes = z
  .array(z.enum(SUBSCRIBABLE_TYPES as [string, ...string[]]))
  .max(SUBSCRIBABLE_TYPES.length)
  .meta({ description: "The event types to receive; empty or absent: all of them" });
const description = z.string().trim().max(200);
const txIdField = hash32.meta({
  description: "Without an API key: the batch (prepared without a key, not sent yet) whose events to receive",
});

const CreateWebhookBody = z
  .strictObject({
    url,
    eventTypes: eventTypes.optional(),
    description: description.optional(),
    txId: txIdField.optional(),
  })
  .meta({ id: "CreateWebhookRequest" });

const UpdateWebhookBody = z
  .strictObject({
    url: url.optional(),
    eventTypes: eventTypes.optional(),
    description: description.nullable().optional(),
    enabled: z
      .boolean()
      .optional()
      .meta({ description: "true re-enables a disabled endpoint (its failures forgotten); false disables it" }),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "name at least one of url, eventTypes, description, enabled" })
  .meta({ id: "UpdateWebhookRequest" });

const RotateSecretBody = z
  .strictObject({
    gracePeriodSeconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .optional()
      .meta({
        description: `How long the previous secret keeps signing beside the new one (default ${DEFAULT_GRACE_SECONDS}; at most 7 days)`,
      }),
  })
  .meta({ id: "RotateWebhookSecretRequest" });

const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional().meta({ description: "1–100, default 20" }),
  status: z.enum(["pending", "delivering", "delivered", "failed"]).optional(),
});

// ---------------------------------------------------------------------------------------------------------------
// Response schemas

const timestamp = z.string().meta({ description: "ISO 8601" });

export const WebhookEndpoint = z
  .strictObject({
    id: z.string().meta({ example: "wh_4f1c2b9e0d7a6c5b4a392817" }),
    url: z.string(),
    description: z.string().nullable(),
    eventTypes: z.array(z.string()).meta({ description: "Empty: every type" }),
    txId: hash32.nullable().meta({ description: "A keyless endpoint's batch; null for a key's endpoint" }),
    enabled: z.boolean(),
    disabledAt: timestamp.nullable(),
    disabledReason: z
      .string()
      .nullable()
      .meta({ description: "Why it was disabled, e.g. every delivery failed for 24 h" }),
    failingSince: timestamp.nullable().meta({ description: "Since when every attempt failed (null after a success)" }),
    previousSecretValidUntil: timestamp
      .nullable()
      .meta({ description: "After a rotation: until when the previous secret also signs" }),
    pendingDeliveries: int,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "WebhookEndpoint" });

const WithSecret = z
  .strictObject({
    ...WebhookEndpoint.shape,
    secret: z
      .string()
      .regex(/^whsec_/)
      .meta({ description: "The signing secret (Standard Webhooks `whsec_…`): shown this once, store it now" }),
  })
  .meta({ id: "WebhookEndpointWithSecret" });

const WebhookList = z.strictObject({ webhooks: z.array(WebhookEndpoint) }).meta({ id: "WebhookList" });

const Attempt = z.strictObject({
  attempt: int,
  at: timestamp,
  durationMs: int,
  statusCode: int
    .nullable()
    .meta({ description: "The receiver's HTTP status; null when none came (timeout, refused connection)" }),
  response: z.string().nullable().meta({ description: "The first KiB of the receiver's answer" }),
  error: z.string().nullable(),
});

export const WebhookDelivery = z
  .strictObject({
    id: z.string(),
    eventId: z.string().meta({ description: "The event's id (its webhook-id)" }),
    eventType: z.string(),
    txId: hash32.nullable(),
    manual: z.boolean().meta({ description: "A redelivery asked for with POST …/redeliver" }),
    status: z.enum(["pending", "delivering", "delivered", "failed"]),
    attempts: z.array(Attempt),
    nextAttemptAt: timestamp.nullable(),
    deliveredAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: "WebhookDelivery" });

const DeliveryList = z.strictObject({ deliveries: z.array(WebhookDelivery) }).meta({ id: "WebhookDeliveryList" });

const TestAccepted = z.strictObject({ eventId: z.string(), deliveryId: z.string() }).meta({
  id: "WebhookTestAccepted",
  description: "The test event was written; its delivery is listed under …/deliveries",
});

const Deleted = z.strictObject({ id: z.string(), deleted: z.literal(true) }).meta({ id: "WebhookDeleted" });

function endpointView(e: WebhookEndpointRecord, pending: number): z.infer<typeof WebhookEndpoint> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes,
    txId: e.txId,
    enabled: e.disabledAt === null,
    disabledAt: e.disabledAt,
    disabledReason: e.disabledReason,
    failingSince: e.failingSince,
    previousSecretValidUntil: e.previousSecretExpiresAt,
    pendingDeliveries: pending,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

function deliveryView(d: DeliveryRecord): z.infer<typeof WebhookDelivery> {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    txId: d.txId,
    manual: d.manual,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.nextAttemptAt,
    deliveredAt: d.deliveredAt,
    createdAt: d.createdAt,
  };
}

/**
 * Webhook endpoints: an API key's (every event of the key, or the types it names), or, without a key, one batch's that
 * was prepared without one (its transaction, batch and payment events). Thin adapters over the webhooks store; the
 * deliveries themselves are the dispatcher's.
 */
const keyOf = (caller: Caller) => caller.apiKey!.id;

async function withPending(services: Services, endpoint: WebhookEndpointRecord) {
  return endpointView(endpoint, (await services.webhooks.pendingCounts([endpoint.id])).get(endpoint.id) ?? 0);
}

/** POST /webhooks */
function webhooksRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/webhooks",
    operationId: "createWebhook",
    summary: "Register a webhook endpoint: its signing secret is in this answer only",
    description:
      "With an API key: every event of the key (or the `eventTypes` named) is POSTed to `url`, signed per Standard Webhooks. Without a key: " +
      "`txId` names a batch prepared without one and not sent yet, whose transaction.*, batch.completed and payment.* events are sent (at most 3 endpoints per txId).",
    tags: ["webhooks"],
    access: ACCESS.keyOrTxId,
    body: CreateWebhookBody,
    response: { 201: { description: "Created; `secret` is shown this once", schema: WithSecret } },
    handler: async ({ body, caller }) => {
      const types = [...new Set(body.eventTypes ?? [])];
      if (caller.apiKey && body.txId)
        throw validationError(
          "txId is for batches prepared without a key; a key's endpoint receives the key's events (filter them with eventTypes)",
          { field: "txId" },
        );
      const txId = caller.apiKey ? null : await keylessTarget(services, body.txId, types);
      const target = await checkedUrl(services, body.url);
      if (caller.apiKey && (await services.webhooks.listForKey(keyOf(caller))).length >= ENDPOINTS_PER_KEY) {
        throw conflict(`This API key has ${ENDPOINTS_PER_KEY} webhook endpoints already: delete one first`);
      }
      const { endpoint, secret } = await services.webhooks.create({
        apiKeyId: caller.apiKey?.id ?? null,
        txId,
        url: target,
        description: body.description ?? null,
        eventTypes: types,
      });
      return { status: 201, body: { ...endpointView(endpoint, 0), secret } };
    },
  });
}

/** GET /webhooks */
function getWebhooksRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/webhooks",
    operationId: "listWebhooks",
    summary: "This key's webhook endpoints, with their state (enabled, failing since, disabled and why)",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    response: WebhookList,
    handler: async ({ caller }) => {
      const endpoints = await services.webhooks.listForKey(keyOf(caller));
      const pending = await services.webhooks.pendingCounts(endpoints.map((e) => e.id));
      return { webhooks: endpoints.map((e) => endpointView(e, pending.get(e.id) ?? 0)) };
    },
  });
}

/** GET /webhooks/{id} */
function webhooksByIdRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/webhooks/{id}",
    operationId: "getWebhook",
    summary: "One webhook endpoint of this key",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    response: WebhookEndpoint,
    handler: async ({ req, caller }) =>
      withPending(services, await endpointOf(services, caller, String(req.params.id))),
  });
}

/** PATCH /webhooks/{id} */
function patchWebhooksByIdRoute(services: Services) {
  return defineRoute({
    method: "patch",
    path: "/webhooks/{id}",
    operationId: "updateWebhook",
    summary: "Change a webhook endpoint's URL, event types or description; enable or disable it",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    body: UpdateWebhookBody,
    response: WebhookEndpoint,
    handler: async ({ req, body, caller }) => {
      const current = await endpointOf(services, caller, String(req.params.id));
      const target = body.url === undefined ? undefined : await checkedUrl(services, body.url);
      const updated = await services.webhooks.update(current.id, keyOf(caller), {
        url: target,
        description: body.description,
        eventTypes: body.eventTypes && [...new Set(body.eventTypes)],
        enabled: body.enabled,
      });
      if (!updated) throw notFound(`No webhook endpoint ${current.id} for this API key`, { field: "id" });
      return withPending(services, updated);
    },
  });
}

/** DELETE /webhooks/{id} */
function deleteWebhooksByIdRoute(services: Services) {
  return defineRoute({
    method: "delete",
    path: "/webhooks/{id}",
    operationId: "deleteWebhook",
    summary: "Delete a webhook endpoint and its pending deliveries",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    response: Deleted,
    handler: async ({ req, caller }) => {
      const endpoint = await endpointOf(services, caller, String(req.params.id));
      await services.webhooks.delete(endpoint.id, keyOf(caller));
      return { id: endpoint.id, deleted: true as const };
    },
  });
}

/** POST /webhooks/{id}/rotate-secret */
function webhooksByIdRotateSecretRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/webhooks/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "A new signing secret (in this answer only); the previous one keeps signing beside it for a grace period",
    description:
      "During the grace period each delivery carries two signatures in webhook-signature (space-separated): the new secret's and the previous one's.",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    body: RotateSecretBody,
    response: WithSecret,
    handler: async ({ req, body, caller }) => {
      const endpoint = await endpointOf(services, caller, String(req.params.id));
      const rotated = await services.webhooks.rotateSecret(
        endpoint.id,
        keyOf(caller),
        (body.gracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000,
      );
      if (!rotated) throw notFound(`No webhook endpoint ${endpoint.id} for this API key`, { field: "id" });
      return { ...(await withPending(services, rotated.endpoint)), secret: rotated.secret };
    },
  });
}

/** POST /webhooks/{id}/test */
function webhooksByIdTestRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/webhooks/{id}/test",
    operationId: "sendWebhookTest",
    summary: "Send a webhook.test event to this endpoint (signed and delivered like any event)",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    response: { 202: { description: "Written; it is delivered shortly (see …/deliveries)", schema: TestAccepted } },
    handler: async ({ req, caller }) => {
      const endpoint = await endpointOf(services, caller, String(req.params.id));
      if (endpoint.disabledAt)
        throw conflict(
          `Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): enable it first (PATCH { enabled: true })`,
          { field: "id" },
        );
      return { status: 202, body: await services.webhooks.sendTest(endpoint, `A test event for ${endpoint.id}`) };
    },
  });
}

/** GET /webhooks/{id}/deliveries */
function webhooksByIdDeliveriesRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/webhooks/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "This endpoint's recent deliveries, newest first, with every attempt and what the receiver answered",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    query: DeliveriesQuery,
    response: DeliveryList,
    handler: async ({ req, query, caller }) => {
      const endpoint = await endpointOf(services, caller, String(req.params.id));
      const deliveries = await services.webhookDeliveries.deliveries(endpoint.id, {
        limit: query.limit ?? 20,
        status: query.status,
      });
      return { deliveries: deliveries.map(deliveryView) };
    },
  });
}

/** POST /webhooks/{id}/deliveries/{deliveryId}/redeliver */
function webhooksByIdDeliveriesByDeliveryIdRedeliverRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    operationId: "redeliverWebhook",
    summary: "Deliver one delivery's event again, now (same webhook-id: receivers drop duplicates by it)",
    tags: ["webhooks"],
    access: ACCESS.keyEndpoint,
    response: { 202: { description: "A new delivery of the event, due now", schema: WebhookDelivery } },
    handler: async ({ req, caller }) => {
      const endpoint = await endpointOf(services, caller, String(req.params.id));
      const delivery = await replayDelivery(services, endpoint, String(req.params.deliveryId));
      return { status: 202, body: deliveryView(delivery) };
    },
  });
}

export function webhookRoutes(services: Services) {
  return [
    webhooksRoute(services),
    getWebhooksRoute(services),
    webhooksByIdRoute(services),
    patchWebhooksByIdRoute(services),
    deleteWebhooksByIdRoute(services),
    webhooksByIdRotateSecretRoute(services),
    webhooksByIdTestRoute(services),
    webhooksByIdDeliveriesRoute(services),
    webhooksByIdDeliveriesByDeliveryIdRedeliverRoute(services),
  ];
}
