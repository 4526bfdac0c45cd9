import type { ZodType } from "zod";
import { allRoutes } from "../../service/app";
import { successResponses, takesPayment } from "../../service/http/openapi";
import { ErrorBody, PaymentRequired, PaymentSettlement } from "../../service/wire/responses";
import type { RouteDefinition } from "../../service/http/route";
import { adminRoutes } from "../../service/routes/admin";
import type { Services } from "../../service/composition";

/**
 * Real answers checked against the schemas /openapi.json is generated from (the same zod schemas, strict objects: a
 * field the service returns but the document does not list fails too). The test ApiClient and the typed client's
 * test middleware run every JSON answer through `checkDocumented`; a mismatch throws, naming the route and the fields.
 */

interface Known {
  route: RouteDefinition<any, any>;
  pattern: RegExp;
}

let known: Known[] | undefined;

function routes(): Known[] {
  const services = { config: {} } as Services;
  // The operator's command is hidden from the document but still answers with its route's own response schema.
  known ??= [...allRoutes(services), ...adminRoutes(services, { token: "-".repeat(32), operations: [] })].map(
    (route) => ({
      route,
      pattern: new RegExp(`^${route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, "[^/]+")}$`),
    }),
  );
  return known;
}

/** The route that answers `method path` (literal paths first, then templates), if any. */
export function routeOf(method: string, path: string): RouteDefinition<any, any> | undefined {
  const m = method.toLowerCase();
  const candidates = routes().filter((k) => k.route.method === m && k.pattern.test(path));
  return (candidates.find((k) => !k.route.path.includes("{")) ?? candidates[0])?.route;
}

export class UndocumentedResponse extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UndocumentedResponse";
  }
}

function issuesOf(schema: ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value);
  if (result.success) return undefined;
  return result.error.issues
    .slice(0, 8)
    .map(
      (i) =>
        `${i.path.join(".") || "(body)"}: ${i.message}${i.code === "unrecognized_keys" ? ` (${(i as { keys: string[] }).keys.join(", ")})` : ""}`,
    )
    .join("; ");
}

function decodeHeader(value: string): unknown {
  return JSON.parse(Buffer.from(value, "base64").toString("utf8"));
}

export interface Answer {
  method: string;
  /** The path without the query. */
  path: string;
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when the answer is not JSON). */
  body: unknown;
}

/** Throws UndocumentedResponse when `answer` is not what /openapi.json says the route answers. */
export function checkDocumented(answer: Answer): void {
  const { method, path, status, headers, body } = answer;
  const label = `${method.toUpperCase()} ${path} → ${status}`;
  const fail = (what: string) => {
    throw new UndocumentedResponse(`${label}: ${what}\n${JSON.stringify(body).slice(0, 1500)}`);
  };
  if (!headers.get("x-request-id")) fail("no x-request-id header");
  const json = (headers.get("content-type") ?? "").includes("application/json");
  const route = routeOf(method, path);
  if (status >= 400) {
    if (!json) fail("an error that is not the JSON error body");
    const issues = issuesOf(ErrorBody, body);
    if (issues) fail(`not the documented error body: ${issues}`);
    if (status === 402) {
      const quote = headers.get("payment-required");
      if (!quote) fail("a 402 without PAYMENT-REQUIRED");
      const quoteIssues = issuesOf(PaymentRequired, decodeHeader(quote!));
      if (quoteIssues) fail(`PAYMENT-REQUIRED is not the documented quote: ${quoteIssues}`);
      if (route && !takesPayment(route.access)) fail("a 402 from a route whose access rule takes no payment");
    }
    if (status === 429) {
      if (!/^\d+$/.test(headers.get("retry-after") ?? "")) fail("a 429 without Retry-After (seconds)");
      if (route && !route.rateLimited) fail("a 429 from a route not documented as rate limited");
    }
    return;
  }
  if (!route) return fail("no route answers this path");
  const doc = successResponses(route)[status as 200];
  if (!doc) fail(`status ${status} is not documented for ${route.method.toUpperCase()} ${route.path}`);
  const settlement = headers.get("payment-response");
  if (settlement) {
    const settlementIssues = issuesOf(PaymentSettlement, decodeHeader(settlement));
    if (settlementIssues) fail(`PAYMENT-RESPONSE is not the documented settlement: ${settlementIssues}`);
  }
  if (!json) {
    if (doc!.schema && !doc!.content) fail(`answered ${headers.get("content-type")} where JSON is documented`);
    return;
  }
  if (!doc!.schema) fail("answered JSON where the document lists no JSON body");
  const issues = issuesOf(doc!.schema!, body);
  if (issues) fail(`not the documented schema of ${route.method.toUpperCase()} ${route.path}: ${issues}`);
}
