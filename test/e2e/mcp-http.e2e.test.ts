import { Writable } from "node:stream";
import { expect } from "chai";
import pino from "pino";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Wallet } from "ethers";
import { SecurityToken__factory, USDC__factory } from "../../typechain-types";
import { signTransactions, type UnsignedTransaction } from "../../client/index";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { ADDED_TOOLS, HOSTED_TOOLS, httpClient, structured, toolErrorOf } from "../helpers/mcp";
import { payWithEthers, quoteOf, type Requirements } from "../helpers/x402";

/** An x402 payment as the MCP transport carries it: the PaymentPayload object itself (not its base64 header form). */
const paymentPayload = async (
  wallet: Wallet,
  requirements: Requirements,
  overrides: Parameters<typeof payWithEthers>[2] = {},
) => JSON.parse(Buffer.from(await payWithEthers(wallet, requirements, overrides), "base64").toString("utf8"));

describe("e2e: MCP over Streamable HTTP (POST /mcp) with the official SDK's client", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let apiKey: string;
  let issuer: Wallet;
  let keyed: Client;
  let keyless: Client;
  const clients: Client[] = [];
  const logLines: string[] = [];
  /** A client of every toolset (X-MCP-Toolsets: all): this file calls tools of them all. */
  const connect = async (headers: Record<string, string> = {}) => {
    const client = await httpClient(`${service.url}/mcp`, { "x-mcp-toolsets": "all", ...headers });
    clients.push(client);
    return client;
  };

  before(async () => {
    sandbox = await getSandbox();
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    service = await startTestService(sandbox, { logger: pino({ level: "info" }, sink) });
    issuer = sandbox.accounts[1];
    ({ key: apiKey } = await service.services.apiKeys.create({ email: "agent@mcp.test", plan: "Enterprise" }));
    await service.services.signers.add(issuer.address, "all-keys");
    keyed = await connect({ "x-api-key": apiKey });
    keyless = await connect();
  });
  after(async () => {
    for (const client of clients) await client.close();
    await service?.stop();
  });

  it("lists every tool the hosted server names and the ones this API adds (toolsets all), each with an object input schema and an output schema", async () => {
    const { tools } = await keyless.listTools();
    const names = tools.map((t) => t.name);
    expect(names).to.include.members([...HOSTED_TOOLS, ...ADDED_TOOLS]);
    expect(new Set(names).size).to.equal(names.length);
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).to.equal("object");
      expect(tool.outputSchema?.type, tool.name).to.equal("object");
      expect(tool.description, tool.name).to.be.a("string").and.not.equal("");
    }
    // Generated from the routes: every prepare method is a tool, with its body's fields.
    const create = tools.find((t) => t.name === "create_tokenization")!;
    expect(create._meta).to.deep.equal({ "tak/prepares": "newTokenization" });
    expect(Object.keys(create.inputSchema.properties!)).to.include.members([
      "chainId",
      "signerAddress",
      "tokenizerEmail",
      "name",
      "tokenSymbol",
      "idempotencyKey",
    ]);
    expect(create.inputSchema.required).to.include.members(["chainId", "tokenizerEmail"]);
    expect(tools.find((t) => t.name === "get_token_info")!.annotations).to.include({ readOnlyHint: true });
  });

  it("a tokenization prepared, signed, sent and confirmed through the tools with an API key", async () => {
    const prepared = structured(
      await keyed.callTool({
        name: "create_tokenization",
        arguments: {
          chainId: "aa36a7",
          signerAddress: issuer.address,
          tokenizerEmail: "issuer@mcp.test",
          name: "MCP Holdings",
          tokenSymbol: "MCPH",
          preMints: [{ amount: "100" }],
          initialHolders: [{ walletAddress: issuer.address }],
        },
      }),
    );
    expect(prepared.txId).to.match(/^0x[0-9a-f]{64}$/);
    expect(prepared.info).to.include({ tokenSymbol: "MCPH" });
    const signedTransactions = await signTransactions(issuer, prepared.transactions as UnsignedTransaction[]);
    const sent = await keyed.callTool({
      name: "send_transactions",
      arguments: { txId: prepared.txId, signedTransactions },
    });
    expect(structured(sent).txId).to.equal(prepared.txId);
    const done = structured(
      await keyed.callTool({ name: "wait_for_transaction", arguments: { txId: prepared.txId, timeoutSeconds: 50 } }),
    );
    expect(done).to.include({ txId: prepared.txId, status: "success" });

    const tokenizer = structured(
      await keyed.callTool({ name: "get_tokenizer_info", arguments: { tokenSymbol: "MCPH" } }),
    );
    const token = SecurityToken__factory.connect(tokenizer.tokenAddress, providerFor(sandbox.sepolia));
    expect(await token.tokenizer()).to.equal(issuer.address);
    expect(await token.balanceOf(issuer.address)).to.equal(100n * 10n ** 18n);
    const status = structured(
      await keyed.callTool({ name: "get_transaction_status", arguments: { txId: prepared.txId } }),
    );
    expect(status.status).to.equal("success");
  });

  it("refuses a private key over HTTP (configure points to the stdio server, and any tool's privateKey argument is refused)", async () => {
    const refused = toolErrorOf(
      await keyless.callTool({ name: "configure", arguments: { privateKey: issuer.privateKey } }),
    );
    expect(refused).to.include({ code: "BAD_REQUEST", param: "privateKey" });
    expect(refused.message)
      .to.match(/stdio server/)
      .and.to.match(/npm run --silent mcp/);
    expect(refused.message).to.not.include(issuer.privateKey.slice(2));
    const inTool = toolErrorOf(
      await keyed.callTool({
        name: "get_token_info",
        arguments: { tokenSymbol: "MCPH", privateKey: issuer.privateKey },
      }),
    );
    expect(inTool).to.include({ code: "BAD_REQUEST", param: "privateKey" });
    expect(structured(await keyless.callTool({ name: "get_config", arguments: {} }))).to.deep.equal({
      env: "sandbox",
      baseUrl: service.url,
      hasApiKey: false,
      hasPrivateKey: false,
    });
    expect(structured(await keyed.callTool({ name: "configure", arguments: { env: "sandbox", apiKey } }))).to.include({
      hasApiKey: true,
      hasPrivateKey: false,
    });
  });

  it("a call without a key to a key-only tool is the API's 401, as a tool error; a bad argument names the field", async () => {
    const noKey = toolErrorOf(await keyless.callTool({ name: "get_token_info", arguments: { tokenSymbol: "MCPH" } }));
    expect(noKey.code).to.equal("UNAUTHORIZED");
    expect(noKey.message).to.equal("API key is required for this endpoint");
    const noKeyWrite = toolErrorOf(
      await keyless.callTool({
        name: "mint_tokens",
        arguments: { chainId: "aa36a7", signerAddress: issuer.address, tokenSymbol: "MCPH", userToMint: [] },
      }),
    );
    expect(noKeyWrite.code).to.equal("UNAUTHORIZED");
    const bad = toolErrorOf(await keyed.callTool({ name: "get_network_info", arguments: { chainId: "not a chain" } }));
    expect(bad).to.include({ code: "BAD_REQUEST", param: "chainId" });
    const bearer = await connect({ authorization: `Bearer ${apiKey}` });
    expect(
      structured(await bearer.callTool({ name: "get_token_info", arguments: { tokenSymbol: "MCPH" } })).tokenSymbol,
    ).to.equal("MCPH");
  });

  it("x402 over MCP without a key: the payment requirements as a tool error, a payment that does not verify refused with nothing charged, a valid one runs the tool and answers the settlement", async () => {
    const payer = sandbox.accounts[2];
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
    const prepared = structured(
      await keyless.callTool({
        name: "agent_create_token",
        arguments: {
          chainId: "14a34",
          executionMode: "service-relayed",
          name: "MCP Agent Token",
          symbol: "MCPX",
          agentWallet: sandbox.accounts[6].address,
          premint: "10",
        },
      }),
    );
    expect(prepared.executionMode).to.equal("service-relayed");
    const send = { name: "send_transactions", arguments: { txId: prepared.txId } };

    const unpaid = await keyless.callTool(send);
    expect(unpaid.isError).to.equal(true);
    const required = unpaid.structuredContent as {
      x402Version: number;
      accepts: Requirements[];
      resource: { url: string };
    };
    expect(required.x402Version).to.equal(2);
    expect(JSON.parse((unpaid.content as { text: string }[])[0].text)).to.deep.equal(required);
    const quote = required.accepts[0];
    expect(quote).to.include({ scheme: "exact", network: "eip155:84532", amount: "10000" });
    // The REST 402's own quote, for the same client behind the same proxy (X-Forwarded-Proto passed on).
    const proxied = await connect({ "x-forwarded-proto": "https" });
    const viaMcp = (await proxied.callTool(send)).structuredContent as {
      resource: { url: string };
      accepts: Requirements[];
    };
    const viaRest = quoteOf(
      await service.api.post("/send-transactions", { txId: prepared.txId }, { "x-forwarded-proto": "https" }),
    );
    expect(viaMcp.resource).to.deep.equal(viaRest.resource);
    expect(viaMcp.resource.url).to.match(/^https:\/\/127\.0\.0\.1:\d+\/send-transactions$/);
    expect(viaMcp.accepts).to.deep.equal(viaRest.accepts);

    const before = await usdc.balanceOf(payer.address);
    // Signed for another amount than the quote: refused before anything is done, with the requirements again.
    const wrong = await keyless.callTool({
      ...send,
      _meta: { "x402/payment": await paymentPayload(payer, quote, { value: "1" }) },
    });
    expect(wrong.isError).to.equal(true);
    expect((wrong.structuredContent as { error?: string; accepts: unknown[] }).error).to.match(
      /verification failed|value|amount/i,
    );
    expect((wrong.structuredContent as { accepts: unknown[] }).accepts).to.have.length(1);
    const stillPrepared = structured(
      await keyless.callTool({ name: "get_transaction_status", arguments: { txId: prepared.txId } }),
    );
    expect(stillPrepared.status).to.equal("prepared");
    expect(await usdc.balanceOf(payer.address)).to.equal(before);

    const paid = await keyless.callTool({ ...send, _meta: { "x402/payment": await paymentPayload(payer, quote) } });
    const summary = structured(paid);
    expect(summary.txId).to.equal(prepared.txId);
    const settlement = (paid._meta as Record<string, any>)["x402/payment-response"];
    expect(settlement).to.include({ success: true, network: "eip155:84532" });
    expect(settlement.payer.toLowerCase()).to.equal(payer.address.toLowerCase());
    // Without a key the batch is followed with the streamToken its prepare answered; its txId alone opens nothing.
    expect(
      toolErrorOf(
        await keyless.callTool({ name: "wait_for_transaction", arguments: { txId: prepared.txId, timeoutSeconds: 1 } }),
      ).code,
    ).to.equal("UNAUTHORIZED");
    expect(prepared.streamToken).to.be.a("string");
    const done = structured(
      await keyless.callTool({
        name: "wait_for_transaction",
        arguments: { txId: prepared.txId, streamToken: prepared.streamToken, timeoutSeconds: 50 },
      }),
    );
    expect(done.status).to.equal("success");
    expect(before - (await usdc.balanceOf(payer.address))).to.equal(BigInt(quote.amount));
  });

  it("MCP calls appear in the logs and the metrics under their tool's name, with no key, signature or payment in the logs", async () => {
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).to.match(/tak_mcp_tool_calls_total\{tool="create_tokenization",outcome="ok"\} 1/);
    expect(metrics).to.match(/tak_mcp_tool_calls_total\{tool="send_transactions",outcome="payment_required"\} [1-9]/);
    expect(metrics).to.match(/tak_mcp_tool_calls_total\{tool="get_token_info",outcome="error"\} [1-9]/);
    expect(metrics).to.match(
      /tak_http_requests_total\{method="POST",route="\/prepare-transactions\/newTokenization",status="200"\} 1/,
    );
    const lines = logLines.map((l) => JSON.parse(l));
    const call = lines.find((l) => l.msg === "mcp tool call" && l.tool === "create_tokenization");
    expect(call).to.include({ outcome: "ok" });
    const routed = lines.find((l) => l.msg === "request" && l.mcpTool === "create_tokenization");
    expect(routed).to.include({ method: "POST", route: "/prepare-transactions/newTokenization", status: 200 });
    expect(routed.requestId).to.equal(
      lines.find((l) => l.msg === "request" && l.route === "/mcp" && l.requestId === routed.requestId)?.requestId,
    );
    const all = logLines.join("\n");
    expect(all).to.not.include(apiKey);
    expect(all).to.not.include(issuer.privateKey.slice(2));
    expect(all).to.not.match(/"signature"|x402\/payment"|eyJ4NDAyVmVyc2lvbi/);
  });

  it("idempotencyKey is the route's Idempotency-Key: a retry gets the first answer, another request under the key is refused", async () => {
    const body = {
      chainId: "aa36a7",
      signerAddress: issuer.address,
      tokenSymbol: "MCPH",
      userToWhitelist: [
        { investorAddress: sandbox.accounts[3].address, investorEmail: "w@mcp.test", whitelistStatus: true },
      ],
    };
    const first = await keyed.callTool({
      name: "whitelist_investor",
      arguments: { ...body, idempotencyKey: "mcp-retry-1" },
    });
    const again = await keyed.callTool({
      name: "whitelist_investor",
      arguments: { ...body, idempotencyKey: "mcp-retry-1" },
    });
    expect(structured(again).txId).to.equal(structured(first).txId);
    const other = toolErrorOf(
      await keyed.callTool({
        name: "whitelist_investor",
        arguments: { ...body, userToWhitelist: [], idempotencyKey: "mcp-retry-1" },
      }),
    );
    expect(other.code).to.equal("IDEMPOTENCY_CONFLICT");
  });

  it("hostile calls are tool errors naming what is wrong, never a transport failure", async () => {
    let deep: Record<string, unknown> = { end: true };
    for (let i = 0; i < 40; i++) deep = { deep };
    // An unknown tool is the JSON-RPC error -32602 (invalid params), as the MCP specification says.
    const unknown = await keyed.callTool({ name: "no_such_tool", arguments: {} }).then(
      () => expect.fail("an unknown tool was called"),
      (error: { code?: number; message: string }) => error,
    );
    expect(unknown.code).to.equal(-32602);
    expect(unknown.message).to.match(/Unknown tool: no_such_tool/);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["get_token_info", { tokenSymbol: "A\u0000B" }, /^BAD_REQUEST$/],
      [
        "create_tokenization",
        {
          chainId: "aa36a7",
          signerAddress: issuer.address,
          tokenizerEmail: "x@mcp.test",
          name: deep,
          tokenSymbol: "DEEP",
        },
        /^BAD_REQUEST$/,
      ],
      ["get_webhook", { id: "%zz" }, /^(NOT_FOUND|BAD_REQUEST)$/],
      ["get_webhook", {}, /^BAD_REQUEST$/],
      [
        "send_transactions",
        { txId: "0x" + "00".repeat(32), signedTransactions: ["0x02"] },
        /^(NOT_FOUND|BAD_REQUEST)$/,
      ],
      ["wait_for_transaction", { txId: "nope" }, /^BAD_REQUEST$/],
      ["send_transactions", { txId: "0x" + "00".repeat(32) }, /^(NOT_FOUND|BAD_REQUEST)$/],
    ];
    for (const [name, args, code] of cases) {
      const error = toolErrorOf(await keyed.callTool({ name, arguments: args }));
      expect(error.code, `${name} ${JSON.stringify(args).slice(0, 80)}: ${error.message}`).to.match(code);
    }
    const paymentNotAnObject = toolErrorOf(
      await keyless.callTool({
        name: "send_transactions",
        arguments: { txId: "0x" + "00".repeat(32) },
        _meta: { "x402/payment": "not a payload" },
      }),
    );
    expect(paymentNotAnObject).to.include({ code: "BAD_REQUEST", param: "_meta.x402/payment" });
  });

  it("rate limits and tenants hold through MCP: past the burst of 30 keyless prepares from one address, RATE_LIMITED; another key's records are not this key's", async () => {
    const agent = await connect({ "x-forwarded-for": "10.38.0.1" });
    const prepare = (i: number) =>
      agent.callTool({
        name: "agent_create_token",
        arguments: {
          chainId: "14a34",
          executionMode: "service-relayed",
          name: `Limited ${i}`,
          symbol: `LIM${i}`,
          agentWallet: sandbox.accounts[6].address,
        },
      });
    for (let i = 0; i < 30; i++) structured(await prepare(i));
    const limited = toolErrorOf(await prepare(30));
    expect(limited.code).to.equal("RATE_LIMITED");
    // Another address is another count.
    structured(
      await (
        await connect({ "x-forwarded-for": "10.38.0.2" })
      ).callTool({
        name: "agent_create_token",
        arguments: {
          chainId: "14a34",
          executionMode: "service-relayed",
          name: "Other",
          symbol: "LIMO",
          agentWallet: sandbox.accounts[6].address,
        },
      }),
    );

    const { key: otherKey } = await service.services.apiKeys.create({ email: "other@mcp.test", plan: "Starter" });
    const other = await connect({ "x-api-key": otherKey });
    const mine = structured(
      await keyed.callTool({
        name: "whitelist_investor",
        arguments: {
          chainId: "aa36a7",
          signerAddress: issuer.address,
          tokenSymbol: "MCPH",
          userToWhitelist: [
            { investorAddress: sandbox.accounts[4].address, investorEmail: "t@mcp.test", whitelistStatus: true },
          ],
        },
      }),
    );
    expect(
      toolErrorOf(await other.callTool({ name: "get_tokenizer_info", arguments: { tokenSymbol: "MCPH" } })).code,
    ).to.equal("FORBIDDEN");
    expect(
      toolErrorOf(
        await other.callTool({ name: "wait_for_transaction", arguments: { txId: mine.txId, timeoutSeconds: 1 } }),
      ).code,
    ).to.equal("FORBIDDEN");
  });
});
