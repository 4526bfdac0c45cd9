import { operationIdOf, successResponses, takesPayment } from "../http/openapi";
import type { RouteDefinition } from "../http/route";
import { PUBLIC_METHODS } from "../methods";
import { objectSchema, schemaParts, type Json, type SchemaParts } from "./json-schema";
import { snakeCase, toolName } from "./names";
import { outputSchemaOf } from "./output-schema";
import { toolsetOf } from "./toolsets";
import { IDEMPOTENCY_ARGUMENT, type RouteTool, type ToolAnnotations } from "./tool";

/**
 * The MCP tools of the API, generated from the route definitions that feed the router and /openapi.json: one tool per
 * route (a prepare method's facades excepted: the method already is a tool, through /prepare-transactions/{method}),
 * its input the request's JSON Schema (query, path parameters and body as one object, REST field names, one name per
 * field), its output the route's answer (output-schema.ts), its toolset (toolsets.ts). A new route or method is a new
 * tool, which some toolset must name.
 *
 * Left out by rule: hidden routes (the operator's), routes that answer no JSON (the reference page, documents, the
 * event stream: wait_for_transaction follows it), multipart uploads, and the service's own health and documents (tag
 * "meta").
 */

/** Whether a route is a tool (see the rules above). */
export function isTool(route: RouteDefinition<any, any>): boolean {
  if (route.hidden || route.tool === false || route.multipartFiles || route.tags.includes("meta")) return false;
  return Object.values(successResponses(route)).some((doc) => doc?.schema !== undefined);
}

/**
 * The tools of `routes`, in route order. Two routes that would share a tool name, or a tool no toolset names, are
 * refused (a bug to fix: name the tool, or place it in a toolset).
 */
export function routeTools(routes: RouteDefinition<any, any>[]): RouteTool[] {
  const tools = routes.filter(isTool).map(toolOf);
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name))
      throw new Error(`two routes make the MCP tool ${tool.name}: give one a tool name (RouteDefinition.tool)`);
    seen.add(tool.name);
  }
  return tools;
}

/**
 * Writes that only add (a new agent, a piece of feedback, a response to it): they move no value and take no right
 * from anyone. Every other write may, so it is marked destructive (a client asks before running it).
 */
const ADDITIVE_WRITES = new Set(["agent_register", "agent_give_feedback", "agent_append_feedback_response"]);
/** Writes that are safe to repeat with the same arguments: the same effect, no second charge. */
const IDEMPOTENT_WRITES = new Set(["send_transactions", "update_webhook", "delete_webhook"]);
/** Writes that change only the caller's own records at this service (webhooks, KYC links, its test deliveries). */
const SERVICE_RECORDS = new Set([
  "create_webhook",
  "send_webhook_test",
  "redeliver_webhook",
  "create_kyc_link",
  "kyc_message",
  "kyc_submit",
]);

function annotationsOf(route: RouteDefinition<any, any>, name: string): ToolAnnotations {
  const readOnly = route.method === "get";
  if (readOnly) return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
  return {
    readOnlyHint: false,
    destructiveHint: !ADDITIVE_WRITES.has(name) && !SERVICE_RECORDS.has(name),
    idempotentHint: IDEMPOTENT_WRITES.has(name),
    openWorldHint: !SERVICE_RECORDS.has(name),
  };
}

function toolOf(route: RouteDefinition<any, any>): RouteTool {
  const options = route.tool || {};
  const prepares = options.prepares;
  const name = toolName(options.name ?? snakeCase(prepares && prepares !== "*" ? prepares : operationIdOf(route)));
  const toolset = toolsetOf(name);
  if (!toolset) throw new Error(`the MCP tool ${name} is in no toolset: add it to one in service/mcp/toolsets.ts`);
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const queryFields =
    route.method === "get" || route.method === "delete" ? "all" : Object.keys(objectShape(route.query));
  return {
    name,
    toolset,
    title: route.summary,
    description: describe(route),
    inputSchema: prepares === "*" ? anyMethodInput() : inputSchemaOf(route, pathParameters),
    outputSchema: outputSchemaOf(route, prepares !== undefined),
    annotations: annotationsOf(route, name),
    ...(prepares ? { _meta: { "tak/prepares": prepares } } : {}),
    call: {
      method: route.method,
      path: route.path,
      pathParameters,
      queryFields,
      idempotent: route.idempotent === true,
    },
    access: route.access,
    ...(prepares ? { prepares } : {}),
    ...priceOf(route, prepares),
  };
}

/** What a paid tool's price is looked up as (the operation names `npm run admin -- prices set` takes). */
function priceOf(route: RouteDefinition<any, any>, prepares: string | undefined): Pick<RouteTool, "price"> {
  const tier = route.access.price;
  if (!tier || !takesPayment(route.access)) return {};
  if (prepares) return prepares === "*" ? {} : { price: { operation: prepares, tier } };
  if (route.method === "get") return { price: { operation: route.path.replace(/^\//, ""), tier } };
  if (tier === "faucet") return { price: { operation: "faucet", tier } };
  return {};
}

/** The keys of a zod object schema (a route's query), none for anything else. */
function objectShape(schema: unknown): Record<string, unknown> {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape && typeof shape === "object" ? shape : {};
}

function inputSchemaOf(route: RouteDefinition<any, any>, pathParameters: string[]): Json {
  const parts: SchemaParts[] = [];
  if (pathParameters.length) {
    const properties = Object.fromEntries(
      pathParameters.map((p) => [p, { type: "string", description: `The {${p}} of ${route.path}` }]),
    );
    parts.push({ root: { type: "object", properties, required: pathParameters }, defs: {} });
  }
  if (route.query) parts.push(schemaParts(route.query, "input"));
  const body = route.body ?? route.documentedBody;
  if (body) parts.push(schemaParts(body, "input"));
  if (!parts.length) parts.push({ root: { type: "object", properties: {} }, defs: {} });
  const idempotency: Record<string, Json> = route.idempotent
    ? {
        [IDEMPOTENCY_ARGUMENT]: { type: "string" },
      }
    : {};
  const { description: _summary, ...schema } = objectSchema(parts, "allOf", idempotency);
  return withoutSharedDescriptions(schema);
}

/**
 * The arguments every prepare tool takes, described once in the server's instructions (SHARED_ARGUMENTS) rather
 * than in each tool's schema.
 */
export const SHARED_ARGUMENTS: Readonly<Record<string, string>> = {
  signerAddress: "the wallet that signs (omit it when service-relayed)",
  executionMode:
    "client-signed (default), service-relayed (the service's relayer sends it: paid in full at send with x402) or client-broadcast (you broadcast, then report the hash)",
  gasLimit: "overrides the estimated gas limit of every transaction",
  nonce: "the first nonce instead of the signer's pending one",
  [IDEMPOTENCY_ARGUMENT]:
    "the Idempotency-Key: a retry with the same key and arguments answers as the first, charged once",
};

function withoutSharedDescriptions(schema: Json): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return schema;
  const bare = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => {
      if (!(name in SHARED_ARGUMENTS)) return [name, property];
      const { description: _description, ...rest } = property;
      return [name, rest];
    }),
  );
  return { ...schema, properties: bare };
}

/**
 * prepare_transactions' input: the method's name and its fields, which are those of the method's own tool (each
 * method is a tool: its schema is there, once, rather than the 47 bodies again in one schema here).
 */
function anyMethodInput(): Json {
  return {
    type: "object",
    properties: {
      method: {
        type: "string",
        enum: PUBLIC_METHODS.flatMap((m) => [m.name, ...(m.aliases ?? [])]),
        description: "The method; its other fields are the arguments of its own tool (same names)",
      },
    },
    required: ["method"],
  };
}

function describe(route: RouteDefinition<any, any>): string {
  const lines = [route.summary];
  const more = (route.tool && route.tool.description) ?? route.description;
  if (more) lines.push(more);
  if (route.tool && route.tool.prepares)
    lines.push("Answers unsigned transactions: sign them (signerAddress), then send_transactions.");
  if (route.access.key === "required") lines.push("Needs an API key.");
  // The generic prepare's price is its method's: said here, since no one price can be listed with it.
  if (route.tool && route.tool.prepares === "*")
    lines.push("Without an API key: the method's price via x402 (its own tool states it).");
  return lines.join("\n");
}
