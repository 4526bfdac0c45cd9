import { z, type ZodType } from "zod";
import { securityOf, type AccessRule } from "../auth/access-rules";
import { ErrorBody, errorCodeTable, PaymentRequired, PaymentSettlement } from "../wire/responses";
import type { ResponseDoc, RouteDefinition, SuccessResponses } from "./route";
import { IDEMPOTENCY_HEADER, idempotencyKeySchema, REPLAYED_HEADER } from "./idempotency";

/**
 * The OpenAPI 3.1 document, generated from the route definitions: the request schemas that validate requests, the
 * response schemas the tests check real answers against, and the access rules (security, 402). zod is the single
 * source: every schema is zod 4's JSON Schema (draft 2020-12, which OpenAPI 3.1 uses as is); a zod schema with an
 * `id` (`.meta({ id })`) becomes a component and is referenced, the others are inlined.
 */

type Json = Record<string, unknown>;
type Io = "input" | "output";

const REF_PREFIX = "#/components/schemas/";

/** Collects the components the converted schemas name, and refuses two different schemas under one id. */
class Components {
  readonly schemas: Record<string, Json> = {};

  /** JSON Schema of `type` (what a client sends for "input", what it receives for "output"), refs to components. */
  schema(type: ZodType, io: Io): Json {
    const converted = z.toJSONSchema(type, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;
    delete converted.$schema;
    const defs = (converted.$defs ?? {}) as Record<string, Json>;
    delete converted.$defs;
    for (const [id, def] of Object.entries(defs)) this.add(id, rewriteRefs(def) as Json);
    return rewriteRefs(converted) as Json;
  }

  /** A reference to the component `type` (which must carry an id). */
  ref(type: ZodType, io: Io): Json {
    const schema = this.schema(type, io);
    if (typeof schema.$ref !== "string") throw new Error("ref() needs a schema with .meta({ id })");
    return schema;
  }

  private add(id: string, def: Json): void {
    const existing = this.schemas[id];
    if (existing && JSON.stringify(existing) !== JSON.stringify(def)) {
      throw new Error(
        `Two different schemas are documented as the component ${id} (a schema used for both input and output?)`,
      );
    }
    this.schemas[id] = def;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [key, v] of Object.entries(value as Json)) {
    out[key] =
      key === "$ref" && typeof v === "string" && v.startsWith("#/$defs/")
        ? REF_PREFIX + v.slice("#/$defs/".length)
        : rewriteRefs(v);
  }
  return out;
}

export const securitySchemes = {
  apiKey: {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "The API key the operator issued (plan credits per method).",
  },
  x402: {
    type: "apiKey",
    in: "header",
    name: "X-PAYMENT",
    description:
      "Pay per call in USDC instead of a key (x402 v2): call without it, read the quote from the 402's PAYMENT-REQUIRED header, sign an EIP-3009 " +
      "authorization and repeat the call with the base64 payment payload in X-PAYMENT (also accepted: X-Payment, x-payment, PAYMENT-SIGNATURE).",
  },
  metricsToken: { type: "http", scheme: "bearer", description: "GET /metrics when the operator set METRICS_TOKEN." },
  consoleSession: {
    type: "apiKey",
    in: "cookie",
    name: "tak_console",
    description:
      "The operator console's session (POST /console/api/session signs in); every change also sends its CSRF token in x-csrf-token.",
  },
};

/** Who may call: a key, a payment (rules with an x402 price), or nobody in particular. */
function security(rule: AccessRule, route: RouteDefinition<any, any>): Json[] {
  if (route.path === "/metrics") return [{ metricsToken: [] }, {}];
  if (rule.name === "operatorSession")
    return route.path === "/console/api/session" && route.method === "post" ? [] : [{ consoleSession: [] }];
  switch (securityOf(rule)) {
    case "apiKey":
      return [{ apiKey: [] }];
    case "apiKeyOrPayment":
      // Optional key, nothing to pay: a key, or no credential at all (the route says what it then serves).
      if (rule.price === undefined) return [{ apiKey: [] }, {}];
      // A service-relayed prepare needs no credential at all (its send is paid): agentic writes also take none.
      return rule.name === "agenticWrite" ? [{ apiKey: [] }, { x402: [] }, {}] : [{ apiKey: [] }, { x402: [] }];
    case "optionalApiKey":
      return [{ apiKey: [] }, {}];
    default:
      return [];
  }
}

/** The rule can take an x402 payment: an optional key with a price. */
export const takesPayment = (rule: AccessRule) => rule.key === "optional" && rule.price !== undefined;

const TAGS = [
  { name: "write", description: "Prepare unsigned transactions, send them signed, follow their status." },
  { name: "tokenization", description: "Security tokens: tokenize, mint, whitelist, transfer, burn, dividends." },
  { name: "sto", description: "Security token offerings: create, invest, close, claim; their reads." },
  { name: "reads", description: "Key-scoped reads of tokens, investors, allowances and dividends." },
  { name: "agents", description: "ERC-8004 agent identity and reputation, agent-owned tokens, agent getters." },
  { name: "rams", description: "ERC-8226 mandates (RAMS): reads, EIP-712 typed data and the ten write methods." },
  { name: "x402", description: "Paid per call in USDC: the facades, discovery, the sandbox faucet." },
  { name: "onboarding", description: "Investor onboarding (KYC links, the investor's page)." },
  {
    name: "webhooks",
    description:
      "Signed webhooks (Standard Webhooks): register endpoints, rotate secrets, test, list deliveries and redeliver. The events they receive are in the document's `webhooks` section.",
  },
  { name: "events", description: "The live event stream (Server-Sent Events), resumable with Last-Event-ID." },
  { name: "network", description: "Contract addresses per network." },
  {
    name: "mcp",
    description:
      "The Model Context Protocol endpoint: every operation of this API as a tool for AI agents (Streamable HTTP).",
  },
  { name: "meta", description: "Health, this document, the reference page, metrics." },
  {
    name: "console",
    description:
      "The operator console's JSON (its pages are at /console): sign-in, the overview, transactions and their actions, payments, webhook deliveries and replays, KYC review, keys, credits, signers, prices and the audit log. A session cookie, not an API key; every change needs the session's CSRF token in x-csrf-token and the operator's role (viewer, reviewer, admin).",
  },
];

const DESCRIPTION = `Prepares unsigned EVM transactions for tokenized assets, agents and mandates, takes them back signed, broadcasts them
in order and reports their status.

* **Credentials**: an API key (\`x-api-key\`, plan credits), or an x402 payment in USDC (\`X-PAYMENT\`) where the operation says so. A call that
  must be paid and carries neither answers **402** with the quote in the \`PAYMENT-REQUIRED\` header.
* **Errors**: every error is \`{ "error": { "code", "message", "param"?, "details"? }, "message" }\`; the \`x-request-id\` header of any answer
  finds it in the service's logs. Invalid input is always \`BAD_REQUEST\` with \`param\` naming the field at fault (also in \`details.field\`) and
  \`details.issues[]\` (\`{ field, message }\`). The codes are listed below (*Error codes*) and in the \`ErrorCode\` schema.
* **Rate limits**: the prepare routes answer **429** with \`Retry-After\` (seconds) when a client goes too fast.
* **Chains that do not answer**: when every RPC provider of a chain fails or rate-limits for longer than the retry budget, a call that needs
  that chain answers **503** \`CHAIN_UNAVAILABLE\` with \`Retry-After\`: nothing was sent or charged; try again. A batch already being sent
  is never failed by such an outage: it waits and goes on.
* **Amounts** are decimal strings; unsigned transactions are ethers-style (sign them as they are).

### Error codes

${errorCodeTable()}`;

const REQUEST_ID_HEADER = { $ref: "#/components/headers/RequestId" };

function jsonContent(schema: Json) {
  return { "application/json": { schema } };
}

export function operationIdOf(route: RouteDefinition<any, any>): string {
  if (route.operationId) return route.operationId;
  const words = route.path
    .replace(/\{\w+\}/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return words.map((w, i) => (i === 0 ? w[0].toLowerCase() + w.slice(1) : w[0].toUpperCase() + w.slice(1))).join("");
}

function isZod(value: unknown): value is ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

/** The success answers a route documents, as { status: ResponseDoc }. */
export function successResponses(route: RouteDefinition<any, any>): SuccessResponses {
  return isZod(route.response) ? { 200: { description: "OK", schema: route.response } } : route.response;
}

function responseObject(doc: ResponseDoc, components: Components, extraHeaders: Json = {}): Json {
  const headers: Json = { "x-request-id": REQUEST_ID_HEADER, ...extraHeaders };
  for (const [name, h] of Object.entries(doc.headers ?? {}))
    headers[name] = { description: h.description, schema: h.schema ?? { type: "string" } };
  const out: Json = { description: doc.description, headers };
  const content: Json = {};
  if (doc.schema) content["application/json"] = { schema: components.schema(doc.schema, "output") };
  if (doc.content) content[doc.content.mediaType] = { schema: doc.content.schema };
  if (Object.keys(content).length) out.content = content;
  return out;
}

/** An event the API POSTs to webhook endpoints: OpenAPI 3.1's top-level `webhooks`, keyed by event type. */
export interface WebhookDoc {
  summary: string;
  /** The request body (the event envelope). */
  schema: ZodType;
}

const SIGNATURE_HEADERS = [
  {
    name: "webhook-id",
    description: "The event's id: the same on every retry (drop duplicates by it)",
    example: "1042",
  },
  {
    name: "webhook-timestamp",
    description: "Seconds since the epoch when this attempt was signed (refuse old ones: replay)",
    example: "1767225600",
  },
  {
    name: "webhook-signature",
    description:
      "Space-separated `v1,<base64>` HMAC-SHA256 signatures of `id.timestamp.body` (two during a secret rotation); verify with a Standard Webhooks library and the endpoint's `whsec_` secret",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
];

/** The OpenAPI 3.1 document of `routes` (hidden routes left out) and of the events webhooks receive. */
export function buildOpenApi(
  routes: RouteDefinition<any, any>[],
  info: { version: string; serverUrl?: string; webhooks?: Record<string, WebhookDoc>; event?: ZodType },
) {
  const components = new Components();
  const settlementRef = components.ref(PaymentSettlement, "output");
  const paymentResponseHeader = {
    description: "When x402 paid the call: the settlement (base64 JSON)",
    schema: {
      type: "string",
      contentEncoding: "base64",
      contentMediaType: "application/json",
      contentSchema: settlementRef,
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    if (route.hidden) continue;
    const operationId = operationIdOf(route);
    if (operationIds.has(operationId))
      throw new Error(`Two routes have the operationId ${operationId}; give one an operationId`);
    operationIds.add(operationId);
    (paths[route.path] ??= {})[route.method] = operationOf(route, operationId, components, paymentResponseHeader);
  }
  if (info.event) components.ref(info.event, "output"); // the union of every event (the stream's data lines), a component
  const webhooks = webhooksOf(info.webhooks ?? {}, components);
  return {
    openapi: "3.1.0",
    info: { title: "Tokenized-Asset Transaction API", version: info.version, description: DESCRIPTION },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    tags: TAGS,
    paths,
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    components: {
      securitySchemes,
      responses: sharedResponses(components),
      headers: {
        RequestId: {
          description: "The request's id (the caller's own x-request-id when it sent a valid one); the logs carry it",
          schema: { type: "string" },
        },
      },
      schemas: sortKeys(components.schemas),
    },
  };
}

/** One route's operation: its responses (the shared error responses by reference), parameters and request body. */
function operationOf(
  route: RouteDefinition<any, any>,
  operationId: string,
  components: Components,
  paymentResponseHeader: Json,
): Record<string, unknown> {
  const paid = takesPayment(route.access);
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(successResponses(route))) {
    const extra: Json = paid ? { "PAYMENT-RESPONSE": paymentResponseHeader } : {};
    if (route.idempotent)
      extra[REPLAYED_HEADER] = {
        description: "true on an answer given again for a retry under the same Idempotency-Key",
        schema: { type: "string", enum: ["true"] },
      };
    if (doc) responses[status] = responseObject(doc, components, extra);
  }
  responses["400"] = { $ref: "#/components/responses/BadRequest" };
  if (route.access.key !== "none" || route.access.name === "operatorSession")
    responses["401"] = { $ref: "#/components/responses/Unauthorized" };
  if (paid) responses["402"] = { $ref: "#/components/responses/PaymentRequired" };
  if (route.rateLimited) responses["429"] = { $ref: "#/components/responses/TooManyRequests" };
  responses["4XX"] = { $ref: "#/components/responses/ClientError" };
  responses["503"] = { $ref: "#/components/responses/ChainUnavailable" };
  responses["5XX"] = { $ref: "#/components/responses/ServerError" };
  const operation: Record<string, unknown> = {
    operationId,
    summary: route.summary,
    tags: route.tags,
    security: security(route.access, route),
    responses,
  };
  if (route.description) operation.description = route.description;
  const parameters: unknown[] = [];
  for (const match of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name: match[1], in: "path", required: true, schema: { type: "string" } });
  }
  if (route.query) {
    const schema = components.schema(route.query, "input");
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, propertySchema] of Object.entries(properties)) {
      const { description, ...rest } = propertySchema;
      parameters.push({
        name,
        in: "query",
        required: required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  if (route.idempotent) {
    const { description, ...schema } = z.toJSONSchema(idempotencyKeySchema, { io: "input" }) as Json;
    delete schema.$schema;
    parameters.push({ name: IDEMPOTENCY_HEADER, in: "header", required: false, description, schema });
  }
  if (parameters.length) operation.parameters = parameters;
  const documented = route.body ?? route.documentedBody;
  if (route.multipartFiles) {
    const body = documented ? components.schema(documented, "input") : { type: "object", properties: {} };
    const properties = { ...((body.properties as object) ?? {}) } as Record<string, unknown>;
    for (const file of route.multipartFiles) properties[file] = { type: "string", format: "binary" };
    operation.requestBody = { required: true, content: { "multipart/form-data": { schema: { ...body, properties } } } };
  } else if (documented) {
    operation.requestBody = { required: true, content: jsonContent(components.schema(documented, "input")) };
  }
  return operation;
}

/** The webhooks section: one POST per event type, with the Standard Webhooks signature headers. */
function webhooksOf(hooks: Record<string, WebhookDoc>, components: Components): Record<string, unknown> {
  const webhooks: Record<string, unknown> = {};
  for (const [type, hook] of Object.entries(hooks)) {
    webhooks[type] = {
      post: {
        operationId: `${type.replace(/[._](\w)/g, (_m, c: string) => c.toUpperCase())}Event`,
        summary: hook.summary,
        tags: ["webhooks"],
        parameters: SIGNATURE_HEADERS.map((h) => ({
          name: h.name,
          in: "header",
          required: true,
          description: h.description,
          schema: { type: "string", example: h.example },
        })),
        requestBody: { required: true, content: jsonContent(components.ref(hook.schema, "output")) },
        responses: {
          "2XX": { description: "Received: any 2xx ends the delivery (answer fast; redirects are not followed)" },
          default: {
            description: "Anything else, or no answer within the timeout: retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h)",
          },
        },
      },
    };
  }
  return webhooks;
}

/** The error responses every operation refers to. */
function sharedResponses(components: Components): Record<string, unknown> {
  const errorRef = components.ref(ErrorBody, "output");
  const paymentRequiredRef = components.ref(PaymentRequired, "output");
  const error = (description: string, headers: Json = {}) => ({
    description,
    headers: { "x-request-id": REQUEST_ID_HEADER, ...headers },
    content: jsonContent(errorRef),
  });
  return {
    BadRequest: error("The request is invalid: the message names the field (or the pre-check that failed)"),
    Unauthorized: error(
      "The API key is missing (where a key is required) or not valid; on the console's routes, no live session (details.reason: no_session, expired, revoked)",
    ),
    PaymentRequired: error(
      "Payment required: no key and no (valid) payment. Pay the quote in PAYMENT-REQUIRED and repeat the call with X-PAYMENT",
      {
        "PAYMENT-REQUIRED": {
          required: true,
          description:
            "The x402 quote (base64 JSON); read chain, asset, amount and recipient from it, never hard-code them",
          schema: {
            type: "string",
            contentEncoding: "base64",
            contentMediaType: "application/json",
            contentSchema: paymentRequiredRef,
          },
        },
      },
    ),
    TooManyRequests: error("Too many requests: wait the seconds in Retry-After", {
      "Retry-After": {
        required: true,
        description: "Seconds to wait before trying again",
        schema: { type: "integer", minimum: 0 },
      },
    }),
    ClientError: error(
      "Another client error (403 not allowed or out of credits, 404 unknown, 405 method not allowed, 409 conflict, 410 gone, 413, 415); the codes are in the ErrorCode schema",
    ),
    ChainUnavailable: error(
      "A chain this call needs is not answering (every RPC provider failed or rate-limited): nothing was sent or charged; try again after Retry-After",
      {
        "Retry-After": {
          required: true,
          description: "Seconds to wait before trying again",
          schema: { type: "integer", minimum: 1 },
        },
      },
    ),
    ServerError: error("A failure of the service or of a chain it depends on; x-request-id identifies it in the logs"),
  };
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
