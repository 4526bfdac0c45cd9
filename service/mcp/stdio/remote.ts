import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "../calls";
import type { ToolListing } from "../session-tools";

/** A call may wait this long for the service (wait_for_transaction waits up to 600 s). */
const CALL_TIMEOUT_MS = 660_000;

/**
 * The service's own MCP endpoint (POST <baseUrl>/mcp), reached with the official SDK's client: the stdio server lists
 * the service's tools and calls them there, so both transports serve one tool set through one gate.
 */
export class RemoteService {
  private client?: Promise<Client>;

  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly version: string,
  ) {}

  private connected(): Promise<Client> {
    this.client ??= (async () => {
      const client = new Client({ name: "tak-stdio", version: this.version });
      const headers: Record<string, string> = {
        "x-mcp-toolsets": "all",
        ...(this.apiKey ? { "x-api-key": this.apiKey } : {}),
      };
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${this.baseUrl}/mcp`), { requestInit: { headers } }),
      );
      return client;
    })().catch((error: unknown) => {
      this.client = undefined;
      throw new Error(`The service at ${this.baseUrl} did not answer on /mcp: ${(error as Error).message}`);
    });
    return this.client;
  }

  async listTools(): Promise<ToolListing[]> {
    const { tools } = await (await this.connected()).listTools();
    return tools as unknown as ToolListing[];
  }

  async call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallToolResult> {
    const client = await this.connected();
    const result = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, {
      timeout: CALL_TIMEOUT_MS,
    });
    return result as unknown as CallToolResult;
  }

  async close(): Promise<void> {
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    await client?.close();
  }
}
