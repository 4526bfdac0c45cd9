import type { AccessRule, PriceTier } from "../auth/access-rules";
import type { HttpMethod } from "../http/route";
import type { Json } from "./json-schema";

/** What a tool generated from a route is (catalogue.ts makes them, calls.ts calls them). */

/** The argument a tool takes for the route's Idempotency-Key header. */
export const IDEMPOTENCY_ARGUMENT = "idempotencyKey";

/** How a tool reaches its route. */
export interface RouteCall {
  method: HttpMethod;
  /** The path template, e.g. /webhooks/{id}. */
  path: string;
  /** Names in the path template, taken from the arguments. */
  pathParameters: string[];
  /** Arguments sent in the query string (every one, for GET and DELETE). */
  queryFields: string[] | "all";
  idempotent: boolean;
}

/** What a client may assume of a tool (MCP tool annotations): whether it writes, may destroy, may be repeated. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface RouteTool {
  name: string;
  /** The toolset it is listed in (toolsets.ts). */
  toolset: string;
  title: string;
  /** What it does and needs; a paid tool's price is added when it is listed (the operator may change prices). */
  description: string;
  inputSchema: Json;
  outputSchema: Json;
  annotations: ToolAnnotations;
  /** tak/prepares: the method whose transactions a prepare tool answers (the stdio server signs them). */
  _meta?: Record<string, unknown>;
  call: RouteCall;
  access: AccessRule;
  /** The method whose transactions it prepares ("*": the one its `method` argument names). */
  prepares?: string;
  /** How its x402 price is looked up, when a call without a key pays one of its own. */
  price?: { operation: string; tier: PriceTier };
}

/**
 * A tool's error as structured content: the API's error body (its code is one of /openapi.json's ErrorCode). Described
 * once, in the server's instructions (endpoint.ts SHARED_INSTRUCTIONS), not in every tool's output schema.
 */
export type ToolErrorBody = {
  error: { code: string; message: string; param?: string; details?: Record<string, unknown> };
  message: string;
};
