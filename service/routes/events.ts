import type { Request } from "express";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { ApiError, forbidden, notFound, unauthorized, validationError } from "../errors";
import { positionBounds, type EventAudience } from "../store/outbox";
import { SUBSCRIBABLE_TYPES } from "../events/types";
import { isStreamToken } from "../events/stream-tokens";
import { clientSubject } from "../auth/client-address";
import { responseFields } from "../wire/responses";
import { eventStreamSink } from "../http/event-stream-sink";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";

const subscribable = new Set<string>(SUBSCRIBABLE_TYPES);

const StreamQuery = z.strictObject({
  types: z
    .string()
    .max(2000)
    .optional()
    .meta({ description: `Comma-separated event types to receive (default: all): ${SUBSCRIBABLE_TYPES.join(", ")}` }),
  txId: responseFields.hash32
    .optional()
    .meta({ description: "Only this batch's events. Without an API key: required, a batch prepared without a key" }),
  streamToken: z.string().max(100).optional().meta({
    description:
      "Without an API key: the streamToken the batch's prepare answered (also accepted as the X-Stream-Token header)",
  }),
  lastEventId: z
    .string()
    .regex(/^\d{1,18}$/, "must be an event id (digits)")
    .optional()
    .meta({
      description:
        "Resume after this event id: for clients that cannot send the Last-Event-ID header (which wins when both are sent)",
    }),
});

const STREAM_DESCRIPTION = `Server-Sent Events. Each event is \`id: <event id>\`, \`event: <type>\`, \`data: <Event JSON>\` (the body a webhook receives;
schema \`Event\`). A comment line (\`: heartbeat\`) is sent every EVENT_STREAM_HEARTBEAT_MS (15 s) while nothing happens.

* **Resume** with the \`Last-Event-ID\` header (browsers' EventSource send it on their own) or \`lastEventId\`: every event of the
  stream after that id follows, none missed. Ids grow in commit order. An id this service never issued is a 400; one older than
  the retention window (EVENT_RETENTION_DAYS, default 7) a 410: start again without it and read the current state from the getters.
* **Without** a resume id the stream starts with the events committed after the connection; with \`txId\`, with that batch's
  retained events from its first.
* **Who sees what**: with an API key, the key's events. Without one, \`txId\` must name a batch prepared without a key and
  \`streamToken\` be the one its prepare answered (its preparer's proof): its transaction.*, batch.completed and payment.*
  events, which carry what GET /get-transaction-status already tells anyone who knows the txId.
* **Limits**: at most EVENT_STREAMS_PER_KEY (20) open streams per API key and EVENT_STREAMS_PER_CLIENT (20) per client
  address (an IPv4 address, an IPv6 /64) on one instance; the next is a 429 with Retry-After until one closes.`;

/** The resume position a client sent (header first), checked against what the outbox issued and still holds. */
async function resumeFrom(
  services: Services,
  req: Request,
  fromQuery: string | undefined,
): Promise<string | undefined> {
  const header = req.header("last-event-id");
  const given = header !== undefined && header.trim() !== "" ? header.trim() : fromQuery;
  if (given === undefined) return undefined;
  const field = header !== undefined && header.trim() !== "" ? "Last-Event-ID" : "lastEventId";
  if (!/^\d{1,18}$/.test(given)) throw validationError(`${field} must be an event id (digits)`, { field });
  const { issued, prunedThrough } = await positionBounds(services.db);
  const id = BigInt(given);
  if (id > issued)
    throw validationError(`${field} ${given} is not an event id this service issued (the latest is ${issued})`, {
      field,
      latest: issued.toString(),
    });
  if (id < prunedThrough) {
    throw new ApiError(
      "EVENT_ID_EXPIRED",
      `${field} ${given} is older than the retention window (${services.config.EVENT_RETENTION_DAYS} days): events after it were pruned; reconnect without it and read the current state from the getters`,
      {
        field,
        oldestResumable: prunedThrough.toString(),
      },
    );
  }
  return given;
}

export function eventRoutes(services: Services) {
  return [
    defineRoute({
      method: "get",
      path: "/events",
      operationId: "streamEvents",
      summary: "The live event stream (Server-Sent Events), resumable with Last-Event-ID",
      description: STREAM_DESCRIPTION,
      tags: ["events"],
      access: ACCESS.keyOrTxId,
      rateLimited: true,
      query: StreamQuery,
      response: {
        200: {
          description: "text/event-stream until the client leaves (or the service stops: reconnect with Last-Event-ID)",
          content: {
            mediaType: "text/event-stream",
            schema: {
              type: "string",
              description: "id: / event: / data: lines; each data is an Event (components.schemas.Event)",
            },
          },
        },
      },
      handler: async ({ req, res, query, caller }) => {
        const types = query.types
          ?.split(",")
          .map((t) => t.trim())
          .filter(Boolean);
        const unknown = types?.filter((t) => !subscribable.has(t)) ?? [];
        if (unknown.length)
          throw validationError(`types: unknown event type ${unknown[0]} (known: ${SUBSCRIBABLE_TYPES.join(", ")})`, {
            field: "types",
          });
        let audience: EventAudience;
        if (caller.apiKey) {
          if (query.txId) {
            const batch = await services.batches.get(query.txId.toLowerCase());
            if (!batch) throw notFound(`No prepared transactions with txId ${query.txId}`, { field: "txId" });
            if (batch.apiKeyId !== caller.apiKey.id)
              throw forbidden("This txId was not prepared under this API key", { field: "txId" });
          }
          audience = { apiKeyId: caller.apiKey.id, txId: query.txId?.toLowerCase() };
        } else {
          if (!query.txId)
            throw unauthorized(
              "API key is required for this endpoint (without one: the txId of a batch prepared without a key, and its streamToken)",
              { header: "x-api-key" },
            );
          const token = query.streamToken ?? req.header("x-stream-token");
          if (!token)
            throw unauthorized("streamToken is required without an API key: the one the batch's prepare answered", {
              field: "streamToken",
            });
          const batch = await services.batches.get(query.txId.toLowerCase());
          if (!batch) throw notFound(`No prepared transactions with txId ${query.txId}`, { field: "txId" });
          if (batch.apiKeyId)
            throw forbidden("This txId was prepared under an API key: stream its events with that key", {
              field: "txId",
            });
          if (!isStreamToken(services.sealer, batch.txId, token))
            throw forbidden("streamToken is not this batch's: use the one its prepare answered", {
              field: "streamToken",
            });
          audience = { apiKeyId: null, txId: batch.txId };
        }
        const release = services.eventStreams.admit(caller.apiKey?.id ?? null, clientSubject(req));
        try {
          const resume = await resumeFrom(services, req, query.lastEventId);
          const after = resume ?? (audience.txId ? "0" : await services.eventStreams.latestPosition());
          await services.eventStreams.serve(eventStreamSink(req, res), audience, { after, types });
        } finally {
          release();
        }
      },
    }),
  ];
}
