import type { Request, Response } from "express";
import type { ZodType } from "zod";
import { ACCESS } from "../auth/access-rules";
import { authenticate, type SignedIn } from "../auth/console-session";
import { defineRoute, type HttpMethod, type RouteDefinition, type SuccessResponses } from "../http/route";
import type { OperatorRole } from "../store/operators";
import type { Services } from "../usecases/services";

/** One JSON endpoint of the console, as consoleRoute takes it. */
export interface ConsoleEndpoint<Q, B> {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The least role that may call it: viewer reads; reviewer decides KYC; admin changes the rest. */
  role: OperatorRole;
  query?: ZodType<Q>;
  body?: ZodType<B>;
  /** Body fields named like a secret it takes (RouteDefinition.takesSecrets). */
  takesSecrets?: string[];
  response: ZodType | SuccessResponses;
  handler: (input: { query: Q; body: B; req: Request; res: Response; signedIn: SignedIn }) => Promise<unknown>;
}

/** The session each admitted request came with (admit runs before the handler, on the same request). */
const sessions = new WeakMap<Request, SignedIn>();

/** The origin clients reach the service at, when PUBLIC_BASE_URL says (a change may come from pages served there). */
const publicOrigin = (services: Services) =>
  services.config?.PUBLIC_BASE_URL ? new URL(services.config.PUBLIC_BASE_URL).origin : undefined;

/**
 * A console endpoint as a route: tagged "console" in /openapi.json, never an MCP tool, answered only for a live session
 * whose role allows it; a change (anything but GET) also needs the session's CSRF token. Answers are never cached.
 */
export function consoleRoute<Q, B>(services: Services, e: ConsoleEndpoint<Q, B>): RouteDefinition<Q, B> {
  return defineRoute<Q, B>({
    method: e.method,
    path: e.path,
    operationId: e.operationId,
    summary: e.summary,
    description: e.description,
    tags: ["console"],
    access: ACCESS.operatorSession,
    tool: false,
    query: e.query,
    body: e.body,
    takesSecrets: e.takesSecrets,
    response: e.response,
    // The session first, before the input is read: without one, nothing about the request is answered but the 401.
    admit: async (req) => {
      sessions.set(
        req,
        await authenticate(services.operatorSessions, req, e.role, {
          change: e.method !== "get",
          idleMs: services.config.CONSOLE_SESSION_IDLE_TIMEOUT,
          publicOrigin: publicOrigin(services),
        }),
      );
    },
    handler: async ({ query, body, req, res }) => {
      res.setHeader("Cache-Control", "no-store");
      return e.handler({ query, body, req, res, signedIn: sessions.get(req)! });
    },
  });
}
