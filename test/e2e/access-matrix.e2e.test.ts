import { expect } from "chai";
import { Wallet } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { execute } from "../helpers/flow";
import { getSandbox, providerFor, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { decodePaymentResponse, payWithEthers, quoteOf, type Requirements } from "../helpers/x402";

/**
 * Who may call what (docs/wire-conventions.md, Access, credits and prices): one test per cell of the access table
 * (service/auth/access-rules.ts) and per rule, with the messages clients match on and the prices (sandbox: 0.01 USDC
 * per write; client-signed pays half at prepare and half at send; service-relayed prepares free and pays everything at
 * send).
 */

const WRITE_PRICE = 10_000n;
const HALF = 5_000n;
const KEY_FOR_METHOD = "API key is required for this method";
const KEY_FOR_ENDPOINT = "API key is required for this endpoint";
const KEY_MISSING = "API key is missing from headers.";
const X402_OFF = "API key is required. x402 payment is not enabled.";
const X402_OFF_ON_CHAIN = "API key is required for this endpoint on the requested chain.";
const RELAYED_NEEDS_X402 = /relayed\)? execution requires x402 payment; API keys are not accepted/;

describe("e2e: access matrix (which credential works where)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let issuer: Wallet;
  let payer: Wallet;
  let keyedSigner: Wallet;
  let payTo: string;
  let tokenSymbol: string;
  let ipCounter = 0;
  let anonIndex = 0;
  let symbolCounter = 0;
  const run = Math.random()
    .toString(36)
    .slice(2, 5)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "X");

  const usdc = () => USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const balances = async () => ({ payer: await usdc().balanceOf(payer.address), payTo: await usdc().balanceOf(payTo) });
  /** A distinct client address per prepare (the app trusts the loopback proxy), clear of the per-IP limit. */
  const asClient = (): Record<string, string> => {
    const n = ipCounter++;
    return { "x-forwarded-for": `10.42.${Math.floor(n / 250)}.${(n % 250) + 1}` };
  };
  /** Signers of anonymous client-signed prepares rotate over #10-#19 (5 per wallet per minute without a key). */
  const anonSigner = () => sandbox.accounts[10 + (anonIndex++ % 10)];
  const agentSymbol = () => `AM${run}${symbolCounter++}`;
  const agentBody = (signer: Wallet | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    method: "agentCreateToken",
    chainId: "84532",
    name: "Matrix agent token",
    symbol: agentSymbol(),
    agentWallet: sandbox.accounts[6].address,
    premint: "1",
    ...(signer ? { signerAddress: signer.address } : {}),
    ...extra,
  });
  const relayedBody = () => agentBody(undefined, { executionMode: "service-relayed" });
  const expectError = (res: ApiResponse, status: number, message: string | RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    if (typeof message === "string") expect(res.body.message, JSON.stringify(res.body)).to.equal(message);
    else expect(res.body.message, JSON.stringify(res.body)).to.match(message);
    expect(res.body.error.message).to.equal(res.body.message);
  };
  /** The paid resources of /.well-known/x402. */
  const discovery = async () => {
    const res = await api.get("/.well-known/x402");
    expect(res.status).to.equal(200);
    return res.body as {
      enabled: boolean;
      resources: {
        resource: string;
        operation: string;
        executionMode: string;
        step: string;
        accepts: Requirements[];
      }[];
    };
  };
  /** A valid payment for 0.01 USDC to the payee, as a client would sign it from a live quote. */
  const validPayment = async (amount: bigint = WRITE_PRICE) => {
    const entry = (await discovery()).resources.find((r) => r.accepts[0].amount === amount.toString())!;
    return payWithEthers(payer, entry.accepts[0]);
  };
  const relayedPrepare = async () => {
    const res = await api.post("/prepare-transactions", relayedBody(), asClient());
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { txId: string; transactions: any[]; x402Requirements: Requirements; executionMode: string };
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    issuer = sandbox.accounts[1];
    payer = sandbox.accounts[3];
    keyedSigner = sandbox.accounts[4];
    payTo = sandbox.accounts[SETTLEMENT_INDEX].address;
    const { key } = await service.services.apiKeys.create({ email: "ops@matrix.test", plan: "Enterprise" });
    keyed = api.withKey(key);
    for (const w of [issuer, keyedSigner, sandbox.accounts[5]])
      await service.services.signers.add(w.address, "all-keys");
    // Rule 3 holds for x402 client-signed prepares too: the anonymous signers are whitelisted by the operator.
    for (let i = 10; i < 20; i++) await service.services.signers.add(sandbox.accounts[i].address, "all-keys");
    tokenSymbol = `MX${run}`;
    await execute(keyed, issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: "issuer@matrix.test",
      name: "Matrix Estate",
      tokenSymbol,
      tokenType: "RWA_TOKEN",
      supplyCap: "1000000",
      preMints: [{ amount: "100" }],
      initialHolders: [{ walletAddress: sandbox.accounts[5].address, email: "holder@matrix.test" }],
    });
  });
  after(async () => service?.stop());

  const whitelistBody = () => ({
    method: "whitelist",
    chainId: "aa36a7",
    signerAddress: issuer.address,
    tokenSymbol,
    userToWhitelist: [
      { investorAddress: sandbox.accounts[7].address, investorEmail: "inv@matrix.test", whitelistStatus: "true" },
    ],
  });

  describe("key-surface writes (tokenization and STO methods)", () => {
    it("x402: a valid X-PAYMENT without a key is not accepted on /prepare-transactions → 401 for this method; no USDC moves", async () => {
      const before = await balances();
      const res = await api.post("/prepare-transactions", whitelistBody(), {
        ...asClient(),
        "X-PAYMENT": await validPayment(),
      });
      expectError(res, 401, KEY_FOR_METHOD);
      expect(res.headers.get("payment-response")).to.equal(null);
      const other = await api.post(
        "/prepare-transactions",
        {
          ...whitelistBody(),
          method: "newTokenization",
          tokenizerEmail: "x@matrix.test",
          name: "X",
          tokenSymbol: "NOPE",
        },
        {
          ...asClient(),
          "X-PAYMENT": await validPayment(),
        },
      );
      expectError(other, 401, KEY_FOR_METHOD);
      expect(await balances()).to.deep.equal(before);
    });

    it("x402: a valid X-PAYMENT without a key is not accepted on /prepare-transactions/whitelist → 401 for this method; no USDC moves", async () => {
      const before = await balances();
      const { method: _m, ...body } = whitelistBody();
      const res = await api.post("/prepare-transactions/whitelist", body, {
        ...asClient(),
        "X-PAYMENT": await validPayment(),
      });
      expectError(res, 401, KEY_FOR_METHOD);
      const newSto = await api.post(
        "/prepare-transactions/newSto",
        { chainId: "aa36a7", signerAddress: issuer.address, tokenSymbol },
        {
          ...asClient(),
          "payment-signature": await validPayment(),
        },
      );
      expectError(newSto, 401, KEY_FOR_METHOD);
      expect(await balances()).to.deep.equal(before);
    });

    it("API key: accepted on /prepare-transactions/whitelist and /prepare-transactions (prepared and executed); a payment header alongside is ignored", async () => {
      const before = await balances();
      const { method: _m, ...body } = whitelistBody();
      const viaPath = await keyed.post("/prepare-transactions/whitelist", body, { "X-PAYMENT": await validPayment() });
      expect(viaPath.status, JSON.stringify(viaPath.body)).to.equal(200);
      expect(viaPath.body.transactions).to.have.length(1);
      expect(viaPath.headers.get("payment-response")).to.equal(null);
      const { sent } = await execute(keyed, issuer, whitelistBody());
      expect(sent.status).to.equal("success");
      const status = await keyed.get("/get-whitelist-status", {
        tokenSymbol,
        investorAddress: sandbox.accounts[7].address,
      });
      expect(status.status, JSON.stringify(status.body)).to.equal(200);
      expect(status.body.whitelistStatus).to.equal(true);
      expect(await balances()).to.deep.equal(before);
    });
  });

  describe("key-surface reads (/get-*)", () => {
    it("x402: GET /get-token-info with a payment header but no key → 401 'API key is required for this endpoint'", async () => {
      const before = await balances();
      const res = await api.get("/get-token-info", { tokenSymbol }, { "X-PAYMENT": await validPayment() });
      expectError(res, 401, KEY_FOR_ENDPOINT);
      expect(res.headers.get("payment-required")).to.equal(null);
      expectError(await api.get("/get-token-info", { tokenSymbol }), 401, KEY_FOR_ENDPOINT);
      expect(await balances()).to.deep.equal(before);
    });

    it("x402: GET /get-stos with a payment header but no key → 400 'API key is missing from headers.'", async () => {
      const before = await balances();
      const res = await api.get("/get-stos", { tokenSymbol: "X" }, { "X-PAYMENT": await validPayment() });
      expectError(res, 400, KEY_MISSING);
      expectError(await api.get("/get-stos", { tokenSymbol }), 400, KEY_MISSING);
      expect(await balances()).to.deep.equal(before);
    });

    it("API key: the same reads answer 200", async () => {
      const info = await keyed.get("/get-token-info", { tokenSymbol });
      expect(info.status, JSON.stringify(info.body)).to.equal(200);
      expect(info.body).to.include({ tokenSymbol, tokenizerEmail: "issuer@matrix.test" });
      const stos = await keyed.get("/get-stos", { tokenSymbol });
      expect(stos.status, JSON.stringify(stos.body)).to.equal(200);
      expect(stos.body).to.deep.include({ total: 0 });
    });
  });

  describe("PATCH /patch-token-docs", () => {
    const upload = async (apiKey: string | undefined, extraHeaders: Record<string, string> = {}) => {
      const form = new FormData();
      form.append("tokenSymbol", tokenSymbol);
      form.append(
        "legalDocs",
        new Blob([Buffer.from(`legal docs of ${tokenSymbol}`)], { type: "application/pdf" }),
        "legal.pdf",
      );
      const response = await fetch(`${service.url}/patch-token-docs`, {
        method: "PATCH",
        headers: { ...(apiKey ? { "x-api-key": apiKey } : {}), ...extraHeaders },
        body: form,
      });
      const text = await response.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: response.status, body, headers: response.headers } as ApiResponse;
    };

    it("x402: without a key → 401 (JSON body, and the multipart upload clients send, even with a payment header); no USDC moves", async () => {
      const before = await balances();
      const json = await api.request(
        "PATCH",
        "/patch-token-docs",
        { tokenSymbol },
        { "X-PAYMENT": await validPayment() },
      );
      expectError(json, 401, KEY_FOR_ENDPOINT);
      const multipart = await upload(undefined, { "X-PAYMENT": await validPayment() });
      expectError(multipart, 401, KEY_FOR_ENDPOINT);
      expect(await balances()).to.deep.equal(before);
    });

    it("API key: a multipart upload with the key is accepted", async () => {
      const res = await upload(keyed.apiKey);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ success: true, tokenSymbol });
      expect(res.body.legalDocsIpfs).to.be.a("string");
    });
  });

  describe("POST /prepare-transactions for the x402-eligible agentic method (agentCreateToken)", () => {
    it("API key (optional): a client-signed prepare with a key → 200, no payment asked or taken", async () => {
      const before = await balances();
      const res = await keyed.post("/prepare-transactions", agentBody(keyedSigner));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.txId).to.match(/^0x[0-9a-f]{64}$/);
      expect(res.headers.get("payment-response")).to.equal(null);
      expect(res.headers.get("payment-required")).to.equal(null);
      expect(await balances()).to.deep.equal(before);
    });

    it("x402: a service-relayed prepare without any credential → 200, free, with x402Requirements for the send (10000)", async () => {
      const before = await balances();
      const prepared = await relayedPrepare();
      expect(prepared.executionMode).to.equal("service-relayed");
      expect(prepared.x402Requirements).to.include({
        scheme: "exact",
        network: "eip155:84532",
        amount: WRITE_PRICE.toString(),
        payTo,
      });
      expect(prepared.x402Requirements.asset).to.equal(sandbox.deployments[84532].contracts.USDC);
      expect(await balances()).to.deep.equal(before);
    });

    it("x402: a client-signed prepare without a key → 402 with PAYMENT-REQUIRED for half the price (5000)", async () => {
      const before = await balances();
      const res = await api.post("/prepare-transactions", agentBody(anonSigner()), asClient());
      const quote = quoteOf(res);
      expect(quote.accepts[0]).to.include({ amount: HALF.toString(), network: "eip155:84532", payTo });
      expect(quote.accepts[0].extra.routeKey).to.equal("POST /prepare-transactions");
      expect(await balances()).to.deep.equal(before);
    });

    it("the 402 answer: error body { error: { code: PAYMENT_REQUIRED }, message } and an x402 v2 header (USDC, version 2, eip3009)", async () => {
      const res = await api.post("/prepare-transactions", agentBody(anonSigner()), asClient());
      expect(res.status).to.equal(402);
      expect(res.body.error).to.be.an("object");
      expect(res.body.error.code).to.equal("PAYMENT_REQUIRED");
      expect(res.body.error.message)
        .to.be.a("string")
        .and.match(/Payment Required/);
      expect(res.body.message).to.equal(res.body.error.message);
      expect(res.headers.get("access-control-expose-headers"))
        .to.match(/PAYMENT-REQUIRED/)
        .and.to.match(/PAYMENT-RESPONSE/);
      const quote = quoteOf(res);
      expect(quote.x402Version).to.equal(2);
      expect(quote.accepts).to.have.length.greaterThan(0);
      expect(quote.accepts[0]).to.include({
        scheme: "exact",
        network: "eip155:84532",
        asset: sandbox.deployments[84532].contracts.USDC,
        payTo,
        maxTimeoutSeconds: 300,
      });
      expect(quote.accepts[0].extra).to.include({
        name: "USDC",
        version: "2",
        assetTransferMethod: "eip3009",
        tokenSymbol: "USDC",
        displayPrice: "0.005 USDC",
      });
    });
  });

  describe("agentic writes in client-signed mode", () => {
    it("API key: prepare and send with the key succeed; no USDC moves", async () => {
      const before = await balances();
      const { sent, prepared } = await execute(keyed, keyedSigner, agentBody(keyedSigner));
      expect(sent.status).to.equal("success");
      expect(prepared.txId).to.be.a("string");
      expect(await balances()).to.deep.equal(before);
    });

    it("x402: 5000 at prepare and 5000 at send (10000 in total moved from the payer to the payee)", async () => {
      const signer = anonSigner();
      const body = agentBody(signer);
      const ip = asClient();
      const quote = quoteOf(await api.post("/prepare-transactions", body, ip)).accepts[0];
      expect(quote.amount).to.equal(HALF.toString());
      const before = await balances();
      const prepared = await api.post("/prepare-transactions", body, {
        ...ip,
        "X-PAYMENT": await payWithEthers(payer, quote),
      });
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      expect(decodePaymentResponse(prepared)).to.include({ success: true, network: "eip155:84532" });
      const afterPrepare = await balances();
      expect(before.payer - afterPrepare.payer).to.equal(HALF);
      expect(afterPrepare.payTo - before.payTo).to.equal(HALF);

      const signed = [await signer.signTransaction(prepared.body.transactions[0])];
      const unpaid = await api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions: signed });
      const sendQuote = quoteOf(unpaid).accepts[0];
      expect(sendQuote.amount).to.equal(HALF.toString());
      expect(sendQuote.extra.routeKey).to.equal("POST /send-transactions");
      const sent = await api.post(
        "/send-transactions",
        { txId: prepared.body.txId, signedTransactions: signed },
        { "X-PAYMENT": await payWithEthers(payer, sendQuote) },
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      expect(sent.body.status).to.equal("success");
      expect(decodePaymentResponse(sent)).to.include({ success: true });
      const after = await balances();
      expect(before.payer - after.payer).to.equal(WRITE_PRICE);
      expect(after.payTo - before.payTo).to.equal(WRITE_PRICE);
    });
  });

  describe("agentic sends in service-relayed mode", () => {
    it("API key: rejected → 400 'relayed execution requires x402 payment; API keys are not accepted'; no USDC moves", async () => {
      const prepared = await relayedPrepare();
      const before = await balances();
      const res = await keyed.post("/send-transactions", { txId: prepared.txId });
      expectError(res, 400, RELAYED_NEEDS_X402);
      expect((await api.get("/get-transaction-status", { txId: prepared.txId })).body.status).to.equal("prepared");
      expect(await balances()).to.deep.equal(before);
    });

    it("x402 required: without payment → 402 for the full price (10000); no USDC moves", async () => {
      const prepared = await relayedPrepare();
      const before = await balances();
      const res = await api.post("/send-transactions", { txId: prepared.txId });
      const quote = quoteOf(res);
      expect(quote.accepts[0]).to.include({ amount: WRITE_PRICE.toString(), network: "eip155:84532", payTo });
      expect(quote.accepts[0].extra.routeKey).to.equal("POST /send-transactions");
      expect(await balances()).to.deep.equal(before);
    });

    it("x402 required: with payment → 200, 10000 moved from the payer to the payee; the status read needs no credential", async () => {
      const prepared = await relayedPrepare();
      const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
      const before = await balances();
      const paid = await api.post(
        "/send-transactions",
        { txId: prepared.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
      expect(paid.body.status).to.equal("success");
      expect(decodePaymentResponse(paid)).to.include({ success: true, network: "eip155:84532" });
      const after = await balances();
      expect(before.payer - after.payer).to.equal(WRITE_PRICE);
      expect(after.payTo - before.payTo).to.equal(WRITE_PRICE);
    });
  });

  describe("credential-free endpoints", () => {
    it("GET /get-transaction-status for a relayed transaction needs no credential (neither key nor payment) → 200", async () => {
      const prepared = await relayedPrepare();
      const before = await balances();
      const pending = await api.get("/get-transaction-status", { txId: prepared.txId });
      expect(pending.status, JSON.stringify(pending.body)).to.equal(200);
      expect(pending.body).to.include({ status: "prepared", executionMode: "service-relayed" });
      const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
      expect(
        (
          await api.post(
            "/send-transactions",
            { txId: prepared.txId },
            { "X-PAYMENT": await payWithEthers(payer, quote) },
          )
        ).status,
      ).to.equal(200);
      const done = await api.get("/get-transaction-status", { txId: prepared.txId });
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
      expect(done.body).to.include({ status: "success", executionMode: "service-relayed" });
      expect(done.body.payments).to.have.length(1);
      expect(done.body.payments[0]).to.include({ status: "settled", step: "send", amount: WRITE_PRICE.toString() });
      // the key changes nothing on this read
      expect((await keyed.get("/get-transaction-status", { txId: prepared.txId })).status).to.equal(200);
      expect(before.payer - (await balances()).payer).to.equal(WRITE_PRICE);
    });

    it("GET /.well-known/x402 and GET /openapi.json need no credential → 200; discovery lists the prices and the payment terms", async () => {
      const openapi = await api.get("/openapi.json");
      expect(openapi.status).to.equal(200);
      expect(openapi.body.openapi).to.match(/^3\./);
      expect(openapi.body.paths).to.have.property("/prepare-transactions");

      const res = await api.get("/.well-known/x402");
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ x402Version: 2, enabled: true, network: "eip155:84532", payTo });
      const resources = res.body.resources as {
        resource: string;
        operation: string;
        executionMode: string;
        step: string;
        accepts: Requirements[];
      }[];
      expect(resources.length).to.be.greaterThan(0);
      for (const r of resources) {
        expect(r.accepts[0], r.resource).to.include({
          scheme: "exact",
          network: "eip155:84532",
          asset: sandbox.deployments[84532].contracts.USDC,
          payTo,
        });
        expect(r.accepts[0].extra).to.include({ name: "USDC", version: "2", assetTransferMethod: "eip3009" });
      }
      const find = (operation: string, mode: string, step: string) => {
        const found = resources.find((r) => r.operation === operation && r.executionMode === mode && r.step === step);
        expect(found, `${operation} ${mode} ${step}`).to.not.equal(undefined);
        return found!;
      };
      const csPrepare = find("agentCreateToken", "client-signed", "prepare");
      expect(csPrepare.accepts[0].amount).to.equal("5000");
      expect(csPrepare.resource).to.match(/\/prepare-transactions$/);
      expect(csPrepare.accepts[0].extra.routeKey).to.equal("POST /prepare-transactions");
      const csSend = find("agentCreateToken", "client-signed", "send");
      expect(csSend.accepts[0].amount).to.equal("5000");
      expect(csSend.resource).to.match(/\/send-transactions$/);
      const relayed = find("agentCreateToken", "service-relayed", "send");
      expect(relayed.accepts[0].amount).to.equal("10000");
      expect(relayed.accepts[0].extra.routeKey).to.equal("POST /send-transactions");
      // Only relayable methods are offered relayed; paid reads are listed at their tiers.
      expect(resources.find((r) => r.operation === "agentMintToken" && r.executionMode === "service-relayed")).to.equal(
        undefined,
      );
      expect(
        resources.find((r) => r.operation === "agentMintToken" && r.executionMode === "client-signed"),
      ).to.not.equal(undefined);
      const getters = resources.find((r) => r.operation === "get-agents")!;
      expect(getters).to.include({ executionMode: "read", step: "call" });
      expect(getters.accepts[0]).to.include({ amount: "1" });
      expect(getters.accepts[0].extra.routeKey).to.equal("GET /get-agents");
      expect(resources.find((r) => r.operation === "rams/mandate")!.accepts[0].amount).to.equal("1000");
      const faucet = resources.find((r) => /\/faucet\/bkn$/.test(r.resource));
      expect(faucet, "faucet resource").to.not.equal(undefined);
      expect(faucet!.accepts[0].amount).to.equal("10000");
      expect(faucet!.accepts[0].extra.routeKey).to.equal("POST /faucet/bkn");
    });
  });

  describe("rules", () => {
    it("Rule 1: a valid key and a valid payment header together: the key wins, nothing is paid, prepare and send succeed", async () => {
      const body = agentBody(keyedSigner);
      // a real quote for this very prepare, signed by the payer, sent together with the key
      const quote = quoteOf(await api.post("/prepare-transactions", agentBody(anonSigner()), asClient())).accepts[0];
      const before = await balances();
      const prepared = await keyed.post("/prepare-transactions", body, {
        "X-PAYMENT": await payWithEthers(payer, quote),
      });
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      expect(prepared.headers.get("payment-response")).to.equal(null);
      const signed = [await keyedSigner.signTransaction(prepared.body.transactions[0])];
      const sendQuote = (await discovery()).resources.find(
        (r) => r.executionMode === "client-signed" && r.step === "send",
      )!.accepts[0];
      const sent = await keyed.post(
        "/send-transactions",
        { txId: prepared.body.txId, signedTransactions: signed },
        { "X-PAYMENT": await payWithEthers(payer, sendQuote) },
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      expect(sent.body.status).to.equal("success");
      expect(sent.headers.get("payment-response")).to.equal(null);
      expect(await balances()).to.deep.equal(before);
      const status = await keyed.get("/get-transaction-status", { txId: prepared.body.txId });
      expect(status.body.payments).to.deep.equal([]);
    });

    it("Rule 1: a service-relayed prepare with a key → 400 relayed-requires-x402 (on /prepare-transactions and on the facade)", async () => {
      const before = await balances();
      expectError(await keyed.post("/prepare-transactions", relayedBody()), 400, RELAYED_NEEDS_X402);
      expectError(
        await keyed.post("/prepare-transactions", agentBody(undefined, { executionMode: "brickken-relayed" })),
        400,
        RELAYED_NEEDS_X402,
      );
      const { method: _m, executionMode: _e, ...facadeBody } = relayedBody();
      expectError(await keyed.post("/x402/token/create", facadeBody), 400, RELAYED_NEEDS_X402);
      expect(await balances()).to.deep.equal(before);
    });

    it("Rule 2: the facade-to-send round trip cannot use a key (even with a valid payment alongside); it works paid without the key", async () => {
      const { method: _m, executionMode: _e, ...facadeBody } = relayedBody();
      const prepared = await api.post("/x402/token/create", facadeBody, asClient());
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      expect(prepared.body.executionMode).to.equal("service-relayed");
      const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.body.txId })).accepts[0];
      const before = await balances();
      const withKey = await keyed.post(
        "/send-transactions",
        { txId: prepared.body.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expectError(withKey, 400, RELAYED_NEEDS_X402);
      expect(await balances()).to.deep.equal(before);
      const paid = await api.post(
        "/send-transactions",
        { txId: prepared.body.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
      expect(before.payer - (await balances()).payer).to.equal(WRITE_PRICE);
    });

    it("Rule 3: a keyed prepare with a signer the operator has not whitelisted is rejected with 403", async () => {
      const stranger = Wallet.createRandom();
      const res = await keyed.post("/prepare-transactions", agentBody(stranger as unknown as Wallet));
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.message).to.match(/not whitelisted/);
      const tokenization = await keyed.post("/prepare-transactions", {
        ...whitelistBody(),
        signerAddress: stranger.address,
      });
      expect(tokenization.status).to.equal(403);
      expect(tokenization.body.message).to.match(/not whitelisted/);
    });

    it("Rule 3: an x402 client-signed prepare with a signer that is not whitelisted → 403 before any 402; no USDC moves", async () => {
      const stranger = Wallet.createRandom();
      const before = await balances();
      const unpaid = await api.post("/prepare-transactions", agentBody(stranger as unknown as Wallet), asClient());
      expectError(unpaid, 403, /not whitelisted/);
      expect(unpaid.headers.get("payment-required")).to.equal(null);
      const paid = await api.post("/prepare-transactions", agentBody(stranger as unknown as Wallet), {
        ...asClient(),
        "X-PAYMENT": await validPayment(HALF),
      });
      expectError(paid, 403, /not whitelisted/);
      expect(paid.headers.get("payment-response")).to.equal(null);
      expect(await balances()).to.deep.equal(before);
    });

    it("validation runs before the 402 challenge: a bad body, chain or pre-check → 400 without PAYMENT-REQUIRED, even with a payment; no USDC moves", async () => {
      const before = await balances();
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["missing name", { name: undefined }, /^name /],
        ["bad symbol", { symbol: "bad symbol" }, /^symbol /],
        ["wrong chain", { chainId: "aa36a7" }, /runs on chain/],
        ["unknown chain", { chainId: "zz" }, /Unsupported chainId/],
        ["too many decimals", { premint: "1.1234567", decimals: "6" }, /premint has more than 6 decimal places/],
      ];
      for (const [label, change, message] of cases) {
        const body = { ...agentBody(anonSigner()), ...change };
        const unpaid = await api.post("/prepare-transactions", body, asClient());
        expect(unpaid.status, `${label}: ${JSON.stringify(unpaid.body)}`).to.equal(400);
        expect(unpaid.body.message, label).to.match(message);
        expect(unpaid.headers.get("payment-required"), label).to.equal(null);
        const paid = await api.post("/prepare-transactions", body, {
          ...asClient(),
          "X-PAYMENT": await validPayment(HALF),
        });
        expect(paid.status, `${label} (paid): ${JSON.stringify(paid.body)}`).to.equal(400);
        expect(paid.headers.get("payment-response"), label).to.equal(null);
      }
      // A relayed txId sent with signed transactions is refused before the quote, too.
      const prepared = await relayedPrepare();
      const wrongForm = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: ["0x02"] });
      expect(wrongForm.status, JSON.stringify(wrongForm.body)).to.equal(400);
      expect(wrongForm.headers.get("payment-required")).to.equal(null);
      expect(await balances()).to.deep.equal(before);
    });

    it("Rule 4: a key acts only on symbols it tokenized (Unauthorized token symbol); payment-token symbols are exempt", async () => {
      const other = api.withKey(
        (await service.services.apiKeys.create({ email: "other@matrix.test", plan: "Starter" })).key,
      );
      expectError(await other.get("/get-token-info", { tokenSymbol }), 403, "Unauthorized token symbol");
      expectError(await other.get("/get-stos", { tokenSymbol }), 403, "Unauthorized token symbol");
      const allowance = await other.get("/get-allowance", {
        tokenSymbol: "USDC",
        chainId: "aa36a7",
        ownerAddress: issuer.address,
        spenderAddress: payTo,
      });
      expect(allowance.status, JSON.stringify(allowance.body)).to.equal(200);
      expect(allowance.body.tokenSymbol).to.equal("USDC");
    });

    it("Rule 5: a key is bound to one deployment: each deployment knows only its own keys; a key carries no environment flag", async () => {
      // A real production deployment: its own database (with its own key pepper) and its own key; x402 off, as it has
      // no Base chain here.
      const production = await startTestService(sandbox, { env: { ENVIRONMENT: "production", X402_ENABLED: "false" } });
      try {
        const { key: productionKey } = await production.services.apiKeys.create({
          email: "ops@production.test",
          plan: "Starter",
        });
        expect((await production.api.withKey(productionKey).get("/get-token-info")).status).to.equal(200);
        expectError(await production.api.withKey(keyed.apiKey).get("/get-token-info"), 401, "Invalid API key");
        expectError(await api.withKey(productionKey).get("/get-token-info"), 401, "Invalid API key");
        expect((await keyed.get("/get-token-info")).status).to.equal(200);
        // tak_<16 hex id>_<43 base64url secret>: the visible part that could carry a flag is the prefix and the id.
        for (const key of [keyed.apiKey!, productionKey]) {
          const [prefix, id] = key.split("_");
          expect(key).to.match(/^tak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
          expect([prefix, id]).to.satisfy(([p, i]: string[]) => p === "tak" && /^[0-9a-f]+$/.test(i));
        }
      } finally {
        await production.stop();
      }
    });

    it("Rule 6: without a key, /get-network-info is public (200), /get-token-info answers 401 and /get-stos 400", async () => {
      const network = await api.get("/get-network-info", { chainId: "14a34" });
      expect(network.status).to.equal(200);
      expect(network.body).to.include({ chainId: "0x14a34", USDCAddress: sandbox.deployments[84532].contracts.USDC });
      expectError(await api.get("/get-token-info", { tokenSymbol }), 401, KEY_FOR_ENDPOINT);
      expectError(await api.get("/get-stos", { tokenSymbol }), 400, KEY_MISSING);
    });
  });

  describe("x402 disabled for the deployment (X402_ENABLED=false)", () => {
    let disabled: TestService;
    let relayedTxId: string;
    before(async () => {
      // A txId prepared while x402 was on; the disabled deployment shares the database, as after a configuration change.
      relayedTxId = (await relayedPrepare()).txId;
      disabled = await startTestService(sandbox, { db: service.services.db, env: { X402_ENABLED: "false" } });
    });
    after(async () => disabled?.stop());

    it("a client-signed agentic prepare without a key → 401 'API key is required. x402 payment is not enabled.'", async () => {
      const before = await balances();
      const res = await disabled.api.post("/prepare-transactions", agentBody(anonSigner()), {
        ...asClient(),
        "X-PAYMENT": await validPayment(HALF),
      });
      expectError(res, 401, X402_OFF);
      expectError(await disabled.api.post("/prepare-transactions", agentBody(anonSigner()), asClient()), 401, X402_OFF);
      expect(await balances()).to.deep.equal(before);
    });

    it("a service-relayed send without a key → 401 'API key is required. x402 payment is not enabled.'", async () => {
      const before = await balances();
      expectError(await disabled.api.post("/send-transactions", { txId: relayedTxId }), 401, X402_OFF);
      expectError(
        await disabled.api.post("/send-transactions", { txId: relayedTxId }, { "X-PAYMENT": await validPayment() }),
        401,
        X402_OFF,
      );
      expect(await balances()).to.deep.equal(before);
    });

    it("GET /.well-known/x402 → { enabled: false }", async () => {
      const res = await disabled.api.get("/.well-known/x402");
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ enabled: false });
      expect(res.body.resources ?? []).to.deep.equal([]);
    });
  });

  describe("x402 disabled for a chain (X402_DISABLED_CHAINS=84532)", () => {
    let offChain: TestService;
    before(async () => {
      offChain = await startTestService(sandbox, { env: { X402_DISABLED_CHAINS: "84532" } });
    });
    after(async () => offChain?.stop());

    it("an agentic prepare on 84532 without a key → 401 'API key is required for this endpoint on the requested chain.'", async () => {
      const before = await balances();
      expectError(
        await offChain.api.post("/prepare-transactions", agentBody(anonSigner()), asClient()),
        401,
        X402_OFF_ON_CHAIN,
      );
      expectError(await offChain.api.post("/prepare-transactions", relayedBody(), asClient()), 401, X402_OFF_ON_CHAIN);
      expect(await balances()).to.deep.equal(before);
    });
  });
});
