// tier: e2e
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Wallet } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { identityRegistryInterface } from "../../service/chains/contracts";
import { Contract } from "ethers";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ADDED_TOOLS, HOSTED_TOOLS, structured, toolErrorOf } from "../helpers/mcp";

const ROOT = path.resolve(__dirname, "../..");
const PRICE = 10_000n; // 0.01 USDC, the sandbox's flat write price

/** Whether a process is still running. */
function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("e2e: the MCP stdio server (node bin/run.js mcp) with the official SDK's client", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  let agentOwner: Wallet;
  const started: { client: Client; transport: StdioClientTransport }[] = [];

  /** The stdio server as a child process of this test, configured by its environment only. */
  const stdioClient = async (env: Record<string, string>) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, "bin", "run.js"), "mcp"],
      cwd: ROOT,
      env: { TAK_BASE_URL: service.url, ...env },
      stderr: "pipe",
    });
    const client = new Client({ name: "tak-test", version: "1.0.0" });
    await client.connect(transport);
    started.push({ client, transport });
    return client;
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    agentOwner = sandbox.accounts[7];
    await service.services.signers.add(agentOwner.address, "all-keys");
  });
  after(async () => {
    for (const { client, transport } of started) {
      const pid = transport.pid ?? undefined;
      await client.close();
      for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(pid), "the stdio server ends when its client closes").to.equal(false);
    }
    await service?.stop();
  });

  it("serves the default toolsets (TAK_TOOLSETS=all: every tool, by the service's names), with configure, get_config and the toolset tools of its own; nothing configures it but its environment", async () => {
    const client = await stdioClient({ TAK_PRIVATE_KEY: agentOwner.privateKey });
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.length).to.be.at.most(40);
    expect(Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } }))).to.be.at.most(48 * 1024);
    expect(names).to.include.members([
      "configure",
      "get_config",
      "list_toolsets",
      "enable_toolset",
      "agent_register",
      "rams_execute",
    ]);
    expect(names).to.not.include("create_tokenization");
    const all = await stdioClient({ TAK_TOOLSETS: "all" });
    expect((await all.listTools()).tools.map((t) => t.name)).to.include.members([...HOSTED_TOOLS, ...ADDED_TOOLS]);
    expect(structured(await client.callTool({ name: "get_config", arguments: {} }))).to.deep.equal({
      env: "sandbox",
      baseUrl: service.url,
      hasApiKey: false,
      hasPrivateKey: true,
      walletAddress: agentOwner.address,
    });
    for (const [field, value, variable] of [
      ["privateKey", "0x" + "12".repeat(32), "TAK_PRIVATE_KEY"],
      ["baseUrl", "http://127.0.0.1:9", "TAK_BASE_URL"],
      ["apiKey", "tak_other", "TAK_API_KEY"],
    ]) {
      const refused = toolErrorOf(await client.callTool({ name: "configure", arguments: { [field]: value } }));
      expect(refused).to.include({ code: "BAD_REQUEST", param: field });
      expect(refused.message).to.include(variable).and.not.include(value);
    }
    expect(structured(await client.callTool({ name: "get_config", arguments: {} })).baseUrl).to.equal(service.url);
    const wrongEnv = toolErrorOf(await client.callTool({ name: "configure", arguments: { env: "production" } }));
    expect(wrongEnv).to.include({ param: "env" });
  });

  it("lists and enables toolsets during the session, announcing the change; read-only lists no write and refuses one", async () => {
    const client = await stdioClient({ TAK_TOOLSETS: "agents" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed++);
    const toolsets = structured(await client.callTool({ name: "list_toolsets", arguments: {} })).toolsets as {
      name: string;
      enabled: boolean;
    }[];
    expect(toolsets.find((t) => t.name === "agents")!.enabled).to.equal(true);
    expect(toolsets.find((t) => t.name === "tokens")!.enabled).to.equal(false);
    const outside = await client.callTool({ name: "get_token_info", arguments: { tokenSymbol: "X" } }).then(
      () => expect.fail("a tool of a toolset not enabled was called"),
      (error: { code: number; message: string }) => error,
    );
    expect(outside.code).to.equal(-32602);
    expect(outside.message).to.match(/enable_toolset \{ "toolset": "tokens" \}/);
    expect(
      structured(await client.callTool({ name: "enable_toolset", arguments: { toolset: "tokens" } })).tools,
    ).to.include("get_token_info");
    for (let i = 0; i < 50 && changed === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(changed).to.equal(1);
    expect((await client.listTools()).tools.map((t) => t.name)).to.include.members([
      "get_token_info",
      "agent_register",
    ]);

    const readOnly = await stdioClient({
      TAK_PRIVATE_KEY: agentOwner.privateKey,
      TAK_TOOLSETS: "all",
      TAK_READONLY: "1",
    });
    const { tools } = await readOnly.listTools();
    expect(tools.filter((t) => t.annotations?.readOnlyHint !== true).map((t) => t.name)).to.deep.equal([]);
    expect(tools.map((t) => t.name)).to.include.members(["enable_toolset", "get_agent_info"]);
    const write = await readOnly.callTool({ name: "agent_register", arguments: { chainId: "14a34", name: "n" } }).then(
      () => expect.fail("a write was run read-only"),
      (error: { code: number; message: string }) => error,
    );
    expect(write.code).to.equal(-32602);
    expect(write.message).to.match(/agent_register writes, and this server is read-only \(TAK_READONLY\)/);
  });

  it("registers an agent with a private key and x402: checked, signed and sent by the stdio server, which pays the quoted price", async () => {
    const client = await stdioClient({ TAK_PRIVATE_KEY: agentOwner.privateKey });
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
    const before = await usdc.balanceOf(agentOwner.address);
    const result = await client.callTool(
      {
        name: "agent_register",
        arguments: {
          chainId: "14a34",
          name: "Stdio agent",
          description: "An agent registered through the MCP stdio server",
          image: "https://example.com/agent.png",
          services: [{ name: "MCP", endpoint: "https://agent.example.com/mcp", version: "2025-06-18" }],
        },
      },
      undefined,
      { timeout: 240_000 },
    );
    const done = structured(result);
    expect(done.status, JSON.stringify(done)).to.equal("success");
    expect(done.signed).to.deep.equal([
      {
        to: sandbox.deployments[84532].contracts.IdentityRegistry,
        contract: "the IdentityRegistry",
        function: "register(string)",
        arguments: { agentURI: done.info.agentURI },
      },
    ]);
    // Each fact once: no raw transactions, no send summary beside the final status.
    expect(done).to.not.have.any.keys("prepared", "sent", "transactions");
    // Two quotes (client-signed: half at prepare, half at send), both paid from the local wallet.
    expect(done.payments.map((p: { tool: string }) => p.tool)).to.deep.equal(["agent_register", "send_transactions"]);
    const quoted = done.payments.reduce((sum: bigint, p: { amount: string }) => sum + BigInt(p.amount), 0n);
    expect(quoted).to.equal(PRICE);
    for (const p of done.payments) expect(p.settlement).to.include({ success: true, payer: agentOwner.address });
    expect(before - (await usdc.balanceOf(agentOwner.address))).to.equal(quoted);
    const agentId = done.outcome.agentId;
    const registry = new Contract(
      sandbox.deployments[84532].contracts.IdentityRegistry,
      identityRegistryInterface,
      providerFor(sandbox.baseSepolia),
    );
    expect(await registry.ownerOf(agentId)).to.equal(agentOwner.address);
  });

  it("without a private key it answers what the service answers: the payment requirements of a paid tool, unsigned transactions once paid", async () => {
    const client = await stdioClient({});
    expect(structured(await client.callTool({ name: "get_config", arguments: {} }))).to.include({
      hasApiKey: false,
      hasPrivateKey: false,
    });
    const unpaid = await client.callTool({
      name: "agent_register",
      arguments: {
        chainId: "14a34",
        signerAddress: agentOwner.address,
        name: "Unsigned",
        description: "d",
        image: "https://example.com/a.png",
        services: [{ name: "MCP", endpoint: "https://a.example.com/mcp" }],
      },
    });
    expect(unpaid.isError).to.equal(true);
    expect(unpaid.structuredContent).to.include({ x402Version: 2 });
    expect((unpaid.structuredContent as { accepts: { amount: string }[] }).accepts[0].amount).to.equal(
      (PRICE / 2n).toString(),
    );
    const relayed = structured(
      await client.callTool({
        name: "agent_create_token",
        arguments: {
          chainId: "14a34",
          executionMode: "service-relayed",
          name: "Unsigned Token",
          symbol: "UNSG",
          agentWallet: agentOwner.address,
        },
      }),
    );
    expect(relayed.transactions[0].from).to.not.equal(agentOwner.address);
    expect(relayed.txId).to.match(/^0x[0-9a-f]{64}$/);
  });
});
