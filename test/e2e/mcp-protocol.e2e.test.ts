import { expect } from "chai";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { httpClient, structured } from "../helpers/mcp";

const ALLOWED_PAGE = "https://app.example.com";

/** A raw POST to /mcp (no SDK): what a client that gets the protocol wrong, or a browser page, sends. */
async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const message = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
const initialize = (version: string) =>
  message(1, "initialize", {
    protocolVersion: version,
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });

/**
 * The MCP endpoint as the transport and the tools pages of the specification say it must behave (Origin, JSON-RPC
 * errors, batches), and the toolsets a connection chooses (?toolsets=, X-MCP-Toolsets, ?tools=, read-only).
 */
describe("e2e: MCP protocol conformance and toolsets (POST /mcp)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let mcp: string;
  const clients: Client[] = [];
  const connect = async (url: string, headers: Record<string, string> = {}) => {
    const client = await httpClient(url, headers);
    clients.push(client);
    return client;
  };
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail("the call should have been refused"),
      (error: { code?: number; message: string }) => error,
    );

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox, { env: { MCP_ALLOWED_ORIGINS: ALLOWED_PAGE } });
    mcp = `${service.url}/mcp`;
  });
  after(async () => {
    for (const client of clients) await client.close();
    await service?.stop();
  });

  it("lists the default toolsets when none is asked for; ?toolsets=, X-MCP-Toolsets and ?tools= choose others", async () => {
    const byDefault = (await (await connect(mcp)).listTools()).tools.map((t) => t.name);
    expect(byDefault.length).to.be.at.most(40);
    expect(byDefault).to.include.members(["agent_register", "agent_create_token", "rams_execute", "send_transactions"]);
    expect(byDefault).to.not.include("create_tokenization");
    const tokens = (await (await connect(`${mcp}?toolsets=tokens`)).listTools()).tools.map((t) => t.name);
    expect(tokens).to.include("create_tokenization").and.not.include("agent_register");
    const viaHeader = await connect(mcp, { "x-mcp-toolsets": "offerings,dividends" });
    expect((await viaHeader.listTools()).tools.map((t) => t.name))
      .to.include.members(["create_sto", "distribute_dividend"])
      .and.not.include("agent_register");
    expect(viaHeader.getInstructions()).to.match(/Toolsets listed: offerings, dividends; others: context/);
    const plusOne = (await (await connect(`${mcp}?tools=create_tokenization`)).listTools()).tools.map((t) => t.name);
    expect(plusOne).to.include.members(["create_tokenization", "agent_register"]);
    const all = (await (await connect(`${mcp}?toolsets=all`)).listTools()).tools;
    expect(all.length).to.be.greaterThan(90);
  });

  it("refuses a tool outside the connection's toolsets, and a toolset that does not exist, naming what to ask for", async () => {
    const agentsOnly = await connect(mcp, { "x-mcp-toolsets": "agents" });
    const outside = await refusal(agentsOnly.callTool({ name: "get_network_info", arguments: { chainId: "aa36a7" } }));
    expect(outside.code).to.equal(-32602);
    expect(outside.message).to.match(/toolset context, which this connection did not ask for \(\?toolsets=context/);
    const misspelt = await post(`${mcp}?toolsets=agentz`, JSON.stringify(initialize("2025-06-18")));
    expect(misspelt.status).to.equal(400);
    expect(misspelt.body.error.code).to.equal(-32600);
    expect(misspelt.body.error.message).to.match(/no toolset named "agentz"; toolsets: context, transactions, agents/);
  });

  it("read-only (?readonly=true, X-MCP-Readonly) lists no write and refuses one, even a toolset's", async () => {
    for (const client of [
      await connect(`${mcp}?toolsets=all&readonly=true`),
      await connect(mcp, { "x-mcp-toolsets": "all", "x-mcp-readonly": "1" }),
    ]) {
      const { tools } = await client.listTools();
      expect(tools.length).to.be.at.most(40);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).to.equal(true);
      expect(tools.map((t) => t.name)).to.include.members(["get_network_info", "get_agent_info", "rams_can_execute"]);
      const write = await refusal(
        client.callTool({
          name: "agent_register",
          arguments: { name: "a", description: "d", image: "https://x/a.png" },
        }),
      );
      expect(write.code).to.equal(-32602);
      expect(write.message).to.match(/agent_register writes, and this connection is read-only/);
      expect(
        structured(await client.callTool({ name: "get_network_info", arguments: { chainId: "aa36a7" } })),
      ).to.include({
        chainId: "0xaa36a7",
      });
    }
  });

  it("Origin: a page of another origin is refused with 403; the service's own, MCP_ALLOWED_ORIGINS and no Origin pass; no wildcard CORS on /mcp", async () => {
    const body = JSON.stringify(initialize("2025-06-18"));
    const evil = await post(mcp, body, { origin: "http://evil.example:3000" });
    expect(evil.status).to.equal(403);
    expect(evil.body).to.deep.include({ jsonrpc: "2.0", id: null });
    expect(evil.body.error.message).to.match(/Origin http:\/\/evil\.example:3000/);
    expect(evil.headers.get("access-control-allow-origin")).to.equal(null);
    // A rebound page names the service's own host in Host, never in Origin: Host is not what decides.
    const rebound = await post(mcp, body, { origin: "http://rebound.example", host: "rebound.example" });
    expect(rebound.status).to.equal(403);
    const port = new URL(service.url).port;
    for (const origin of [service.url, `http://localhost:${port}`, ALLOWED_PAGE]) {
      const allowed = await post(mcp, body, { origin });
      expect(allowed.status, origin).to.equal(200);
      expect(allowed.body.result.serverInfo.name).to.equal("tokenized-asset-tx-api");
      expect(allowed.headers.get("access-control-allow-origin")).to.equal(origin);
    }
    const noOrigin = await post(mcp, body);
    expect(noOrigin.status).to.equal(200);
    expect(noOrigin.headers.get("access-control-allow-origin")).to.equal(null);
    const preflight = await fetch(mcp, { method: "OPTIONS", headers: { origin: "http://evil.example" } });
    expect(preflight.headers.get("access-control-allow-origin")).to.equal(null);
    // The REST API keeps its open CORS.
    const rest = await fetch(`${service.url}/health`, { headers: { origin: "http://evil.example" } });
    expect(rest.headers.get("access-control-allow-origin")).to.equal("*");
  });

  it("JSON-RPC errors where the specification says: -32700 for a body that is not JSON, -32600 for one that is no request, -32602 for an unknown tool", async () => {
    const parse = await post(mcp, "{not json");
    expect(parse.status).to.equal(400);
    expect(parse.body).to.deep.include({ jsonrpc: "2.0", id: null });
    expect(parse.body.error.code).to.equal(-32700);
    for (const invalid of ['{"hello":"world"}', '{"jsonrpc":"1.0","id":1,"method":"ping"}', "[]", "42"]) {
      const answer = await post(mcp, invalid);
      expect(answer.status, invalid).to.equal(400);
      expect(answer.body.error.code, invalid).to.equal(-32600);
    }
    const unknown = await post(mcp, JSON.stringify(message(7, "tools/call", { name: "no_such_tool", arguments: {} })), {
      "mcp-protocol-version": "2025-06-18",
    });
    expect(unknown.status).to.equal(200);
    expect(unknown.body.id).to.equal(7);
    expect(unknown.body.error.code).to.equal(-32602);
  });

  it("batches only on protocol versions that have them (2025-03-26 and before)", async () => {
    const batch = JSON.stringify([message(1, "ping"), message(2, "tools/list")]);
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const refused = await post(mcp, batch, { "mcp-protocol-version": version });
      expect(refused.status, version).to.equal(400);
      expect(refused.body.error.code).to.equal(-32600);
      expect(refused.body.error.message).to.match(new RegExp(`protocol version ${version} has no batches`));
    }
    const initInBatch = await post(mcp, JSON.stringify([initialize("2025-11-25")]));
    expect(initInBatch.body.error.code).to.equal(-32600);
    const old = await post(mcp, batch, { "mcp-protocol-version": "2025-03-26" });
    expect(old.status).to.equal(200);
    expect(old.body.map((answer: { id: number }) => answer.id).sort()).to.deep.equal([1, 2]);
    expect(old.body.find((answer: { id: number }) => answer.id === 2).result.tools.length).to.be.at.most(40);
  });
});
