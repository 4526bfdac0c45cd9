// tier: release
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createOwnSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { httpClient, structured } from "../helpers/mcp";

const ROOT = path.resolve(__dirname, "../..");
const THIS = "test=test/e2e/mcp-readme.e2e.test.ts";

/** The agents guide's blocks run by this file, in order: the HTTP configuration, the stdio configuration, a session. */
function guideBlocks(): string[] {
  const guide = fs.readFileSync(path.join(ROOT, "docs", "agents.md"), "utf8");
  const blocks: string[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(guide); match; match = fence.exec(guide))
    if (match[1].trim().split(/\s+/)[1] === THIS) blocks.push(match[2]);
  return blocks;
}

/** A transcript line's expected result as a pattern: the text as written, `…` standing for anything. */
function pattern(expected: string): RegExp {
  return new RegExp(
    `^${expected
      .split("…")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*?")}$`,
  );
}

function alive(pid: number | null | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The MCP part of docs/agents.md, as a reader uses it: the two client configurations, with the reader's values in place of the
 * placeholders (the service's URL, a key, a wallet, the checkout's path), connect the official SDK's client; the
 * session transcript is replayed call by call over the stdio server and every result matches what it shows.
 */
describe("docs/agents.md: the MCP client configurations and the session transcript", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  let apiKey: string;
  const clients: Client[] = [];
  let stdioPid: number | null = null;
  const [httpConfig, stdioConfig, transcript] = guideBlocks();
  const placeholders = (text: string) =>
    text
      .replaceAll("http://127.0.0.1:3000", service.url)
      .replaceAll("tak_…", apiKey)
      .replaceAll("0x…", sandbox.accounts[1].privateKey)
      .replaceAll("/path/to/tokenized-asset-tx-api", ROOT);

  before(async () => {
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox);
    ({ key: apiKey } = await service.services.apiKeys.create({ email: "readme@mcp.test", plan: "Enterprise" }));
    await service.services.signers.add(sandbox.accounts[1].address, "all-keys");
  });
  after(async () => {
    for (const client of clients) await client.close();
    for (let i = 0; i < 100 && alive(stdioPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(stdioPid), "npm run mcp ends when its client leaves").to.equal(false);
    await service?.stop();
    await sandbox?.close();
  });

  it("has the three blocks: the HTTP configuration, the stdio configuration, the session", () => {
    expect([httpConfig, stdioConfig, transcript].every((b) => typeof b === "string")).to.equal(true);
    expect(transcript).to.match(/^→ /);
  });

  it("the HTTP configuration connects to POST /mcp with the key and lists the tools", async () => {
    const server = JSON.parse(placeholders(httpConfig)).mcpServers["tokenized-assets"];
    expect(server.type).to.equal("http");
    const client = await httpClient(server.url, server.headers);
    clients.push(client);
    // The default toolsets: an agent's own tools, within what an agent can load.
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.length).to.be.at.most(40);
    expect(names).to.include.members(["get_config", "agent_register", "agent_create_token", "send_transactions"]);
    expect(structured(await client.callTool({ name: "get_config", arguments: {} }))).to.include({
      hasApiKey: true,
      hasPrivateKey: false,
    });
  });

  it("the stdio configuration starts `npm run --silent mcp`, and the session runs as the transcript shows", async () => {
    const server = JSON.parse(placeholders(stdioConfig)).mcpServers["tokenized-assets"];
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: server.env,
      stderr: "pipe",
    });
    const client = new Client({ name: "readme", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    stdioPid = transport.pid;
    // In the session, "…" elides (0x… is any address or hash): only the service's URL is the reader's.
    const lines = transcript.replaceAll("http://127.0.0.1:3000", service.url).trim().split("\n");
    expect(lines.length % 2).to.equal(0);
    for (let i = 0; i < lines.length; i += 2) {
      const call = /^→ (\w+) (.*)$/.exec(lines[i]);
      const answer = /^← (error )?(.*)$/.exec(lines[i + 1]);
      expect(call, lines[i]).to.not.equal(null);
      expect(answer, lines[i + 1]).to.not.equal(null);
      const result = await client.callTool({ name: call![1], arguments: JSON.parse(call![2]) }, undefined, {
        timeout: 240_000,
      });
      expect(result.isError === true, `${call![1]}: ${JSON.stringify(result.content)}`).to.equal(
        answer![1] !== undefined,
      );
      expect(JSON.stringify(result.structuredContent), `docs/agents.md: ${lines[i + 1]}`).to.match(pattern(answer![2]));
    }
  });
});
