import type { RequestListener } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config";
import type { RouteDefinition } from "../http/route";
import { errorFacts, type Logger } from "../logger";
import type { Metrics } from "../metrics";
import { ArgumentError, httpCallOf, paymentRequiredOf, toolError, toolResultOf, type CallToolResult } from "./calls";
import { routeTools } from "./catalogue";
import { dispatch, type Origin } from "./dispatch";
import { configureOverHttp, waitForTransaction } from "./http-session";
import { sessionTools, type ToolListing } from "./session-tools";
import type { RouteTool } from "./tool";

/** What the MCP endpoint uses. */
export interface McpEndpointServices {
  config: Config;
  logger: Logger;
  metrics: Pick<Metrics, "observeTool">;
}

export const SERVER_NAME = "tokenized-asset-tx-api";

const INSTRUCTIONS = `Tools for the Tokenized-Asset Transaction API: security tokens and offerings, ERC-8004 agents and their tokens, ERC-8226 mandates (RAMS), KYC links, webhooks.
Writes are prepared (the tool answers unsigned transactions and a txId), signed by the wallet of signerAddress, sent with send_transactions, and followed with wait_for_transaction.
Credentials: an API key on the connection (x-api-key or Authorization: Bearer), or x402: a paid tool without a key answers isError with the payment requirements; call it again with the payment in _meta["x402/payment"].
This service never takes a private key: to sign and pay with a local wallet, use the stdio server (npm run --silent mcp) on your own machine.`;

/** The API key a request to /mcp presents, from its headers: x-api-key, or Authorization: Bearer <key>. */
export function presentedKey(apiKeyHeader: string | undefined, authorization: string | undefined): string | undefined {
  const header = apiKeyHeader?.trim();
  if (header) return header;
  const bearer = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim();
  return bearer || undefined;
}

/** One request to /mcp as its tool calls know it: plain values the route read off the HTTP request. */
export interface McpConnection {
  /** The API key it presented (presentedKey). */
  presentedKey?: string;
  /** The service's own app: tool calls are requests to it, in process (dispatch.ts). */
  app: RequestListener;
  /** Where the request came from, passed on to the routes the tools call. */
  origin: Origin;
  /** The scheme and host the client reached the service at (`https://host:port`). */
  reachedAt: string;
  /** The request's log (with its request id), when it has one. */
  log?: Logger;
}

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (no session id: any instance answers any
 * request, as for the REST API). Each request gets a server of its own (`serverFor`), which the route connects to a
 * transport of its own (routes/mcp.ts); tool calls go through the service's own routes in process (dispatch.ts), with
 * the credentials of the MCP request.
 */
export class McpEndpoint {
  private tools?: { byName: Map<string, RouteTool>; listing: ToolListing[]; names: Set<string> };

  constructor(
    private readonly services: McpEndpointServices,
    private readonly routes: () => RouteDefinition<any, any>[],
    private readonly version: string,
  ) {}

  /** The tools, generated once from the routes (the session's own tools first). */
  private catalogue() {
    if (!this.tools) {
      const tools = routeTools(this.routes());
      const listing: ToolListing[] = [
        ...sessionTools("http"),
        ...tools.map(({ name, title, description, inputSchema, outputSchema, annotations, _meta }) => ({
          name,
          title,
          description,
          inputSchema,
          outputSchema,
          annotations,
          _meta,
        })),
      ];
      this.tools = {
        byName: new Map(tools.map((t) => [t.name, t])),
        listing,
        names: new Set(listing.map((t) => t.name)),
      };
    }
    return this.tools;
  }

  /** The MCP server that answers one request: its tools listed, and called with the request's credentials. */
  serverFor(connection: McpConnection): Server {
    const server = new Server(
      { name: SERVER_NAME, version: this.version },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.catalogue().listing }));
    server.setRequestHandler(CallToolRequestSchema, async (request) =>
      this.call(connection, request.params.name, request.params.arguments, request.params._meta),
    );
    return server;
  }

  /** One tool call, timed, logged and counted under its tool's name (never its arguments: they may hold signatures). */
  private async call(
    connection: McpConnection,
    name: string,
    args: Record<string, unknown> | undefined,
    meta: Record<string, unknown> | undefined,
  ): Promise<CallToolResult> {
    const started = process.hrtime.bigint();
    const label = this.catalogue().names.has(name) ? name : "(unknown)";
    let result: CallToolResult;
    try {
      result = await this.run(connection, name, args ?? {}, meta ?? {});
    } catch (error) {
      if (error instanceof ArgumentError) result = toolError("BAD_REQUEST", error.message, error.param);
      else {
        (connection.log ?? this.services.logger).error({ err: errorFacts(error), tool: label }, "mcp tool call failed");
        result = toolError(
          "INTERNAL_ERROR",
          "Internal error; the request id in x-request-id identifies it in the logs",
        );
      }
    }
    const outcome = !result.isError ? "ok" : paymentRequiredOf(result) ? "payment_required" : "error";
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.services.metrics.observeTool(label, outcome, seconds);
    const code =
      result.isError && outcome === "error"
        ? (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code
        : undefined;
    (connection.log ?? this.services.logger).info(
      { tool: label, outcome, ...(code ? { code } : {}), ms: Math.round(seconds * 1000) },
      "mcp tool call",
    );
    return result;
  }

  private async run(
    connection: McpConnection,
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const { presentedKey: key, app, origin } = connection;
    const credentials: Record<string, string> = key ? { "x-api-key": key } : {};
    const session = { config: this.services.config, reachedAt: connection.reachedAt, presentedKey: key };
    if (name === "get_config" || name === "configure")
      return configureOverHttp(session, name === "configure" ? args : {});
    if (name === "wait_for_transaction") {
      const status = this.catalogue().byName.get("get_transaction_status")!;
      return waitForTransaction(app, status, args, credentials, origin);
    }
    const tool = this.catalogue().byName.get(name);
    if (!tool) return toolError("NOT_FOUND", `No tool named ${name}: tools/list lists them`, "name");
    const call = httpCallOf(tool, args, meta, credentials);
    return toolResultOf(await dispatch(app, call, tool.name, origin));
  }
}
