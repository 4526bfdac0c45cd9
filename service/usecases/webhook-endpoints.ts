import type { Caller } from "../auth/gate";
import { conflict, forbidden, notFound, unauthorized, validationError } from "../errors";
import { checkDestination, DestinationRefused, parseWebhookUrl } from "../events/destination";
import { destinationPolicy } from "../events/policy";
import { KEYLESS_TYPES } from "../events/types";
import type { WebhookEndpointRecord } from "../store/webhooks";
import type { Services } from "./services";

/** Endpoints one keyless txId may have (registered while it is prepared). */
const ENDPOINTS_PER_TX = 3;
const ENDPOINT_ID = /^wh_[0-9a-f]{24}$/;

/** The caller's key's endpoint `id` (404 for anyone else's, or a malformed id). */
export async function endpointOf(services: Services, caller: Caller, id: string): Promise<WebhookEndpointRecord> {
  const found = ENDPOINT_ID.test(id) ? await services.webhooks.getForKey(id, caller.apiKey!.id) : undefined;
  if (!found) throw notFound(`No webhook endpoint ${id} for this API key`, { field: "id" });
  return found;
}

/** A webhook URL the destination policy accepts (https, public addresses; the sandbox allows more), normalised. */
export async function checkedUrl(services: Services, text: string): Promise<string> {
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

/** A keyless endpoint: for one batch prepared without a key, registered before it is sent (its txId is then known to its preparer only). */
export async function keylessTarget(services: Services, txId: string | undefined, types: string[]) {
  if (!txId)
    throw unauthorized(
      "API key is required for this endpoint (without one: the txId of a batch prepared without a key)",
      { header: "x-api-key" },
    );
  const batch = await services.batches.get(txId.toLowerCase());
  if (!batch) throw notFound(`No prepared transactions with txId ${txId}`, { field: "txId" });
  if (batch.apiKeyId)
    throw forbidden("This txId was prepared under an API key: register the webhook with that key", { field: "txId" });
  if (batch.status !== "prepared") {
    throw conflict(
      `txId ${txId} was already sent: a webhook for a batch prepared without a key is registered before its send`,
      { field: "txId", status: batch.status },
    );
  }
  const outside = types.filter((t) => !(KEYLESS_TYPES as string[]).includes(t));
  if (outside.length) {
    throw validationError(
      `eventTypes: ${outside.join(", ")} ${outside.length > 1 ? "are" : "is"} not sent for a batch prepared without a key (${KEYLESS_TYPES.join(", ")})`,
      { field: "eventTypes" },
    );
  }
  if ((await services.webhooks.countForTx(txId)) >= ENDPOINTS_PER_TX)
    throw conflict(`txId ${txId} has ${ENDPOINTS_PER_TX} webhooks already`, { field: "txId" });
  return batch.txId;
}
