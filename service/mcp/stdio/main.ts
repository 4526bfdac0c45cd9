import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { SHARED_INSTRUCTIONS } from "../endpoint";
import { SelectionError } from "../toolsets";
import { StdioSession, type SessionHooks } from "./session";
import { SettingsError, settingsFromEnv } from "./settings";

/**
 * `npm run --silent mcp` (in an install: `node bin/run.js mcp`, or `node dist/service/mcp/stdio/main.js`): the MCP
 * server for an agent on the user's own machine, on stdin/stdout. It serves the tools of the service at TAK_BASE_URL
 * (through its /mcp), with TAK_API_KEY when given; with TAK_PRIVATE_KEY it signs prepared transactions and x402
 * payments here, never sending the key anywhere. stdout carries only the protocol: messages go to stderr.
 */
const VERSION = "1.0.0";

const INSTRUCTIONS = `Tools for the Tokenized-Asset Transaction API, served from the service at TAK_BASE_URL.
Toolsets: list_toolsets lists them, enable_toolset adds one to the tools listed.
With a wallet (TAK_PRIVATE_KEY), a prepare tool runs the write to its end: each prepared transaction is checked against the request (the method's function and contract, the amounts, recipients and spenders asked, fees and gas within bounds), shown to you where the client can ask, signed here and sent; x402 payments are paid within TAK_MAX_PAYMENT per call and TAK_MAX_SPEND per session. Its result: { txId, status, outcome?, txHashes?, info, signed (each call signed, decoded), payments }.
Without a wallet, writes answer unsigned transactions and paid tools their x402 payment requirements.
${SHARED_INSTRUCTIONS}`;

function warn(message: string): void {
  process.stderr.write(`tak-mcp: ${message}\n`);
}

async function main(): Promise<void> {
  const server = new Server(
    { name: "tokenized-asset-tx-api-stdio", version: VERSION },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  const hooks: SessionHooks = {
    async confirm(message) {
      if (!server.getClientCapabilities()?.elicitation) return undefined;
      const answer = await server.elicitInput({
        message,
        requestedSchema: {
          type: "object",
          properties: {
            confirm: {
              type: "boolean",
              title: "Sign and send",
              description: "Sign these transactions with this wallet",
            },
          },
          required: ["confirm"],
        },
      });
      return answer.action === "accept" && answer.content?.confirm === true;
    },
    toolsChanged: () => void server.sendToolListChanged().catch(() => undefined),
  };
  let session: StdioSession;
  try {
    session = new StdioSession(settingsFromEnv(process.env), VERSION, warn, hooks);
  } catch (error) {
    if (!(error instanceof SettingsError) && !(error instanceof SelectionError)) throw error;
    warn(error instanceof SelectionError ? `TAK_TOOLSETS ${error.message.replace(/^toolsets: /, "")}` : error.message);
    process.exit(2);
  }
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
