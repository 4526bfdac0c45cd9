import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type * as Types from "@modelcontextprotocol/sdk/types.js";

/**
 * The MCP SDK's server side, loaded on the first MCP request rather than when the service starts: it weighs about
 * 30 MiB of RSS that a service nobody reaches over MCP does not pay (the catalogue is built then too: listing.ts).
 */
export interface ServerSdk {
  Server: typeof Server;
  StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  CallToolRequestSchema: typeof Types.CallToolRequestSchema;
  ListToolsRequestSchema: typeof Types.ListToolsRequestSchema;
  McpError: typeof Types.McpError;
  ErrorCode: typeof Types.ErrorCode;
}

let loaded: Promise<ServerSdk> | undefined;

export function serverSdk(): Promise<ServerSdk> {
  loaded ??= (async () => {
    const [server, http, types] = await Promise.all([
      import("@modelcontextprotocol/sdk/server/index.js"),
      import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ]);
    return {
      Server: server.Server,
      StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
      CallToolRequestSchema: types.CallToolRequestSchema,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
    };
  })();
  return loaded;
}
