import type { NextFunction, Request, Response, Router } from "express";
import { z, type ZodType } from "zod";
import { validationError } from "../errors";

export type HttpMethod = "get" | "post" | "patch";

/** Who may call a route, for the OpenAPI document (the handler enforces it). */
export type RouteAuth = "none" | "apiKey" | "apiKeyOrPayment" | "payment" | "admin";

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteDefinition<Q = unknown, B = unknown> {
  method: HttpMethod;
  path: string;
  summary: string;
  tags: string[];
  auth: RouteAuth;
  description?: string;
  query?: ZodType<Q>;
  body?: ZodType<B>;
  /** Body schema shown in /openapi.json when the handler validates the body itself (e.g. per method). */
  documentedBody?: ZodType;
  /** Request is multipart/form-data; files are described here for the OpenAPI document. */
  multipartFiles?: string[];
  /** Hidden routes are mounted but left out of /openapi.json (operator endpoints). */
  hidden?: boolean;
  handler: (input: { query: Q; body: B; req: Request; res: Response }) => Promise<RouteResult | unknown>;
}

export function defineRoute<Q = unknown, B = unknown>(route: RouteDefinition<Q, B>): RouteDefinition<Q, B> {
  return route;
}

/** Parses `input` with `schema` or throws a 400 whose message names the first offending field. */
export function parseInput<T>(schema: ZodType<T>, input: unknown, where: string): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ field: issue.path.join("."), message: describeIssue(issue) }));
  const first = issues[0];
  const message = first.field ? `${first.field} ${first.message}` : first.message;
  throw validationError(message, { in: where, issues });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && (issue as { input?: unknown }).input === undefined) return "is required";
  if (issue.code === "invalid_union" && (issue as { input?: unknown }).input === undefined) return "is required";
  return issue.message;
}

/** Mounts a route: parses query and body with its schemas, runs the handler, writes the JSON result. */
export function mountRoute(router: Router, route: RouteDefinition<any, any>): void {
  const expressPath = route.path.replace(/\{(\w+)\}/g, ":$1");
  router[route.method](expressPath, async (req: Request, res: Response, next: NextFunction) => {
    try {
      // Some clients put GET parameters in a JSON body (WIRE-COMPAT §11): the query string wins.
      const rawQuery = route.method === "get" ? { ...(isObject(req.body) ? req.body : {}), ...req.query } : req.query;
      const query = route.query ? parseInput(route.query, rawQuery, "query") : rawQuery;
      const body = route.body ? parseInput(route.body, req.body, "body") : req.body;
      const result = await route.handler({ query, body, req, res });
      if (res.headersSent) return;
      const shaped = isRouteResult(result) ? result : { body: result };
      for (const [name, value] of Object.entries(shaped.headers ?? {})) res.setHeader(name, value);
      res.status(shaped.status ?? 200).json(shaped.body);
    } catch (error) {
      next(error);
    }
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isRouteResult(v: unknown): v is RouteResult {
  return isObject(v) && "body" in v && Object.keys(v).every((k) => k === "body" || k === "status" || k === "headers");
}
