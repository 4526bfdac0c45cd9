import { randomUUID } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import { ChainUnavailableError, isChainUnavailable } from "./chains/rpc-errors";
import { ApiError } from "./errors";
import { errorFacts } from "./logger";
import { metricsOf } from "./metrics";
import { toApiError } from "./http/error-mapping";
import { buildOpenApi } from "./http/openapi";
import { routesRouter, type RouteDefinition } from "./http/route";
import { adminRoutes } from "./routes/admin";
import { agentRoutes } from "./routes/agents";
import { docsAssets, docsRoutes } from "./routes/docs";
import { metaRoutes } from "./routes/meta";
import { ramsRoutes } from "./routes/rams";
import { onboardingRoutes } from "./routes/onboarding";
import { PAID_READS } from "./routes/paid-reads";
import { readRoutes } from "./routes/reads";
import { stoReadRoutes } from "./routes/sto-reads";
import { writeRoutes } from "./routes/write";
import { x402Routes } from "./routes/x402";
import { eventRoutes } from "./routes/events";
import { webhookRoutes } from "./routes/webhooks";
import { mcpRoutes, ownOriginOf } from "./routes/mcp";
import { consoleRoutes } from "./routes/console";
import { consolePageRoutes } from "./routes/console-pages";
import type { PricedOperation } from "./console/keys";
import { mcpToolOf } from "./mcp/dispatch";
import { isMcpPath, originAllowed, unreadableBody } from "./mcp/protocol";
import { Event, EVENT_CATALOGUE, EVENT_ENVELOPES, EVENT_TYPES } from "./events/types";
import { PUBLIC_METHODS } from "./methods";
import type { Services } from "./usecases/services";

export const API_VERSION = "2.0.0";

/** Every route of the API, in one list: the router and /openapi.json are both built from it. */
export function allRoutes(services: Services): RouteDefinition<any, any>[] {
  const paidReads = () =>
    allRoutes(services).filter((r) => r.method === "get" && r.access.key === "optional" && r.access.price);
  return [
    ...metaRoutes(services),
    ...writeRoutes(services),
    ...readRoutes(services),
    ...stoReadRoutes(services),
    ...agentRoutes(services),
    ...ramsRoutes(services),
    ...x402Routes(services, paidReads),
    ...onboardingRoutes(services),
    ...webhookRoutes(services),
    ...eventRoutes(services),
    ...mcpRoutes(services, () => allRoutes(services), API_VERSION),
    ...docsRoutes(services, { document: () => apiDocument(services), version: API_VERSION }),
    ...consoleRoutes(services, { pricedOperations: pricedOperationTiers }),
    ...consolePageRoutes(services, { pricedOperations: pricedOperationTiers }),
  ];
}

/**
 * Every operation with a price, the names `npm run admin -- prices set --operation` takes: each priced prepare method,
 * each paid read (its path without the leading slash), the faucet.
 */
export function pricedOperations(): string[] {
  return pricedOperationTiers().map((o) => o.operation);
}

let tiers: PricedOperation[] | undefined;

/** pricedOperations with the price tier whose default each takes (the console shows the prices in force). */
export function pricedOperationTiers(): PricedOperation[] {
  if (tiers) return tiers;
  return (tiers = [
    ...PUBLIC_METHODS.filter((m) => m.access.price).map((m) => ({ operation: m.name, tier: m.access.price! })),
    ...PAID_READS.map((r) => ({ operation: r.path.replace(/^\//, ""), tier: r.tier })),
    { operation: "faucet", tier: "faucet" as const },
  ]);
}

const documents = new WeakMap<Services, object>();

/**
 * The OpenAPI 3.1 document of this API (built once per service instance). `services` may be a bare stand-in: building
 * the routes reads nothing from it (scripts/generate-client.ts builds the document without a running service).
 */
export function apiDocument(services: Services): object {
  let document = documents.get(services);
  if (!document) {
    const webhooks = Object.fromEntries(
      EVENT_TYPES.map((type) => [type, { summary: EVENT_CATALOGUE[type].summary, schema: EVENT_ENVELOPES[type] }]),
    );
    documents.set(
      services,
      (document = buildOpenApi(allRoutes(services), {
        version: API_VERSION,
        serverUrl: services.config?.PUBLIC_BASE_URL,
        webhooks,
        event: Event,
      })),
    );
  }
  return document;
}

/** A caller's x-request-id is kept when it is a plain token (letters, digits, ._:-, up to 100); otherwise a fresh one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The Express app without listen(): main.ts serves it, tests mount it on an ephemeral port. */
export function createApp(services: Services, options: { adminToken: string }): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // Which proxies may name the client (X-Forwarded-For) for req.ip, which the per-IP limits count: TRUST_PROXY.
  app.set("trust proxy", services.config?.trustProxy ?? "loopback");

  const metrics = metricsOf(services, API_VERSION);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = req.header("x-request-id") ?? "";
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = requestId;
    res.locals.log = services.logger.child({ requestId });
    res.setHeader("x-request-id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The route template, never the raw path: paths may carry capabilities (a document's hash) and would explode metrics.
      const route: string = res.locals.route ?? "(unmatched)";
      metrics.observe(req.method, route, res.statusCode, seconds);
      const unmatched = res.locals.route === undefined ? { path: req.path.slice(0, 200) } : {};
      // A route called by an MCP tool says which.
      const tool = mcpToolOf(req);
      res.locals.log.info(
        {
          method: req.method,
          route,
          ...unmatched,
          ...(tool ? { mcpTool: tool } : {}),
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
        },
        "request",
      );
    });
    next();
  });

  app.use(corsHeaders(services));

  // Clients send Content-Type: application/json on GETs too, sometimes with an empty body.
  app.use(express.json({ limit: "1mb", type: ["application/json", "application/*+json"] }));

  app.get("/docs/assets/:file", docsAssets);
  app.use(
    routesRouter(
      [...allRoutes(services), ...adminRoutes(services, { token: options.adminToken, operations: pricedOperations() })],
      services,
    ),
  );

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError("NOT_FOUND", `No route for ${req.method} ${req.path}`));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiError = answerOf(error);
    if (apiError.status >= 500) res.locals.log?.error({ err: errorFacts(error), path: req.path }, "request failed");
    for (const [name, value] of Object.entries(apiError.headers ?? {})) res.setHeader(name, value);
    if (isMcpPath(req.path)) {
      // An MCP client reads JSON-RPC errors: -32700 for a body that is not JSON, -32600 for any other refusal.
      const raw = (error as { body?: unknown } | undefined)?.body;
      const refusal = unreadableBody(apiError.status, apiError.code === "MALFORMED_JSON", apiError.message, raw);
      return void res.status(refusal.status).json(refusal.body);
    }
    res.status(apiError.status).json(apiError.toBody());
  });

  return app;
}

/**
 * CORS and the headers every answer carries. The REST API answers any page (its credentials are headers a page must
 * hold); /mcp only pages of the service's own origin and MCP_ALLOWED_ORIGINS, never a wildcard (mcp/protocol.ts).
 */
function corsHeaders(services: Services) {
  return (req: Request, res: Response, next: NextFunction) => {
    // /mcp answers browsers of the service's own origin (and MCP_ALLOWED_ORIGINS) only: never a wildcard.
    if (isMcpPath(req.path)) {
      const origin = req.header("origin");
      if (origin && originAllowed(origin, ownOriginOf(services, req)))
        res.setHeader("Access-Control-Allow-Origin", origin);
      res.setHeader("Vary", "Origin");
    } else res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader(
      "Access-Control-Allow-Headers",
      "Content-Type, x-api-key, Authorization, X-PAYMENT, payment-signature, Idempotency-Key, x-request-id, Last-Event-ID, Mcp-Protocol-Version, X-MCP-Toolsets, X-MCP-Tools, X-MCP-Readonly",
    );
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS");
    res.setHeader("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Retry-After, x-request-id");
    // Answers echo user text (an agent's registration file, error messages): never let a browser sniff them into HTML.
    res.setHeader("X-Content-Type-Options", "nosniff");
    if (req.method === "OPTIONS") return void res.status(204).end();
    next();
  };
}

/**
 * Every error a request can end in, as the one ApiError shape. The lower layers' errors map as http/error-mapping.ts
 * says; other known error types map to their status: body-parser's
 * (unsupported charset or encoding, bad compressed data, malformed JSON, too large), URI decoding, database
 * constraints reached by hostile input. Anything else is a bug: a 500 whose request id finds it in the logs.
 */
export function answerOf(error: unknown): ApiError {
  const mapped = toApiError(error);
  if (mapped) return mapped;
  const unavailable = chainUnavailable(error);
  if (unavailable) return unavailable;
  const e = error as {
    type?: string;
    status?: number;
    statusCode?: number;
    message?: string;
    code?: string;
    constraint?: string;
    expose?: boolean;
  };
  switch (e?.type) {
    case "entity.parse.failed":
      return new ApiError("MALFORMED_JSON", "Request body is not valid JSON");
    case "entity.too.large":
      return new ApiError("PAYLOAD_TOO_LARGE", "Request body is too large");
    case "charset.unsupported":
      return new ApiError(
        "UNSUPPORTED_CHARSET",
        "Request body charset is not supported: send JSON as UTF-8 (Content-Type: application/json; charset=utf-8)",
      );
    case "encoding.unsupported":
      return new ApiError(
        "UNSUPPORTED_ENCODING",
        "Content-Encoding is not supported: send the body uncompressed, or gzip, deflate or br",
      );
    case "request.aborted":
      return new ApiError("REQUEST_ABORTED", "The request body was not received completely");
  }
  if (error instanceof URIError || /Failed to decode param/i.test(e?.message ?? "")) {
    return new ApiError("MALFORMED_URL", "The URL has an undecodable %-escape");
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // Other client errors from the HTTP layer (e.g. a body that claims gzip but is not): no internals in the message.
    if (status === 415) return new ApiError("UNSUPPORTED_ENCODING", "Unsupported request body encoding");
    if (status === 413) return new ApiError("PAYLOAD_TOO_LARGE", "Request body is too large");
    return new ApiError("BAD_REQUEST", "The request body could not be read (is its Content-Encoding right?)");
  }
  switch (e?.code) {
    case "23505":
      return new ApiError("CONFLICT", "This request conflicts with a record that already exists");
    case "22P02":
    case "22003":
    case "22021":
    case "54001":
      return new ApiError("BAD_REQUEST", "A value of this request cannot be stored (out of range or not valid text)");
  }
  return new ApiError("INTERNAL_ERROR", "Internal error; the request id in x-request-id identifies it in the logs");
}

/**
 * A chain that could not be asked (every RPC URL failed or throttled within the retry budget) is a 503 naming the
 * chain, with Retry-After: never a 500, and never a verdict such as "would revert".
 */
function chainUnavailable(error: unknown): ApiError | undefined {
  if (!isChainUnavailable(error)) return undefined;
  const known = error instanceof ChainUnavailableError ? error : undefined;
  const chainId = known?.chainId ?? (error as { chainId?: number })?.chainId;
  const retryAfter = known?.retryAfterSeconds ?? 5;
  const what = chainId === undefined ? "A chain" : `Chain ${chainId}`;
  return new ApiError(
    "CHAIN_UNAVAILABLE",
    `${what} is not answering right now (its RPC providers failed or are rate limiting); nothing was charged or sent: try again in ${retryAfter} s`,
    { ...(chainId === undefined ? {} : { chainId }), retryAfterSeconds: retryAfter },
    { "Retry-After": String(retryAfter) },
  );
}
