import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import type { Caller } from "../access/gate";
import { conflict, forbidden, notFound, unauthorized, validationError } from "../errors";
import { checkDestination, DestinationRefused, parseWebhookUrl } from "../events/destination";
import { destinationPolicy } from "../events/policy";
import { KEYLESS_TYPES, SUBSCRIBABLE_TYPES } from "../events/types";
import { responseFields } from "../wire/responses";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import type { DeliveryRecord, WebhookEndpointRecord } from "../store/webhooks";

const { hash32, int } = responseFields;

/** Endpoints one key may have. */
const ENDPOINTS_PER_KEY = 20;
/** Endpoints one keyless txId may have (registered while it is prepared: see createEndpoint). */
const ENDPOINTS_PER_TX = 3;
const DEFAULT_GRACE_SECONDS = 24 * 3600;

// ---------------------------------------------------------------------------------------------------------------
// Request schemas

const url = z.string().trim().min(1).max(2048).meta({ description: "Where events are POSTed: https (http and local addresses in the sandbox only)", example: "https://example.com/webhooks/tak" });
const eventTypes = z
  .array(z.enum(SUBSCRIBABLE_TYPES as [string, ...string[]]))
  .max(SUBSCRIBABLE_TYPES.length)
  .meta({ description: "The event types to receive; empty or absent: all of them" });
const description = z.string().trim().max(200);
const txIdField = hash32.meta({ description: "Without an API key: the batch (prepared without a key, not sent yet) whose events to receive" });

const CreateWebhookBody = z
  .strictObject({ url, eventTypes: eventTypes.optional(), description: description.optional(), txId: txIdField.optional() })
  .meta({ id: "CreateWebhookRequest" });

const UpdateWebhookBody = z
  .strictObject({
    url: url.optional(),
    eventTypes: eventTypes.optional(),
    description: description.nullable().optional(),
    enabled: z.boolean().optional().meta({ description: "true re-enables a disabled endpoint (its failures forgotten); false disables it" }),
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
      .meta({ description: `How long the previous secret keeps signing beside the new one (default ${DEFAULT_GRACE_SECONDS}; at most 7 days)` }),
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
    disabledReason: z.string().nullable().meta({ description: "Why it was disabled, e.g. every delivery failed for 24 h" }),
    failingSince: timestamp.nullable().meta({ description: "Since when every attempt failed (null after a success)" }),
    previousSecretValidUntil: timestamp.nullable().meta({ description: "After a rotation: until when the previous secret also signs" }),
    pendingDeliveries: int,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "WebhookEndpoint" });

const WithSecret = z
  .strictObject({
    ...WebhookEndpoint.shape,
    secret: z.string().regex(/^whsec_/).meta({ description: "The signing secret (Standard Webhooks `whsec_…`): shown this once, store it now" }),
  })
  .meta({ id: "WebhookEndpointWithSecret" });

const WebhookList = z.strictObject({ webhooks: z.array(WebhookEndpoint) }).meta({ id: "WebhookList" });

const Attempt = z.strictObject({
  attempt: int,
  at: timestamp,
  durationMs: int,
  statusCode: int.nullable().meta({ description: "The receiver's HTTP status; null when none came (timeout, refused connection)" }),
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

const TestAccepted = z
  .strictObject({ eventId: z.string(), deliveryId: z.string() })
  .meta({ id: "WebhookTestAccepted", description: "The test event was written; its delivery is listed under …/deliveries" });

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

const ENDPOINT_ID = /^wh_[0-9a-f]{24}$/;

/**
 * Webhook endpoints: an API key's (every event of the key, or the types it names), or, without a key, one batch's that
 * was prepared without one (its transaction, batch and payment events). Thin adapters over store/webhooks.ts; the
 * deliveries themselves are the dispatcher's (events/dispatcher.ts).
 */
export function webhookRoutes(services: Services) {
  const keyOf = (caller: Caller) => caller.apiKey!.id;

  async function endpointOf(caller: Caller, id: string): Promise<WebhookEndpointRecord> {
    const found = ENDPOINT_ID.test(id) ? await services.webhooks.getForKey(id, keyOf(caller)) : undefined;
    if (!found) throw notFound(`No webhook endpoint ${id} for this API key`, { field: "id" });
    return found;
  }

  async function checkedUrl(text: string): Promise<string> {
    const policy = destinationPolicy(services.config);
    try {
      const parsed = parseWebhookUrl(text, policy);
      await checkDestination(parsed, policy);
      return parsed.toString();
    } catch (error) {
      if (error instanceof DestinationRefused) throw validationError(`url ${error.message}`, { field: "url" });
      throw error;
    }
  }

  async function withPending(endpoint: WebhookEndpointRecord) {
    return endpointView(endpoint, (await services.webhooks.pendingCounts([endpoint.id])).get(endpoint.id) ?? 0);
  }

  /** A keyless endpoint: for one batch prepared without a key, registered before it is sent (its txId is then known to its preparer only). */
  async function keylessTarget(txId: string | undefined, types: string[]) {
    if (!txId) throw unauthorized("API key is required for this endpoint (without one: the txId of a batch prepared without a key)", { header: "x-api-key" });
    const batch = await services.batches.get(txId.toLowerCase());
    if (!batch) throw notFound(`No prepared transactions with txId ${txId}`, { field: "txId" });
    if (batch.apiKeyId) throw forbidden("This txId was prepared under an API key: register the webhook with that key", { field: "txId" });
    if (batch.status !== "prepared") {
      throw conflict(`txId ${txId} was already sent: a webhook for a batch prepared without a key is registered before its send`, { field: "txId", status: batch.status });
    }
    const outside = types.filter((t) => !(KEYLESS_TYPES as string[]).includes(t));
    if (outside.length) {
      throw validationError(`eventTypes: ${outside.join(", ")} ${outside.length > 1 ? "are" : "is"} not sent for a batch prepared without a key (${KEYLESS_TYPES.join(", ")})`, { field: "eventTypes" });
    }
    if ((await services.webhooks.countForTx(txId)) >= ENDPOINTS_PER_TX) throw conflict(`txId ${txId} has ${ENDPOINTS_PER_TX} webhooks already`, { field: "txId" });
    return batch.txId;
  }

  return [
    defineRoute({
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
        if (caller.apiKey && body.txId) throw validationError("txId is for batches prepared without a key; a key's endpoint receives the key's events (filter them with eventTypes)", { field: "txId" });
        const txId = caller.apiKey ? null : await keylessTarget(body.txId, types);
        const target = await checkedUrl(body.url);
        if (caller.apiKey && (await services.webhooks.listForKey(keyOf(caller))).length >= ENDPOINTS_PER_KEY) {
          throw conflict(`This API key has ${ENDPOINTS_PER_KEY} webhook endpoints already: delete one first`);
        }
        const { endpoint, secret } = await services.webhooks.create({ apiKeyId: caller.apiKey?.id ?? null, txId, url: target, description: body.description ?? null, eventTypes: types });
        return { status: 201, body: { ...endpointView(endpoint, 0), secret } };
      },
    }),
    defineRoute({
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
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/{id}",
      operationId: "getWebhook",
      summary: "One webhook endpoint of this key",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      response: WebhookEndpoint,
      handler: async ({ req, caller }) => withPending(await endpointOf(caller, String(req.params.id))),
    }),
    defineRoute({
      method: "patch",
      path: "/webhooks/{id}",
      operationId: "updateWebhook",
      summary: "Change a webhook endpoint's URL, event types or description; enable or disable it",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      body: UpdateWebhookBody,
      response: WebhookEndpoint,
      handler: async ({ req, body, caller }) => {
        const current = await endpointOf(caller, String(req.params.id));
        const target = body.url === undefined ? undefined : await checkedUrl(body.url);
        const updated = await services.webhooks.update(current.id, keyOf(caller), {
          url: target,
          description: body.description,
          eventTypes: body.eventTypes && [...new Set(body.eventTypes)],
          enabled: body.enabled,
        });
        if (!updated) throw notFound(`No webhook endpoint ${current.id} for this API key`, { field: "id" });
        return withPending(updated);
      },
    }),
    defineRoute({
      method: "delete",
      path: "/webhooks/{id}",
      operationId: "deleteWebhook",
      summary: "Delete a webhook endpoint and its pending deliveries",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      response: Deleted,
      handler: async ({ req, caller }) => {
        const endpoint = await endpointOf(caller, String(req.params.id));
        await services.webhooks.delete(endpoint.id, keyOf(caller));
        return { id: endpoint.id, deleted: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/{id}/rotate-secret",
      operationId: "rotateWebhookSecret",
      summary: "A new signing secret (in this answer only); the previous one keeps signing beside it for a grace period",
      description: "During the grace period each delivery carries two signatures in webhook-signature (space-separated): the new secret's and the previous one's.",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      body: RotateSecretBody,
      response: WithSecret,
      handler: async ({ req, body, caller }) => {
        const endpoint = await endpointOf(caller, String(req.params.id));
        const rotated = await services.webhooks.rotateSecret(endpoint.id, keyOf(caller), (body.gracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000);
        if (!rotated) throw notFound(`No webhook endpoint ${endpoint.id} for this API key`, { field: "id" });
        return { ...(await withPending(rotated.endpoint)), secret: rotated.secret };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/{id}/test",
      operationId: "sendWebhookTest",
      summary: "Send a webhook.test event to this endpoint (signed and delivered like any event)",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      response: { 202: { description: "Written; it is delivered shortly (see …/deliveries)", schema: TestAccepted } },
      handler: async ({ req, caller }) => {
        const endpoint = await endpointOf(caller, String(req.params.id));
        if (endpoint.disabledAt) throw conflict(`Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): enable it first (PATCH { enabled: true })`, { field: "id" });
        return { status: 202, body: await services.webhooks.sendTest(endpoint, `A test event for ${endpoint.id}`) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/webhooks/{id}/deliveries",
      operationId: "listWebhookDeliveries",
      summary: "This endpoint's recent deliveries, newest first, with every attempt and what the receiver answered",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      query: DeliveriesQuery,
      response: DeliveryList,
      handler: async ({ req, query, caller }) => {
        const endpoint = await endpointOf(caller, String(req.params.id));
        const deliveries = await services.webhooks.deliveries(endpoint.id, { limit: query.limit ?? 20, status: query.status });
        return { deliveries: deliveries.map(deliveryView) };
      },
    }),
    defineRoute({
      method: "post",
      path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver",
      operationId: "redeliverWebhook",
      summary: "Deliver one delivery's event again, now (same webhook-id: receivers drop duplicates by it)",
      tags: ["webhooks"],
      access: ACCESS.keyEndpoint,
      response: { 202: { description: "A new delivery of the event, due now", schema: WebhookDelivery } },
      handler: async ({ req, caller }) => {
        const endpoint = await endpointOf(caller, String(req.params.id));
        if (endpoint.disabledAt) throw conflict(`Webhook endpoint ${endpoint.id} is disabled (${endpoint.disabledReason}): enable it first (PATCH { enabled: true })`, { field: "id" });
        const delivery = await services.webhooks.redeliver(endpoint.id, String(req.params.deliveryId));
        if (!delivery) throw notFound(`No delivery ${String(req.params.deliveryId)} of webhook endpoint ${endpoint.id}`, { field: "deliveryId" });
        services.webhookDispatcher.wake();
        return { status: 202, body: deliveryView(delivery) };
      },
    }),
  ];
}
