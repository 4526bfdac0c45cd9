import type { RequestListener } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Config } from "../config";
import type { RouteDefinition } from "../http/route";
import { errorFacts, type Logger } from "../logger";
import type { Metrics } from "../metrics";
import type { Prices } from "../payments/pricing";
import { ArgumentError, httpCallOf, paymentRequiredOf, toolError, toolResultOf, type CallToolResult } from "./calls";
import { SHARED_ARGUMENTS } from "./catalogue";
import { dispatch, type Origin } from "./dispatch";
import { serverSdk, type ServerSdk } from "./sdk";
import { configureOverHttp, waitForTransaction } from "./http-session";
import { buildCatalogue, listTools, type Catalogue, type CatalogueEntry } from "./listing";
import { selects, TOOLSETS, type Selection } from "./toolsets";

/** What the MCP endpoint uses. */
export interface McpEndpointServices {
  config: Config;
  logger: Logger;
  metrics: Pick<Metrics, "observeTool">;
  prices: Pick<Prices, "of">;
}

export const SERVER_NAME = "tokenized-asset-tx-api";

/** What every tool shares, said once (the tools' own descriptions and schemas do not repeat it). */
export const SHARED_INSTRUCTIONS = `Writes are prepared: a prepare tool answers { txId, transactions (unsigned EIP-1559: sign each, in order, with the wallet of signerAddress), info, executionMode, streamToken? (keyless: lets wait_for_transaction follow the batch), x402Requirements? (keyless: what the send will cost) }; then send_transactions { txId, signedTransactions } and wait_for_transaction { txId }.
Paid tools without an API key answer isError with x402's PaymentRequired { x402Version, resource, accepts[] } in structuredContent; call again with the signed PaymentPayload in _meta["x402/payment"] (the settlement comes back in _meta["x402/payment-response"]).
A failed call answers isError with { error: { code, message, param? }, message }: code is one of /openapi.json's ErrorCode.
Arguments of every prepare tool: ${Object.entries(SHARED_ARGUMENTS)
  .map(([name, meaning]) => `${name}: ${meaning}`)
  .join("; ")}.`;

function instructions(selection: Selection): string {
  const listed = [...selection.toolsets].join(", ");
  const others = TOOLSETS.map((t) => t.name).filter((name) => !selection.toolsets.has(name));
  return `Tools for the Tokenized-Asset Transaction API: ERC-8004 agents and their tokens, ERC-8226 mandates (RAMS), security tokens and offerings, KYC, webhooks.
Toolsets listed: ${listed || "none"}${selection.readOnly ? " (read-only)" : ""}${others.length ? `; others: ${others.join(", ")} (add ?toolsets=<names> to the /mcp URL or the X-MCP-Toolsets header; all for every tool)` : ""}.
Credentials: an API key on the connection (x-api-key or Authorization: Bearer), or x402 payments without one.
${SHARED_INSTRUCTIONS}
This service never takes a private key: to sign and pay with a local wallet, use the stdio server (npm run --silent mcp) on your own machine.`;
}

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
  /** The toolsets, tools and read-only mode it asked for (toolsets.ts). */
  selection: Selection;
  /** The request's log (with its request id), when it has one. */
  log?: Logger;
}

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (no session id: any instance answers any
 * request, as for the REST API). Each request gets a server of its own (`serverFor`), which the route connects to a
 * transport of its own; tool calls go through the service's own routes in process, with
 * the credentials of the MCP request. The catalogue is built on the first MCP request, not when the service starts.
 */
export class McpEndpoint {
  private tools?: Catalogue;

  constructor(
    private readonly services: McpEndpointServices,
    private readonly routes: () => RouteDefinition<any, any>[],
    private readonly version: string,
  ) {}

  /** Every tool (built once, lazily). */
  catalogue(): Catalogue {
    return (this.tools ??= buildCatalogue(this.routes()));
  }

  /** The MCP server that answers one request: its tools listed, and called with the request's credentials. */
  async serverFor(connection: McpConnection): Promise<Server> {
    const sdk = await serverSdk();
    const { Server, CallToolRequestSchema, ListToolsRequestSchema } = sdk;
    const server = new Server(
      { name: SERVER_NAME, version: this.version },
      { capabilities: { tools: { listChanged: false } }, instructions: instructions(connection.selection) },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: await listTools(this.catalogue(), connection.selection, this.services.prices),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) =>
      this.call(sdk, connection, request.params.name, request.params.arguments, request.params._meta),
    );
    return server;
  }

  /**
   * The tool a call names, if this connection may call it; otherwise the JSON-RPC error -32602 (invalid params: an
   * unknown tool, one outside the connection's toolsets, a write on a read-only connection).
   */
  private admitted({ McpError, ErrorCode }: ServerSdk, connection: McpConnection, name: string): CatalogueEntry {
    const entry = this.catalogue().get(name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name} (tools/list lists them)`);
    if (connection.selection.readOnly && !entry.readOnly)
      throw new McpError(ErrorCode.InvalidParams, `${name} writes, and this connection is read-only`);
    if (!selects(connection.selection, { name, readOnly: entry.readOnly })) {
      const toolset = TOOLSETS.find((t) => t.tools.includes(name))?.name;
      throw new McpError(
        ErrorCode.InvalidParams,
        `${name} is in the toolset ${toolset}, which this connection did not ask for (?toolsets=${toolset} or X-MCP-Toolsets: ${toolset})`,
      );
    }
    return entry;
  }

  /** One tool call, timed, logged and counted under its tool's name (never its arguments: they may hold signatures). */
  private async call(
    sdk: ServerSdk,
    connection: McpConnection,
    name: string,
    args: Record<string, unknown> | undefined,
    meta: Record<string, unknown> | undefined,
  ): Promise<CallToolResult> {
    const started = process.hrtime.bigint();
    const log = connection.log ?? this.services.logger;
    let entry: CatalogueEntry;
    try {
      entry = this.admitted(sdk, connection, name);
    } catch (error) {
      const label = this.catalogue().has(name) ? name : "(unknown)";
      this.services.metrics.observeTool(label, "refused", Number(process.hrtime.bigint() - started) / 1e9);
      log.info({ tool: label, outcome: "refused" }, "mcp tool call");
      throw error;
    }
    let result: CallToolResult;
    try {
      result = await this.run(connection, entry, args ?? {}, meta ?? {});
    } catch (error) {
      if (error instanceof ArgumentError) result = toolError("BAD_REQUEST", error.message, error.param);
      else {
        log.error({ err: errorFacts(error), tool: name }, "mcp tool call failed");
        result = toolError(
          "INTERNAL_ERROR",
          "Internal error; the request id in x-request-id identifies it in the logs",
        );
      }
    }
    const outcome = !result.isError ? "ok" : paymentRequiredOf(result) ? "payment_required" : "error";
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.services.metrics.observeTool(name, outcome, seconds);
    const code =
      result.isError && outcome === "error"
        ? (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code
        : undefined;
    log.info({ tool: name, outcome, ...(code ? { code } : {}), ms: Math.round(seconds * 1000) }, "mcp tool call");
    return result;
  }

  private async run(
    connection: McpConnection,
    entry: CatalogueEntry,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const { presentedKey: key, app, origin } = connection;
    const credentials: Record<string, string> = key ? { "x-api-key": key } : {};
    const name = entry.listing.name;
    const session = { config: this.services.config, reachedAt: connection.reachedAt, presentedKey: key };
    if (name === "get_config" || name === "configure")
      return configureOverHttp(session, name === "configure" ? args : {});
    if (name === "wait_for_transaction") {
      const status = this.catalogue().get("get_transaction_status")!.route!;
      return waitForTransaction(app, status, args, credentials, origin);
    }
    const call = httpCallOf(entry.route!, args, meta, credentials);
    return toolResultOf(await dispatch(app, call, name, origin));
  }
}
