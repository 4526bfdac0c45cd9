import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect } from "chai";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { allRoutes } from "../../service/app";
import type { Services } from "../../service/usecases/services";
import { isTool } from "../../service/mcp/catalogue";
import { buildCatalogue, listTools, type Catalogue } from "../../service/mcp/listing";
import { DEFAULT_TOOLSETS, selectionOf, TOOLSETS, toolsetOf } from "../../service/mcp/toolsets";
import type { ToolListing } from "../../service/mcp/session-tools";
import { PUBLIC_METHODS } from "../../service/methods";
import { operationIdOf } from "../../service/http/openapi";

/** The first Hardhat accounts, whose keys are public: no schema may offer one as an example. */
const HARDHAT_ACCOUNTS = [
  "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
];
/** Two names of one field the REST API takes (service/wire/field-aliases.ts): a tool lists one. */
const SECOND_NAMES = [
  ["tokenName", "name"],
  ["tokenizerCompanyName", "name"],
  ["symbol", "tokenSymbol"],
  ["spender", "spenderAddress"],
  ["recipientAddress", "to"],
  ["email", "ownerEmail"],
  ["email", "investorEmail"],
  ["feedbackUri", "feedbackURI"],
  ["responseUri", "responseURI"],
  ["issuanceAmount", "tokenAmount"],
  ["softCap", "minRaiseUSD"],
  ["hardCap", "maxRaiseUSD"],
  ["paymentTokenSymbol", "acceptedCoin"],
  ["complianceProviderAddress", "complianceProvider"],
  ["walletAddress", "investorAddress"],
  ["address", "investorAddress"],
];
/** The budget an agent can load: at most 40 tools and 48 KB of tools/list JSON (about 12k tokens) by default. */
const MAX_TOOLS = 40;
const MAX_BYTES = 48 * 1024;

/**
 * The MCP catalogue as an agent loads it, without a chain: what tools/list answers per toolset (size, schemas, prices,
 * annotations), and that no route is lost to toolsets. The e2e tests (mcp-http, mcp-protocol) serve the same catalogue.
 */
describe("MCP catalogue: toolsets an agent can load", () => {
  const routes = allRoutes({ config: {} } as Services);
  const catalogue: Catalogue = buildCatalogue(routes);
  const names = new Set(catalogue.keys());
  const prices = { of: async (operation: string) => (operation.startsWith("rams") ? 1_000n : 10_000n) };
  const list = (toolsets: string, readOnly = false) =>
    listTools(catalogue, selectionOf({ toolsets, readOnly }, names), prices);
  const bytes = (tools: ToolListing[]) =>
    Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } }));
  const walk = (value: unknown, visit: (node: Record<string, unknown>, path: string) => void, path = "") => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}[${i}]`));
    else if (value && typeof value === "object") {
      visit(value as Record<string, unknown>, path);
      for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}.${k}`);
    }
  };

  it(`lists at most ${MAX_TOOLS} tools and ${MAX_BYTES} bytes by default, the agent's toolsets`, async () => {
    const tools = await list("");
    expect(tools.length).to.be.at.most(MAX_TOOLS);
    expect(bytes(tools)).to.be.at.most(MAX_BYTES);
    expect(DEFAULT_TOOLSETS).to.deep.equal(["context", "transactions", "agents", "agent_tokens", "rams"]);
    expect(tools.map((t) => t.name)).to.include.members([
      "get_config",
      "agent_register",
      "agent_create_token",
      "agent_mint_token",
      "get_agent_info",
      "rams_execute",
      "send_transactions",
      "wait_for_transaction",
    ]);
    expect(tools.map((t) => t.name)).to.not.include.members(["prepare_transactions", "create_tokenization"]);
    // Read-only, everything: still loadable.
    const reads = await list("all", true);
    expect(reads.length).to.be.at.most(MAX_TOOLS);
    expect(reads.every((t) => t.annotations?.readOnlyHint === true)).to.equal(true);
  });

  it("every route stays reachable: each tool in exactly one toolset, each route left out for a stated reason", () => {
    const toolNames = [...names];
    for (const name of toolNames) expect(toolsetOf(name), name).to.be.a("string");
    const placed = TOOLSETS.flatMap((t) => t.tools);
    expect(new Set(placed).size, "a tool in two toolsets").to.equal(placed.length);
    expect([...placed].sort()).to.deep.equal([...toolNames].sort());
    const methodTools = new Set(
      [...catalogue.values()].map((e) => e.route?.prepares).filter((p): p is string => p !== undefined),
    );
    const why = (route: (typeof routes)[number]): string | undefined => {
      if (isTool(route)) return "a tool";
      if (route.hidden || route.tags.includes("console")) return "the operator's";
      if (route.tags.includes("meta")) return "the service's own (health, documents)";
      if (route.multipartFiles) return "a multipart upload";
      if (route.path === "/events") return "an event stream: wait_for_transaction follows it";
      if (route.path === "/documents/{sha256}") return "a document, not JSON";
      if (route.path === "/mcp") return "the endpoint itself";
      if (route.path === "/get-api-network-info") return "the same as get_network_info";
      const method = PUBLIC_METHODS.find((m) => m.facadePath === route.path);
      if (method && methodTools.has(method.name)) return `the facade of ${method.name}, a tool`;
      return undefined;
    };
    const lost = routes.filter((r) => why(r) === undefined).map((r) => `${r.method} ${r.path} (${operationIdOf(r)})`);
    expect(lost, "routes no toolset reaches").to.deep.equal([]);
    for (const method of PUBLIC_METHODS) expect(methodTools, method.name).to.include(method.name);
  });

  it("says each thing once: no unused $defs, one name per field, no type beside an anyOf, no Hardhat account, no OpenAPI example", async () => {
    const tools = await list("all");
    for (const tool of tools) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        if (!schema) continue;
        const defs = Object.keys(schema.$defs ?? {});
        const text = JSON.stringify({ ...schema, $defs: undefined });
        for (const id of defs) expect(text, `${tool.name}: $defs.${id} unused`).to.include(`#/$defs/${id}`);
        walk(schema, (node, path) => {
          // A type beside an anyOf whose branches are of other types (a number that can never validate).
          const branches = Array.isArray(node.anyOf) ? (node.anyOf as { type?: unknown }[]) : [];
          const contradiction = branches.some(
            (b) => b.type !== undefined && node.type !== undefined && b.type !== node.type,
          );
          expect(contradiction, `${tool.name}${path}: type ${String(node.type)} beside an anyOf`).to.equal(false);
          expect(node, `${tool.name}${path}`).to.not.have.any.keys("example", "examples");
        });
      }
      const properties = Object.keys(tool.inputSchema.properties ?? {});
      for (const pair of SECOND_NAMES)
        expect(
          pair.every((n) => properties.includes(n)),
          `${tool.name} lists both ${pair.join(" and ")}`,
        ).to.equal(false);
      if (tool.name !== "prepare_transactions") expect(properties, tool.name).to.not.include.members(["method"]);
      expect(properties, tool.name).to.not.include("privateRpcUrl");
      const everything = JSON.stringify(tool);
      for (const account of HARDHAT_ACCOUNTS) expect(everything.toLowerCase()).to.not.include(account.toLowerCase());
    }
    const create = tools.find((t) => t.name === "create_tokenization")!;
    expect(Object.keys(create.inputSchema.properties as object)).to.include.members(["name", "tokenSymbol"]);
    const approve = tools.find((t) => t.name === "agent_approve_token")!;
    expect(Object.keys(approve.inputSchema.properties as object)).to.include("spenderAddress");
    expect(tools.find((t) => t.name === "prepare_transactions")!.inputSchema.required).to.deep.equal(["method"]);
    expect(names.has("get_api_network_info")).to.equal(false);
  });

  it("states the price of every paid tool, and the error and payment bodies validate against every output schema", async () => {
    const tools = await list("all");
    const validator = new AjvJsonSchemaValidator();
    const errorBody = { error: { code: "BAD_REQUEST", message: "no", param: "x" }, message: "no" };
    const paymentRequired = {
      x402Version: 2,
      error: "payment required",
      resource: { url: "http://x/y", description: "d", mimeType: "application/json" },
      accepts: [],
    };
    for (const tool of tools) {
      const entry = catalogue.get(tool.name)!;
      if (entry.route?.price) expect(tool.description, tool.name).to.match(/Without an API key: 0\.0\d+ USDC via x402/);
      if (!tool.outputSchema) continue;
      const check = validator.getValidator(tool.outputSchema);
      expect(check(errorBody).valid, `${tool.name}: ${check(errorBody).errorMessage}`).to.equal(true);
      expect(check(paymentRequired).valid, `${tool.name}: ${check(paymentRequired).errorMessage}`).to.equal(true);
    }
    const paid = tools.filter((t) => catalogue.get(t.name)!.route?.price);
    expect(paid.map((t) => t.name)).to.include.members([
      "agent_register",
      "get_agent_info",
      "rams_can_execute",
      "faucet_bkn",
    ]);
    expect(tools.find((t) => t.name === "agent_register")!.description).to.include("0.01 USDC via x402 (half here");
  });

  it("annotates honestly: reads read-only, writes that move value or rights destructive, retries safe where they are", async () => {
    const tools = new Map((await list("all")).map((t) => [t.name, t.annotations!]));
    for (const [name, entry] of catalogue) {
      const a = tools.get(name)!;
      expect(a.readOnlyHint, name).to.equal(entry.route ? entry.route.call.method === "get" : true);
      if (a.readOnlyHint) expect(a, name).to.include({ destructiveHint: false, idempotentHint: true });
    }
    for (const name of [
      "burn_tokens",
      "forced_transfer",
      "recover_wallet",
      "send_transactions",
      "transfer_tokens",
      "agent_transfer_token",
      "agent_approve_token",
      "rams_execute",
      "rams_grant_mandate",
      "create_tokenization",
      "delete_webhook",
    ])
      expect(tools.get(name), name).to.include({ readOnlyHint: false, destructiveHint: true });
    expect(tools.get("agent_register")).to.include({ readOnlyHint: false, destructiveHint: false });
    expect(tools.get("send_transactions")).to.include({ idempotentHint: true });
    expect(tools.get("agent_mint_token")).to.include({ idempotentHint: false });
  });

  it("builds nothing of MCP when the service starts: the SDK is loaded, and the catalogue built, on the first MCP request", () => {
    const script = [
      'require("./service/app");',
      'const sdk = Object.keys(require.cache).filter((k) => k.includes("@modelcontextprotocol")).length;',
      "process.stdout.write(String(sdk));",
    ].join("");
    const loaded = execFileSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
      cwd: path.join(__dirname, "..", ".."),
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "true" },
      encoding: "utf8",
    });
    expect(loaded).to.equal("0");
  });

  it("refuses a toolset or tool that does not exist, naming the ones there are; read-only wins over a toolset", () => {
    expect(() => selectionOf({ toolsets: "agents,tokenz" }, names)).to.throw(
      /no toolset named "tokenz"; toolsets: context/,
    );
    expect(() => selectionOf({ tools: "mint_tokenz" }, names)).to.throw(/no tool named "mint_tokenz"/);
    const selection = selectionOf({ toolsets: "tokens", tools: "agent_register", readOnly: true }, names);
    expect(selection.readOnly).to.equal(true);
    expect([...selectionOf({ toolsets: "all" }, names).toolsets]).to.have.length(TOOLSETS.length);
  });
});
