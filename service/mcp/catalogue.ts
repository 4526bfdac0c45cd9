import { idempotencyKeySchema } from "../http/idempotency";
import { operationIdOf, successResponses, takesPayment } from "../http/openapi";
import type { RouteDefinition } from "../http/route";
import { PaymentRequired } from "../wire/responses";
import { objectSchema, schemaParts, type Json, type SchemaParts } from "./json-schema";
import { snakeCase, toolName } from "./names";
import { IDEMPOTENCY_ARGUMENT, ToolError, type RouteTool } from "./tool";

/**
 * The MCP tools of the API, generated from the route definitions that feed the router and /openapi.json: one tool per
 * route (a prepare method's facades excepted: the method already is a tool, through /prepare-transactions/{method}),
 * its input the request's JSON Schema (query, path parameters and body as one object, REST field names), its output
 * the route's answer, a payment requirement (x402 over MCP) or the API's error. A new route or method is a new tool.
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

/** The tools of `routes`, in route order; two routes that would share a tool name are refused (a bug to fix). */
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

function toolOf(route: RouteDefinition<any, any>): RouteTool {
  const tool = route.tool || {};
  const prepares = tool.prepares;
  const name = toolName(tool.name ?? snakeCase(prepares && prepares !== "*" ? prepares : operationIdOf(route)));
  const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const queryFields =
    route.method === "get" || route.method === "delete" ? "all" : Object.keys(objectShape(route.query));
  const readOnly = route.method === "get";
  return {
    name,
    title: route.summary,
    description: describe(route),
    inputSchema: inputSchemaOf(route, pathParameters),
    outputSchema: outputSchemaOf(route),
    annotations: {
      title: route.summary,
      readOnlyHint: readOnly,
      destructiveHint: route.method === "delete",
      idempotentHint: readOnly || route.method === "delete",
      openWorldHint: true,
    },
    _meta: {
      "tak/route": `${route.method.toUpperCase()} ${route.path}`,
      "tak/access": route.access.name,
      "tak/paid": takesPayment(route.access),
      ...(prepares ? { "tak/prepares": prepares } : {}),
    },
    call: {
      method: route.method,
      path: route.path,
      pathParameters,
      queryFields,
      idempotent: route.idempotent === true,
    },
    access: route.access,
    ...(prepares ? { prepares } : {}),
  };
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
        [IDEMPOTENCY_ARGUMENT]: {
          ...schemaParts(idempotencyKeySchema, "input").root,
          description:
            "Sent as the Idempotency-Key header: a retry with the same key and arguments gets the first answer and is charged once",
        },
      }
    : {};
  return objectSchema(parts, "allOf", idempotency);
}

/** The route's answers (each success schema), and the payment requirement (paid routes) or error a call may end in. */
function outputSchemaOf(route: RouteDefinition<any, any>): Json {
  const answers: SchemaParts[] = [];
  const seen = new Set<unknown>();
  for (const doc of Object.values(successResponses(route))) {
    if (!doc?.schema || seen.has(doc.schema)) continue;
    seen.add(doc.schema);
    answers.push(schemaParts(doc.schema, "output"));
  }
  if (takesPayment(route.access)) answers.push(schemaParts(PaymentRequired, "output"));
  answers.push(schemaParts(ToolError, "output"));
  return objectSchema(answers, "anyOf");
}

const CREDENTIALS: Record<string, string> = {
  required:
    "Needs an API key: the x-api-key (or Authorization: Bearer) header of the MCP connection, or TAK_API_KEY of the stdio server.",
  paid: 'Free with an API key (plan credits); without one it is paid with x402: the call answers isError with the payment requirements (PaymentRequired in structuredContent), and the same call with the signed payment in _meta["x402/payment"] runs it (the settlement comes back in _meta["x402/payment-response"]). The stdio server with TAK_PRIVATE_KEY pays by itself.',
};

function describe(route: RouteDefinition<any, any>): string {
  const lines = [route.summary];
  if (route.description) lines.push(route.description);
  if (route.tool && route.tool.prepares) {
    lines.push(
      "Answers unsigned transactions: sign each, in order, with the wallet of signerAddress, then call send_transactions { txId, signedTransactions } (wait_for_transaction follows the batch to its end). " +
        "The stdio server with TAK_PRIVATE_KEY checks, signs and sends them itself.",
    );
  }
  if (route.access.key === "required") lines.push(CREDENTIALS.required);
  else if (takesPayment(route.access)) lines.push(CREDENTIALS.paid);
  return lines.join("\n\n");
}
