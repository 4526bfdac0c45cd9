import {
  Router as expressRouter,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from "express";
import type { ZodType } from "zod";
import { CallPayment, identify, type Caller, type GateServices } from "../auth/gate";
import type { AccessRule } from "../auth/access-rules";
import { ApiError } from "../errors";
import { JsonText } from "../wire/json-text";
import type { IdempotentRequests } from "../store/idempotent-requests";
import { countedAs } from "../store/db-work";
import { REPLAYED_HEADER, startIdempotent, type IdempotentRun } from "./idempotency";
import { toApiError } from "./error-mapping";
import { guardInput } from "./input-guard";
import { withMisspellingHint } from "./input-hints";
import { knownKeys } from "../wire/near-names";
import { parseInput } from "../wire/parse-input";
import { paymentHeaderOf, paymentResponseHeaders } from "./x402-headers";

export type HttpMethod = "get" | "post" | "patch" | "delete";

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** One documented answer of a route. */
export interface ResponseDoc {
  description: string;
  /** The JSON body (application/json). */
  schema?: ZodType;
  /** A body that is not JSON: its media type and JSON Schema (e.g. text/html as a string). */
  content?: { mediaType: string; schema: Record<string, unknown> };
  /** Response headers beyond the ones every answer carries (x-request-id). */
  headers?: Record<string, { description: string; schema?: Record<string, unknown> }>;
}

/** The success answers of a route by status (200, 202…). */
export type SuccessResponses = Partial<Record<200 | 201 | 202 | 204, ResponseDoc>>;

export interface RouteDefinition<Q = unknown, B = unknown> {
  method: HttpMethod;
  path: string;
  summary: string;
  tags: string[];
  /**
   * Who may call it and who pays (an access rule). The router checks the key before the handler runs; a
   * paid handler takes its payment with `payment.take(...)` after its own checks, and the router settles it on success.
   * Routes whose rule depends on the body (prepare, send) get an optional-key rule and let the write flow decide.
   */
  access: AccessRule;
  description?: string;
  query?: ZodType<Q>;
  body?: ZodType<B>;
  /** Body schema shown in /openapi.json when the handler validates the body itself (e.g. per method). */
  documentedBody?: ZodType;
  /** Request is multipart/form-data; files are described here for the OpenAPI document. */
  multipartFiles?: string[];
  /**
   * What a successful call answers: the schema of its 200 JSON body, or each success status with its content. Error
   * answers (the error body, 402, 429) are added by the OpenAPI generator from the access rule and `rateLimited`.
   */
  response: ZodType | SuccessResponses;
  /** Answers 429 with Retry-After when the caller goes too fast (the prepare routes, the faucet's cooldown). */
  rateLimited?: boolean;
  /** Runs first, before the key is checked and the input parsed: throws to refuse the request (per-IP limits). */
  admit?: (req: Request) => Promise<void>;
  /** The OpenAPI operationId; default: the path in camelCase (/get-token-info → getTokenInfo). */
  operationId?: string;
  /**
   * Takes an Idempotency-Key header (the paid write routes): a retry of the same request under the key gets the first
   * successful answer again and is charged once; another request under it is a 409.
   */
  idempotent?: boolean;
  /** Hidden routes are mounted but left out of /openapi.json (operator endpoints). */
  hidden?: boolean;
  /**
   * How the route appears among the MCP tools: by default it is a tool named after its
   * operationId; `name` names it otherwise, `prepares` marks the tool that prepares a method's transactions,
   * `description` says in fewer words what a model needs of the route's description; `false` leaves it out (a facade
   * of a method that already is a tool).
   */
  tool?: { name?: string; prepares?: string; description?: string } | false;
  /**
   * The route's body is not a request of this API but an envelope of others, each checked by the route it reaches
   * (POST /mcp: a tool call's arguments go through the input guard of the route the tool calls), or the handler calls
   * the input guard itself (POST /admin/command: which secret-named field it takes depends on the command).
   */
  guardsOwnInput?: boolean;
  /**
   * Body fields named like a secret that this route does take (the input guard refuses them elsewhere): the operator
   * console's sign-in and password change take an operator's `password`, never a wallet's key.
   */
  takesSecrets?: string[];
  handler: (input: {
    query: Q;
    body: B;
    req: Request;
    res: Response;
    caller: Caller;
    payment: CallPayment;
  }) => Promise<unknown>; // a RouteResult, or the body itself
}

export function defineRoute<Q = unknown, B = unknown>(route: RouteDefinition<Q, B>): RouteDefinition<Q, B> {
  return route;
}

/**
 * The routes as one express Router. Fixed paths are found with one table lookup: express would test each route's
 * pattern in turn, and with a hundred routes that walk was a visible share of a cheap read. Paths with parameters
 * ({sha256}) are mounted on the Router after the table. Matching stays express's: case-insensitive, one trailing slash
 * allowed, HEAD answered by the GET route.
 */
/** What the router uses: the access gate's services and the answers kept for Idempotency-Keys. */
export type RouterServices = GateServices & { idempotentRequests: IdempotentRequests };

export function routesRouter(routes: RouteDefinition<any, any>[], services: RouterServices): Router {
  const router = expressRouter();
  const fixed = new Map<string, RequestHandler>();
  const withParameters: RouteDefinition<any, any>[] = [];
  for (const route of routes) {
    if (route.path.includes("{")) withParameters.push(route);
    else {
      const key = fixedKey(route.method.toUpperCase(), route.path);
      if (fixed.has(key)) throw new Error(`two routes answer ${key} (paths match whatever their letter case)`);
      fixed.set(key, routeHandler(route, services));
    }
  }
  const fixedPaths = (req: Request, res: Response, next: NextFunction) => {
    const handler = fixed.get(fixedKey(req.method === "HEAD" ? "GET" : req.method, req.path));
    if (handler) return void handler(req, res, next);
    next();
  };
  // What the table serves ("get /health"), for whoever lists the app's routes (the OpenAPI test walks the app).
  router.use(
    Object.assign(fixedPaths, {
      mountedRoutes: routes.filter((r) => !withParameters.includes(r)).map((r) => `${r.method} ${r.path}`),
    }),
  );
  for (const route of withParameters)
    router[route.method](route.path.replace(/\{(\w+)\}/g, ":$1"), routeHandler(route, services));
  router.use(methodNotAllowed(routes));
  return router;
}

/**
 * Reached when no route answered: a path that exists under other methods is a 405 with Allow (GET on a POST route, and
 * the reverse); a path that does not exist at all goes on to the 404.
 */
function methodNotAllowed(routes: RouteDefinition<any, any>[]): RequestHandler {
  const byPath = new Map<string, Set<string>>();
  const patterns: { pattern: RegExp; method: string }[] = [];
  // Hidden routes (the operator's command) stay unknown to anyone who tries another method: a 404.
  for (const route of routes.filter((r) => !r.hidden)) {
    const method = route.method.toUpperCase();
    if (route.path.includes("{")) {
      const source = route.path
        .split(/\{\w+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]+");
      patterns.push({ pattern: new RegExp(`^${source}/?$`, "i"), method });
    } else {
      const key = fixedKey("", route.path);
      if (!byPath.has(key)) byPath.set(key, new Set());
      byPath.get(key)!.add(method);
    }
  }
  return (req: Request, _res: Response, next: NextFunction) => {
    const allowed = new Set(byPath.get(fixedKey("", req.path)));
    for (const { pattern, method } of patterns) if (pattern.test(req.path)) allowed.add(method);
    if (!allowed.size) return next();
    const answers = [...allowed].sort().join(" or ");
    if (allowed.has("GET")) allowed.add("HEAD");
    const methods = [...allowed].sort();
    const allow = [...methods, "OPTIONS"].join(", ");
    next(
      new ApiError(
        "METHOD_NOT_ALLOWED",
        `${req.method} is not allowed on ${req.path}: it answers ${answers}`,
        { method: req.method, allowed: methods },
        { Allow: allow },
      ),
    );
  };
}

/** The media types a JSON body is read from (express.json's own list). */
const JSON_TYPES = ["application/json", "application/*+json"];

/**
 * A route that reads a JSON body refuses a body of another type (a form post, text) with a 415 that says what to send,
 * rather than a "field is required" about a body it never read. Multipart routes parse their own bodies; GET bodies
 * are optional extras (some clients send GET parameters in a JSON body).
 */
function assertJsonBody(route: RouteDefinition<any, any>, req: Request): void {
  if (route.method === "get" || route.multipartFiles || !(route.body || route.documentedBody)) return;
  if (req.is(JSON_TYPES) !== false) return; // JSON, or no body at all
  const given = req.header("content-type") ?? "";
  const type = given.split(";")[0].trim().toLowerCase();
  throw new ApiError(
    "UNSUPPORTED_MEDIA_TYPE",
    `${route.method.toUpperCase()} ${route.path} reads a JSON body: send it with Content-Type: application/json${type ? `, not ${type}` : " (none was given)"}`,
    { contentType: type || null, expected: "application/json" },
  );
}

function fixedKey(method: string, path: string): string {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return `${method} ${trimmed.toLowerCase()}`;
}

/** One route's handler: checks the caller's key, parses query and body, runs the handler, settles its payment, writes JSON. */
function routeHandler(route: RouteDefinition<any, any>, services: RouterServices): RequestHandler {
  const work = `${route.method.toUpperCase()} ${route.path}`;
  const handle = answer(route, services);
  // The database's trips are counted per route, with what the request starts that outlives it (a runner's ending).
  return (req, res, next) => countedAs(work, () => handle(req, res, next));
}

function answer(route: RouteDefinition<any, any>, services: RouterServices): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let payment: CallPayment | undefined;
    let idempotent: IdempotentRun | undefined;
    res.locals.route = route.path; // the template, for metrics and logs (never the raw path)
    try {
      await route.admit?.(req);
      assertJsonBody(route, req);
      guardInput(req.query, "query");
      if (!route.guardsOwnInput) guardInput(req.body, "body", route.takesSecrets);
      const caller = await identify(services, req, route.access);
      if (route.idempotent) {
        const started = await startIdempotent(
          services.idempotentRequests,
          req,
          route.path,
          caller.apiKey?.id ?? "keyless",
        );
        if (started && "replay" in started) {
          for (const [name, value] of Object.entries(started.replay.headers)) res.setHeader(name, value);
          res.setHeader(REPLAYED_HEADER, "true");
          return void res.status(started.replay.status).json(started.replay.body);
        }
        idempotent = started;
      }
      // Some clients put GET parameters in a JSON body: the query string wins.
      const rawQuery = route.method === "get" ? { ...(isObject(req.body) ? req.body : {}), ...req.query } : req.query;
      const query = route.query ? parseInput(route.query, rawQuery, "query") : rawQuery;
      const body = route.body ? parseInput(route.body, req.body, "body") : req.body;
      payment = new CallPayment(services, req, route.access, caller, paymentHeaderOf(req));
      const result = await route.handler({ query, body, req, res, caller, payment });
      if (res.headersSent) return;
      const shaped = isRouteResult(result) ? result : { body: result };
      const settled = paymentResponseHeaders(await payment.settle());
      const headers = { ...shaped.headers, ...settled };
      // Kept before it leaves: a retry that follows the answer at once finds it.
      await idempotent?.keep({
        status: shaped.status ?? 200,
        body: shaped.body instanceof JsonText ? JSON.parse(shaped.body.text) : shaped.body,
        headers,
      });
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.status(shaped.status ?? 200);
      if (shaped.body instanceof JsonText) res.type("application/json").send(shaped.body.text);
      else res.json(shaped.body);
    } catch (error) {
      await payment?.release(`the call failed: ${(error as Error).message}`).catch(() => undefined);
      await idempotent?.letGo().catch(() => undefined);
      next(misspellingHint(route, req, toApiError(error) ?? error));
    }
  };
}

/** The error, naming a near-miss unknown key when it is about a field the request lacks (input-hints.ts). */
function misspellingHint(route: RouteDefinition<any, any>, req: Request, error: unknown): unknown {
  if (!(error instanceof ApiError) || !error.param) return error;
  const fromQuery = error.details?.in === "query" || route.method === "get";
  const input = fromQuery ? { ...(isObject(req.body) ? req.body : {}), ...req.query } : req.body;
  const known = knownKeys(fromQuery ? route.query : (route.body ?? route.documentedBody));
  return withMisspellingHint(error, input, known);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isRouteResult(v: unknown): v is RouteResult {
  return isObject(v) && "body" in v && Object.keys(v).every((k) => k === "body" || k === "status" || k === "headers");
}
