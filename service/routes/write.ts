import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { clientSubject } from "../auth/client-address";
import { sendBodySchema } from "../engine/send";
import { transactionStatus } from "../reads/transaction-status";
import { badRequest } from "../errors";
import { FacadePrepareResponse, PrepareResponse, SendSummary, TransactionStatus } from "../wire/responses";
import { defineRoute } from "../http/route";
import { methodForBody, PUBLIC_METHODS } from "../methods";
import type { MethodDefinition } from "../methods/types";
import type { Services } from "../usecases/services";
import { prepareWrite, sendWrite } from "../usecases/write";

const methodNames = PUBLIC_METHODS.map((m) => m.name);

const pascal = (name: string) => name[0].toUpperCase() + name.slice(1);

/** A method's body as documented: the component <Method>Body (the same schema that validates it). */
const documentedBodies = new Map(
  PUBLIC_METHODS.map((m) => [
    m.name,
    (m.body as z.ZodType).meta({ id: `${pascal(m.name)}Body`, description: m.summary }),
  ]),
);
export const documentedMethodBody = (method: MethodDefinition): z.ZodType => documentedBodies.get(method.name)!;

/**
 * Body of /prepare-transactions for the OpenAPI document: one request schema per method (<Method>Request = its body
 * and `method`), discriminated by `method` (aliases map to the method they name).
 */
const prepareBodyDoc = z
  .union(
    PUBLIC_METHODS.map((m) =>
      z
        .object({
          method: z
            .enum([m.name, ...(m.aliases ?? [])])
            .meta({ description: m.aliases?.length ? `${m.name} (alias ${m.aliases.join(", ")})` : m.name }),
        })
        .and(documentedMethodBody(m))
        .meta({ id: `${pascal(m.name)}Request`, description: m.summary }),
    ) as unknown as [z.ZodType, z.ZodType],
  )
  .meta({
    description: "The method's body and its name in `method`",
    discriminator: {
      propertyName: "method",
      mapping: Object.fromEntries(
        PUBLIC_METHODS.flatMap((m) =>
          [m.name, ...(m.aliases ?? [])].map((name) => [name, `#/components/schemas/${pascal(m.name)}Request`]),
        ),
      ),
    },
  });

const hash32 = z
  .string()
  .trim()
  .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters");
const statusQuery = z.object({ hash: hash32.optional(), txId: hash32.optional() });

/** POST /prepare-transactions */
function prepareTransactionsRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/prepare-transactions",
    summary: "Prepare the unsigned transactions of one method; sign them locally, then call /send-transactions",
    tags: ["write"],
    access: ACCESS.agenticWrite,
    tool: { prepares: "*" },
    documentedBody: prepareBodyDoc,
    response: PrepareResponse,
    rateLimited: true,
    idempotent: true,
    handler: async ({ req, caller }) => {
      const name = (req.body as { method?: unknown })?.method;
      if (name === undefined || name === null || name === "")
        throw badRequest("method is required", { field: "method", methods: methodNames });
      const method = typeof name === "string" ? methodForBody(name, req.body) : undefined;
      if (!method)
        throw badRequest(`Unknown method: ${typeof name === "string" ? name : JSON.stringify(name)}`, {
          field: "method",
          methods: methodNames,
        });
      return prepareWrite(services, req, caller, method, req.body);
    },
  });
}

/** POST /send-transactions */
function sendTransactionsRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/send-transactions",
    summary:
      "Send signed transactions (or report client-broadcast hashes, or pay for a relayed txId); broadcast in order",
    description:
      "Accepts { txId, signedTransactions } with either field a string or an array, { txId, txHash } and, for " +
      "service-relayed batches, { txId, transactions? } with an x402 payment. Each signed transaction must match its " +
      "prepared twin. Answers 200 when the batch ended and 202 while it is still pending. Signed transactions for a " +
      "pending client-signed txId replace its unmined ones when they raise both fees by at least 10% (same nonces): " +
      "the service keeps every hash and whichever is mined wins.",
    tags: ["write"],
    access: ACCESS.agenticWrite,
    tool: {
      description:
        "Takes { txId, signedTransactions } (client-signed), { txId, txHash } (client-broadcast) or { txId } (service-relayed, paid with x402). " +
        "Answers when the batch ended, or pending (wait_for_transaction follows it). Without an API key it pays the rest of the method's x402 price.",
    },
    body: sendBodySchema,
    idempotent: true,
    response: {
      200: { description: "The batch ended: success, or rejected (see error and failedIndex)", schema: SendSummary },
      202: {
        description: "Accepted; the batch is still pending: poll GET /get-transaction-status?txId=…",
        schema: SendSummary,
      },
    },
    handler: ({ req, body, caller }) => sendWrite(services, req, caller, body),
  });
}

/** GET /get-transaction-status */
function getTransactionStatusRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-transaction-status",
    summary: "Status of a prepared batch (txId) or of one transaction (hash): prepared, pending, success or rejected",
    description:
      "A batch prepared under an API key is read with that key; one prepared without a key (paid with x402, or " +
      "service-relayed) by whoever names it: its txId (32 random bytes) or one of its transaction hashes. Other " +
      "callers get 404 for the txId, and for a hash only what the chain shows. A hash this service never saw is looked " +
      "up on every chain it serves: at most 30 such reads a minute per API key, or per client IP without one (429 with Retry-After).",
    tags: ["write"],
    access: ACCESS.keyScoped,
    tool: {
      description:
        "A batch prepared under an API key is read with that key; a keyless one by its txId or one of its transaction hashes.",
    },
    query: statusQuery,
    response: TransactionStatus,
    rateLimited: true,
    handler: ({ query, caller, req }) =>
      transactionStatus(services, query, caller.apiKey?.id, () =>
        services.requestLimits
          .of("unknownHashes")
          .admit(caller.apiKey ? `key:${caller.apiKey.id}` : clientSubject(req)),
      ),
  });
}

/**
 * The prepare / send / status flow. Routes only adapt HTTP: who may call and who pays is decided by service/auth/gate.ts,
 * what to do by the method, how to do it on-chain by the engine.
 */
export function writeRoutes(services: Services) {
  return [
    prepareTransactionsRoute(services),
    ...PUBLIC_METHODS.map((method) =>
      defineRoute({
        method: "post",
        path: `/prepare-transactions/${method.name}`,
        summary: method.summary,
        tags: ["write", method.area],
        access: method.access,
        tool: { prepares: method.name },
        documentedBody: documentedMethodBody(method),
        response: PrepareResponse,
        rateLimited: true,
        idempotent: true,
        handler: ({ req, caller }) => prepareWrite(services, req, caller, method, req.body),
      }),
    ),
    ...PUBLIC_METHODS.filter((m) => m.facadePath).map((method) =>
      defineRoute({
        method: "post",
        path: method.facadePath!,
        summary: `${method.summary} — facade (default execution mode: ${method.facadeMode ?? "service-relayed"})`,
        tags: ["x402", method.area],
        access: ACCESS.agenticWrite,
        tool: false, // the method's tool is its /prepare-transactions/{method} route
        documentedBody: documentedMethodBody(method),
        response: method.facadeEnvelope === "data" ? FacadePrepareResponse : PrepareResponse,
        rateLimited: true,
        idempotent: true,
        handler: async ({ req, caller }) => {
          const prepared = await prepareWrite(
            services,
            req,
            caller,
            method,
            req.body,
            method.facadeMode ?? "service-relayed",
          );
          return method.facadeEnvelope === "data"
            ? { body: { data: prepared.body }, headers: prepared.headers }
            : prepared;
        },
      }),
    ),
    sendTransactionsRoute(services),
    getTransactionStatusRoute(services),
  ];
}
