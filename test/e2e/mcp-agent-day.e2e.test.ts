// tier: e2e
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { JsonRpcProvider, Wallet, id as keccakId } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX, RAMS_ENFORCER_INDEX } from "../../scripts/lib/sandbox";
import { runAdminCommand } from "../../service/operator/commands";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { AgentToken__factory, USDC__factory } from "../../typechain-types";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { structured } from "../helpers/mcp";

const ROOT = path.resolve(__dirname, "../..");
const SEPOLIA = 11155111;
const BASE_SEPOLIA = 84532;

/**
 * An agent's day through the MCP stdio server with the official SDK's client and the default toolsets only (nothing
 * enabled on the way): it registers itself, creates and mints its own token, reads its record paying with x402, and
 * executes a transfer under a mandate a principal gave it (RAMS). No API key: every write is paid with x402 and signed
 * by the agent's wallet in the stdio server, each transaction checked against the request first.
 */
describe("e2e: an agent's day over MCP with the default toolsets", function () {
  this.timeout(420_000);
  let sandbox: Sandbox;
  let service: TestService;
  let keyed: ApiClient;
  let sepolia: JsonRpcProvider;
  let agent: Wallet;
  let principal: Wallet;
  let client: Client;
  let transport: StdioClientTransport;
  const recipient = Wallet.createRandom().address;
  const identityRef = keccakId("kyc:mcp-agent-day-principal");

  /** A keyed REST write signed and sent by `wallet` (the principal's and the compliance owner's own steps). */
  async function keyedWrite(wallet: Wallet, path: string, body: Record<string, unknown>) {
    const prepared = await keyed.post(path, { chainId: "aa36a7", signerAddress: wallet.address, ...body });
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const { txId, transactions } = prepared.body.data ?? prepared.body;
    const signedTransactions = await Promise.all(transactions.map((tx: any) => wallet.signTransaction(tx)));
    const sent = await keyed.post("/send-transactions", { txId, signedTransactions });
    expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
  }

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    sepolia = providerFor(sandbox.sepolia);
    const a = sandbox.accounts;
    [agent, principal] = [a[5], a[4]];
    const { key } = await service.services.apiKeys.create({ email: "principal@mcp-day.test", plan: "Enterprise" });
    keyed = service.api.withKey(key);
    for (const w of [agent, principal, a[RAMS_COMPLIANCE_OWNER_INDEX]])
      await service.services.signers.add(w.address, "all-keys");

    // The principal's side, done before the agent's day: an executor for the principal over its Sepolia USDC (with
    // its approval), its eligibility at the compliance provider, and a mandate to the agent of at most 5000 units.
    const usdc = sandbox.deployments[SEPOLIA].contracts.USDC;
    const setup = await setupExecutor({
      provider: sepolia,
      chainId: SEPOLIA,
      registry: sandbox.deployments[SEPOLIA].contracts.AgentMandate,
      complianceProvider: sandbox.deployments[SEPOLIA].contracts.ComplianceProvider,
      principal: principal.address,
      selectors: [parseSelectorSpec("transferFrom:2")],
      asset: usdc,
      enforcer: a[RAMS_ENFORCER_INDEX].address,
      keys: { admin: a[0], principal },
    });
    await runAdminCommand(service.services, {
      command: "rams.executors.record",
      chainId: SEPOLIA,
      executor: setup.executor,
      registry: setup.registry,
      principal: setup.principal,
      owner: setup.owner,
    });
    await keyedWrite(a[RAMS_COMPLIANCE_OWNER_INDEX], "/x402/rams/grant-principal", {
      principal: principal.address,
      identityRef,
    });
    const now = (await sepolia.getBlock("latest"))!.timestamp;
    await keyedWrite(principal, "/x402/rams/grant-mandate", {
      agent: agent.address,
      principal: principal.address,
      validUntil: String(now + 86_400),
      identityRef,
      asset: usdc,
      maxTransactionValue: "5000",
      maxCumulativeValue: "5000",
      actions: ["0x23b872dd"],
    });

    transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, "bin", "run.js"), "mcp"],
      cwd: ROOT,
      env: {
        TAK_BASE_URL: service.url,
        TAK_PRIVATE_KEY: agent.privateKey,
        TAK_DEPLOYMENTS_DIR: sandbox.deploymentsDir,
        TAK_RPC_URLS: `${SEPOLIA}=${sandbox.sepolia.url},${BASE_SEPOLIA}=${sandbox.baseSepolia.url}`,
      },
      stderr: "pipe",
    });
    client = new Client({ name: "agent-day", version: "1.0.0" });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    sepolia?.destroy();
    await service?.stop();
  });

  it("registers, creates and mints its token, pays for a read, executes under its mandate: with the tools listed by default", async () => {
    const listed = new Set((await client.listTools()).tools.map((t) => t.name));
    expect(listed.size).to.be.at.most(40);
    const called: string[] = [];
    // Without a key the service takes 5 prepares a minute from one wallet, and a paid prepare is two (the quote, then
    // the paid call): the agent waits out the minute when it is told to, as the 429's Retry-After says.
    const call = async (name: string, args: Record<string, unknown>) => {
      called.push(name);
      for (;;) {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
        const code = (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code;
        if (result.isError && code === "RATE_LIMITED") await new Promise((r) => setTimeout(r, 61_000));
        else return structured(result);
      }
    };

    expect(await call("get_config", {})).to.include({ walletAddress: agent.address, hasApiKey: false });
    const registered = await call("agent_register", {
      chainId: "14a34",
      name: "Day agent",
      description: "An agent living its day through MCP",
      image: "https://example.com/day.png",
      services: [{ name: "MCP", endpoint: "https://day.example.com/mcp" }],
    });
    expect(registered.status, JSON.stringify(registered)).to.equal("success");
    const agentId = registered.outcome.agentId;

    const created = await call("agent_create_token", {
      chainId: "14a34",
      name: "Day Token",
      symbol: "DAYT",
      agentWallet: agent.address,
      premint: "100",
    });
    expect(created.status, JSON.stringify(created)).to.equal("success");
    const tokenAddress = created.outcome.tokenAddress;
    const minted = await call("agent_mint_token", { chainId: "14a34", tokenAddress, to: recipient, amount: "5" });
    expect(minted.status, JSON.stringify(minted)).to.equal("success");
    expect(minted.signed[0]).to.deep.include({
      function: "mint(address,uint256)",
      arguments: { to: recipient, amount: (5n * 10n ** 18n).toString() },
    });
    const token = AgentToken__factory.connect(tokenAddress, providerFor(sandbox.baseSepolia));
    expect(await token.balanceOf(recipient)).to.equal(5n * 10n ** 18n);

    // A paid read, without a key: the stdio server pays the agent getter's price from the agent's wallet.
    const usdcBase = USDC__factory.connect(
      sandbox.deployments[BASE_SEPOLIA].contracts.USDC,
      providerFor(sandbox.baseSepolia),
    );
    const before = await usdcBase.balanceOf(agent.address);
    const info = await call("get_agent_info", { agentId: String(agentId), chainId: "14a34" });
    expect(JSON.stringify(info)).to.include("Day agent");
    expect(before - (await usdcBase.balanceOf(agent.address))).to.equal(1n);

    // The mandate: 1000 units of the principal's USDC to the recipient, through the principal's executor.
    const usdcSepolia = USDC__factory.connect(sandbox.deployments[SEPOLIA].contracts.USDC, sepolia);
    const executed = await call("rams_execute", {
      chainId: "aa36a7",
      principal: principal.address,
      asset: sandbox.deployments[SEPOLIA].contracts.USDC,
      from: principal.address,
      to: recipient,
      amount: "1000",
    });
    expect(executed.status, JSON.stringify(executed)).to.equal("success");
    expect(executed.signed[0].function).to.equal("execute(address,bytes)");
    expect(await usdcSepolia.balanceOf(recipient)).to.equal(1000n);

    expect(
      called.filter((name) => !listed.has(name)),
      "tools called that the default toolsets do not list",
    ).to.deep.equal([]);
  });
});
