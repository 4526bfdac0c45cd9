import type { Request, Response } from "express";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { defineRoute, type RouteDefinition } from "../http/route";
import { McpEndpoint, presentedKey, type McpConnection } from "../mcp/endpoint";
import { serverSdk } from "../mcp/sdk";
import {
  INVALID_REQUEST,
  jsonRpcError,
  messageRefusal,
  originAllowed,
  requestedSelection,
  type OwnOrigin,
  type Refusal,
} from "../mcp/protocol";
import type { Selection } from "../mcp/toolsets";
import { metricsOf } from "../metrics";
import type { Services } from "../usecases/services";

const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    method: z.string().optional(),
    id: z.union([z.string(), z.number()]).optional(),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({
    id: "JsonRpcMessage",
    description: "A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, …)",
  });

const JsonRpcAnswer = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
  })
  .meta({
    id: "JsonRpcAnswer",
    description: "The JSON-RPC answer (a tool's result, its errors included, is a result: isError)",
  });

/**
 * POST /mcp: every route of this list as an MCP tool (service/mcp/), over Streamable HTTP. `routes` is the list itself,
 * read when the first call comes (the tools are generated from it then, not when the service starts).
 */
export function mcpRoutes(services: Services, routes: () => RouteDefinition<any, any>[], version: string) {
  const endpoint = new McpEndpoint(
    {
      config: services.config,
      logger: services.logger,
      metrics: { observeTool: (...a) => metricsOf(services, version).observeTool(...a) },
      prices: services.prices,
    },
    routes,
    version,
  );
  return [
    defineRoute({
      method: "post",
      path: "/mcp",
      operationId: "mcp",
      summary:
        "The Model Context Protocol endpoint (Streamable HTTP, stateless): the operations of this API as MCP tools",
      description:
        "For MCP clients (AI agents): `tools/list` lists the tools of the toolsets asked for (`?toolsets=a,b` or the X-MCP-Toolsets header; `all`; " +
        "default: the agent's own: context, transactions, agents, agent_tokens, rams), `?readonly=true` or X-MCP-Readonly only the reads; " +
        "each tool is named as the hosted server of the API names it where it has one (create_tokenization, get_token_info, agent_register, …). " +
        "`tools/call` runs the route with the credentials of this request: an API key in x-api-key or Authorization: Bearer, or an x402 payment " +
        'in `params._meta["x402/payment"]` (a paid tool without one answers isError with the PaymentRequired). Send `Accept: application/json, text/event-stream`. ' +
        "A browser page of another origin than the service's (or MCP_ALLOWED_ORIGINS) is refused with 403. A private key is never taken: the stdio server (npm run --silent mcp) signs locally.",
      tags: ["mcp"],
      access: ACCESS.public,
      tool: false,
      guardsOwnInput: true,
      documentedBody: JsonRpcMessage,
      response: {
        200: {
          description: "The JSON-RPC answer (a notification is answered 202 without a body)",
          schema: JsonRpcAnswer,
        },
      },
      handler: async ({ req, res }) => {
        const own = ownOriginOf(services, req);
        if (!originAllowed(req.header("origin"), own))
          return refuse(res, {
            status: 403,
            body: jsonRpcError(INVALID_REQUEST, `Forbidden: Origin ${req.header("origin")} may not use this endpoint`),
          });
        const refusal = messageRefusal(req.body, req.header("mcp-protocol-version"));
        if (refusal) return refuse(res, refusal);
        const selection = requestedSelection(
          req.query,
          (name) => req.header(name),
          new Set(endpoint.catalogue().keys()),
        );
        if ("status" in selection) return refuse(res, selection);
        const server = await endpoint.serverFor(connectionOf(req, res, selection));
        const { StreamableHTTPServerTransport } = await serverSdk();
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, req.body);
      },
    }),
  ];
}

function refuse(res: Response, refusal: Refusal): void {
  res.status(refusal.status).json(refusal.body);
}

/** Where the service itself is, for the Origin check: never the Host header. */
export function ownOriginOf(services: Pick<Services, "config">, req: Request): OwnOrigin {
  return {
    publicBaseUrl: services.config.PUBLIC_BASE_URL,
    localAddress: req.socket.localAddress,
    localPort: req.socket.localPort,
    allowed: services.config.MCP_ALLOWED_ORIGINS ?? [],
  };
}

/** Proxy headers passed on to the route a tool calls (see mcp/dispatch.ts Origin). */
const FORWARDED = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"];

/** What the MCP endpoint's tool calls need of the HTTP request to /mcp: its key, its origin, its app and its log. */
function connectionOf(req: Request, res: Response, selection: Selection): McpConnection {
  const forwarded = Object.fromEntries(
    FORWARDED.map((name) => [name, req.header(name)]).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  return {
    presentedKey: presentedKey(req.header("x-api-key"), req.header("authorization")),
    app: req.app,
    origin: {
      remoteAddress: req.socket.remoteAddress,
      forwarded,
      host: req.header("host"),
      requestId: res.locals.requestId ?? "mcp",
    },
    reachedAt: `${req.protocol}://${req.get("host")}`,
    selection,
    log: res.locals.log,
  };
}
