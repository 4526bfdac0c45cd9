import { randomUUID } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import { ApiError } from "./errors";
import { buildOpenApi } from "./http/openapi";
import { defineRoute, mountRoute, type RouteDefinition } from "./http/route";
import { adminRoutes } from "./routes/admin";
import { metaRoutes } from "./routes/meta";
import { readRoutes } from "./routes/reads";
import { stoReadRoutes } from "./routes/sto-reads";
import { writeRoutes } from "./routes/write";
import { x402Routes } from "./routes/x402";
import type { Services } from "./services";

export const API_VERSION = "2.0.0";

/** Every route of the API, in one list: the router and /openapi.json are both built from it. */
export function allRoutes(services: Services): RouteDefinition<any, any>[] {
  return [...metaRoutes(services), ...writeRoutes(services), ...readRoutes(services), ...stoReadRoutes(services), ...x402Routes(services)];
}

/** The Express app without listen(): main.ts serves it, tests mount it on an ephemeral port. */
export function createApp(services: Services, options: { adminToken: string }): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", "loopback");

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = (req.header("x-request-id") ?? "").slice(0, 100) || randomUUID();
    res.locals.requestId = requestId;
    res.locals.log = services.logger.child({ requestId });
    res.setHeader("x-request-id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      res.locals.log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms) }, "request");
    });
    next();
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader(
      "Access-Control-Allow-Headers",
      "Content-Type, x-api-key, X-PAYMENT, payment-signature, Idempotency-Key, x-request-id",
    );
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, PATCH, OPTIONS");
    res.setHeader("Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Retry-After, x-request-id");
    if (req.method === "OPTIONS") return void res.status(204).end();
    next();
  });

  // Clients send Content-Type: application/json on GETs too, sometimes with an empty body.
  app.use(express.json({ limit: "1mb", type: ["application/json", "application/*+json"] }));

  const routes = allRoutes(services);
  const openApiRoute: RouteDefinition = defineRoute({
    method: "get",
    path: "/openapi.json",
    summary: "This document: OpenAPI 3.1, generated from the request schemas",
    tags: ["meta"],
    auth: "none",
    handler: async (): Promise<unknown> => buildOpenApi([...routes, openApiRoute], { version: API_VERSION, serverUrl: services.config.PUBLIC_BASE_URL }),
  });
  const router = express.Router();
  for (const route of [...routes, openApiRoute, ...adminRoutes(services, options.adminToken)]) mountRoute(router, route);
  app.use(router);

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError(404, "NOT_FOUND", `No route for ${req.method} ${req.path}`));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) res.locals.log?.error({ err: error, path: req.path }, "request failed");
    for (const [name, value] of Object.entries(apiError.headers ?? {})) res.setHeader(name, value);
    res.status(apiError.status).json(apiError.toBody());
  });

  return app;
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as { type?: string; status?: number; message?: string };
  if (e?.type === "entity.parse.failed") return new ApiError(400, "MALFORMED_JSON", "Request body is not valid JSON");
  if (e?.type === "entity.too.large") return new ApiError(413, "PAYLOAD_TOO_LARGE", "Request body is too large");
  return new ApiError(500, "INTERNAL_ERROR", "Internal error; the request id in x-request-id identifies it in the logs");
}
