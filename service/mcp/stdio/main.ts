import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { StdioSession } from "./session";
import { SettingsError, settingsFromEnv } from "./settings";

/**
 * `npm run --silent mcp` (in an install: `node bin/run.js mcp`, or `node dist/service/mcp/stdio/main.js`): the MCP
 * server for an agent on the user's own machine, on stdin/stdout. It serves the tools of the service at TAK_BASE_URL
 * (through its /mcp), with TAK_API_KEY when given; with TAK_PRIVATE_KEY it signs prepared transactions and x402
 * payments here, never sending the key anywhere. stdout carries only the protocol: messages go to stderr.
 */
const VERSION = "1.0.0";

const INSTRUCTIONS = `Tools for the Tokenized-Asset Transaction API, served from the service at TAK_BASE_URL.
Without a wallet, writes answer unsigned transactions (sign them, then send_transactions); paid tools answer x402 payment requirements.
With a wallet (TAK_PRIVATE_KEY), each write is checked against its request, signed and sent here, its x402 payments paid, and followed to its end.`;

function warn(message: string): void {
  process.stderr.write(`tak-mcp: ${message}\n`);
}

async function main(): Promise<void> {
  let session: StdioSession;
  try {
    const settings = settingsFromEnv(process.env);
    session = new StdioSession(settings, VERSION, warn);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    warn(error.message);
    process.exit(2);
  }
  const server = new Server(
    { name: "tokenized-asset-tx-api-stdio", version: VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await session.listTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    session.call(request.params.name, request.params.arguments ?? {}, request.params._meta ?? {}),
  );
  const transport = new StdioServerTransport();
  // The client closing stdin (or the transport) ends the session and the process.
  const stop = () => process.exit(0);
  transport.onclose = stop;
  process.stdin.once("end", stop);
  await server.connect(transport);
}

main().catch((error: unknown) => {
  warn(`stopped: ${(error as Error).message}`);
  process.exit(1);
});
