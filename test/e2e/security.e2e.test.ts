import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { ONBOARDING_LIMITS } from "../../service/auth/onboarding-limits";
import { MAX_LINK_FAILURES } from "../../service/onboarding/links";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { requestMessage, tokenOf } from "../helpers/kyc";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * Issue 23's holes, through HTTP on the sandbox chains: who reads a batch, what a payment pays for, the onboarding
 * limits, the headers of JSON answers, the embedded database's file modes. (Nothing usable at rest: at-rest-scan.)
 */
describe("e2e: security (tenants, payment binding, onboarding limits, headers, file modes)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyA: ApiClient;
  let keyB: ApiClient;
  let issuer: Wallet;
  let payer: Wallet;

  const ok = (res: ApiResponse, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 202]);
    return res.body;
  };
  const expectError = (res: ApiResponse, status: number, message: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.message, JSON.stringify(res.body)).to.match(message);
    return res.body.error;
  };
  const usdcBase = () =>
    USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const symbol = () => `S${randomBytes(3).toString("hex").toUpperCase()}`;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    keyA = api.withKey((await service.services.apiKeys.create({ email: "a@security.test", plan: "Enterprise" })).key);
    keyB = api.withKey((await service.services.apiKeys.create({ email: "b@security.test", plan: "Enterprise" })).key);
    issuer = sandbox.accounts[4];
    payer = sandbox.accounts[5];
    await service.services.signers.add(issuer.address, "all-keys");
  });
  after(async () => {
    await service?.stop();
  });

  describe("who may read a batch (GET /get-transaction-status)", () => {
    it("a batch prepared under a key is read with that key only: by txId another key and no key get the 404 of an unknown txId; by hash, only what the chain shows", async () => {
      const body = {
        method: "agentCreateToken",
        chainId: "84532",
        signerAddress: issuer.address,
        name: "Tenant token",
        symbol: symbol(),
        agentWallet: issuer.address,
      };
      const prepared = ok(await keyA.post("/prepare-transactions", body), "prepare");
      const txId = prepared.txId;
      expect(ok(await keyA.get("/get-transaction-status", { txId })).status).to.equal("prepared");
      const unknownTxId = "0x" + randomBytes(32).toString("hex");
      const unknown = expectError(
        await api.get("/get-transaction-status", { txId: unknownTxId }),
        404,
        /^No prepared transactions with txId/,
      );
      for (const [label, client] of [
        ["another key", keyB],
        ["no key", api],
      ] as const) {
        const res = await client.get("/get-transaction-status", { txId });
        const error = expectError(res, 404, new RegExp(`^No prepared transactions with txId ${txId}$`));
        expect(error.code, label).to.equal(unknown.code);
        expect(JSON.stringify(res.body), label).not.to.include(issuer.address.slice(2).toLowerCase());
      }
      expectError(
        await api.withKey("tak_0000000000000000_" + "x".repeat(43)).get("/get-transaction-status", { txId }),
        401,
        /Invalid API key/,
      );

      const signedTransactions = [await issuer.signTransaction(prepared.transactions[0])];
      const sent = ok(await keyA.post("/send-transactions", { txId, signedTransactions }), "send");
      expect(sent.status).to.equal("success");
      const hash = sent.txHashes[0];
      const own = ok(await keyA.get("/get-transaction-status", { hash }));
      expect(own).to.include({ txId, method: "agentCreateToken", status: "success" });
      for (const client of [keyB, api]) {
        const foreign = ok(await client.get("/get-transaction-status", { hash }));
        // The chain's public facts only, as for a hash this service never saw.
        expect(foreign).to.include({ txId: null, status: "success", txHash: hash });
        expect(foreign.transactions).to.deep.equal([]);
        expect(foreign).not.to.have.property("method");
      }
    });

    it("a batch prepared without a key (relayed, paid with x402) is read by whoever names its txId, which is 32 random bytes, or one of its hashes", async () => {
      const txId = await prepareRelayedToken(api, symbol(), sandbox.accounts[6].address);
      expect(txId).to.match(/^0x[0-9a-f]{64}$/);
      expect(await prepareRelayedToken(api, symbol(), sandbox.accounts[6].address)).not.to.equal(txId);
      for (const client of [api, keyA, keyB])
        expect(ok(await client.get("/get-transaction-status", { txId })).status).to.equal("prepared");
      const paid = ok(await payRelayedSend(api, txId, payer), "relayed send");
      const hash = paid.txHashes[0];
      for (const client of [api, keyB])
        expect(ok(await client.get("/get-transaction-status", { hash }))).to.include({ txId, status: "success" });
    });

    it("/openapi.json says who reads a batch: the key optional, and the rule in the description", async () => {
      const doc = ok(await api.get("/openapi.json"));
      const op = doc.paths["/get-transaction-status"].get;
      expect(op.security).to.deep.equal([{ apiKey: [] }, {}]);
      expect(op.description).to.match(/prepared under an API key is read with that key/);
      expect(op.responses).to.have.property("401");
    });
  });

  describe("a payment pays only for the quote it accepted (x402)", () => {
    it("an accepted requirement of another route's quote, another timeout, another extra or a field the quote lacks → 402 naming it; nothing moves; the quote echoed whole pays", async () => {
      const txId = await prepareRelayedToken(api, symbol(), sandbox.accounts[6].address);
      const quote = quoteOf(await api.post("/send-transactions", { txId })).accepts[0];
      expect(quote.extra.routeKey).to.equal("POST /send-transactions");
      const prepareQuote = { ...quote, extra: { ...quote.extra, routeKey: "POST /prepare-transactions" } };
      const cases: [string, Record<string, unknown>, RegExp][] = [
        [
          "another route's quote",
          prepareQuote,
          /payment was made for POST \/prepare-transactions, not for POST \/send-transactions \(extra\.routeKey\)/,
        ],
        ["another timeout", { ...quote, maxTimeoutSeconds: 3600 }, /wrong maxTimeoutSeconds 3600 \(expected 300\)/],
        [
          "another EIP-712 name",
          { ...quote, extra: { ...quote.extra, name: "Fake USDC" } },
          /extra\.name Fake USDC is not the quote's "USDC"/,
        ],
        [
          "extra without the route",
          { ...quote, extra: { name: quote.extra.name, version: quote.extra.version } },
          /extra\.(tokenSymbol|displayPrice|assetTransferMethod|routeKey|paymentChainId)/,
        ],
        [
          "a field the quote lacks",
          { ...quote, resource: "https://elsewhere.example/pay" },
          /accepted\.resource is not part of the quote/,
        ],
      ];
      const before = await usdcBase().balanceOf(payer.address);
      for (const [label, accepted, reason] of cases) {
        const res = await api.post(
          "/send-transactions",
          { txId },
          { "X-PAYMENT": await payWithEthers(payer, quote, { accepted }) },
        );
        expect(res.status, label).to.equal(402);
        expect(quoteOf(res).error, label).to.match(reason);
        expect(res.body.message, label).to.match(reason);
      }
      expect(await usdcBase().balanceOf(payer.address)).to.equal(before);
      expect(ok(await api.get("/get-transaction-status", { txId })).status).to.equal("prepared");
      // The whole quote echoed (what @x402/fetch sends) pays; so does the CLI's short echo (covered by the x402 tests).
      const paid = await api.post(
        "/send-transactions",
        { txId },
        { "X-PAYMENT": await payWithEthers(payer, quote, { accepted: { ...quote } }) },
      );
      expect(ok(paid, "echoed quote").status).to.equal("success");
      expect(before - (await usdcBase().balanceOf(payer.address))).to.equal(BigInt(quote.amount));
    });
  });

  describe("onboarding limits (/kyc/*)", () => {
    const randomToken = () => randomBytes(32).toString("base64url");

    it("300 requests with random link tokens from one IP: the first 20 answer 404, the rest 429 with Retry-After, also for other onboarding routes; another IP is not affected", async () => {
      const ip = { "x-forwarded-for": "10.23.1.1" };
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 300; i++) {
        const res = await api.get("/kyc", { token: randomToken() }, { ...ip, accept: "application/json" });
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get("retry-after");
      }
      expect(statuses.filter((s) => s === 404)).to.have.length(ONBOARDING_LIMITS.unknownLinks);
      expect(statuses.slice(ONBOARDING_LIMITS.unknownLinks).every((s) => s === 429)).to.equal(true);
      expect(Number(retryAfter)).to.be.within(1, ONBOARDING_LIMITS.unknownLinksWindowSeconds);
      const blocked = await api.post("/kyc/message", { token: randomToken() }, ip);
      expectError(blocked, 429, /unknown onboarding links per IP/);
      expect(blocked.headers.get("retry-after")).to.match(/^\d+$/);
      expect(
        (
          await api.get(
            "/kyc",
            { token: randomToken() },
            { "x-forwarded-for": "10.23.1.2", accept: "application/json" },
          )
        ).status,
      ).to.equal(404);
    });

    it(`at most ${ONBOARDING_LIMITS.requestsPerMinute} onboarding requests per IP per minute, malformed ones included`, async () => {
      const ip = { "x-forwarded-for": "10.23.2.1" };
      for (let i = 0; i < ONBOARDING_LIMITS.requestsPerMinute; i++)
        expect((await api.post("/kyc/message", { token: "short" }, ip)).status).to.equal(400);
      const refused = await api.post("/kyc/message", { token: "short" }, ip);
      expectError(refused, 429, /onboarding requests per IP per minute/);
      expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
    });

    it(`refused submissions through one link are counted: at ${MAX_LINK_FAILURES} the link is locked (410) and the investor needs a fresh one`, async () => {
      const ip = { "x-forwarded-for": "10.23.3.1" };
      const email = `locked-${randomBytes(3).toString("hex")}@security.test`;
      const invited = ok(await keyA.post("/create-kyc-link", { email }));
      const token = tokenOf(invited.url);
      const investor = Wallet.createRandom();
      const details = { firstName: "Lock", lastName: "Smith", country: "DE" };
      const kycUrl = async () =>
        ok(await keyA.get("/get-investors", { kycStatus: "invited" })).investors.find((i: any) => i.email === email)
          ?.kycUrl;
      expect(await kycUrl(), "the live link is shown to the issuer (its token is held sealed)").to.equal(invited.url);
      const message = ok(await requestMessage(api, token, investor, details)).message as string;
      const forged = await Wallet.createRandom().signMessage(message);
      for (let i = 0; i < MAX_LINK_FAILURES; i++) {
        expectError(
          await api.post(
            "/kyc/submit",
            { token, ...details, walletAddress: investor.address, message, signature: forged },
            ip,
          ),
          400,
          /^signature was made by/,
        );
      }
      const locked = await api.post(
        "/kyc/submit",
        { token, ...details, walletAddress: investor.address, message, signature: await investor.signMessage(message) },
        ip,
      );
      expect(expectError(locked, 410, /^This link is locked/).code).to.equal("LINK_LOCKED");
      expect((await api.get("/kyc", { token }, { ...ip, accept: "application/json" })).status).to.equal(410);
      expect(await kycUrl(), "a locked link is not shown").to.equal(null);
      const fresh = ok(await keyA.post("/create-kyc-link", { email }));
      expect(
        ok(await api.get("/kyc", { token: tokenOf(fresh.url) }, { ...ip, accept: "application/json" })),
      ).to.include({ email, kycStatus: "invited" });
    });

    it("/openapi.json documents the 429 of the onboarding routes", async () => {
      const doc = ok(await api.get("/openapi.json"));
      for (const [p, m] of [
        ["/kyc", "get"],
        ["/kyc/message", "post"],
        ["/kyc/submit", "post"],
      ])
        expect(doc.paths[p][m].responses, p).to.have.property("429");
    });
  });

  describe("JSON answers", () => {
    it("carry X-Content-Type-Options: nosniff, the agent registration file (which echoes user text) and errors included", async () => {
      const owner = sandbox.accounts[7];
      await service.services.signers.add(owner.address, "all-keys");
      const profile = {
        name: "<script>alert(1)</script>",
        description: "<img src=x onerror=alert(1)>",
        image: "https://example.com/a.png",
        services: [{ name: "A2A", endpoint: "https://a.example/card.json", version: "0.3.0" }],
      };
      const prepared = ok(
        await keyA.post("/prepare-transactions", {
          method: "agentRegister",
          chainId: "84532",
          signerAddress: owner.address,
          ...profile,
        }),
      );
      ok(
        await keyA.post("/send-transactions", {
          txId: prepared.txId,
          signedTransactions: [await owner.signTransaction(prepared.transactions[0])],
        }),
      );
      const file = await api.get(`/agents/${prepared.info.agentUuid}/registration.json`);
      expect(file.body.name).to.equal(profile.name);
      expect(file.headers.get("content-type")).to.match(/^application\/json/);
      for (const res of [
        file,
        await api.get("/health"),
        await api.get("/no-such-route"),
        await api.get("/get-transaction-status", {}),
      ]) {
        expect(res.headers.get("x-content-type-options")).to.equal("nosniff");
      }
    });
  });

  describe("the embedded database's files", () => {
    it("are private to the service's user: directories 0700, files 0600, whatever the umask, while it runs and after it stops", async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-modes-"));
      const umask = process.umask(0o000);
      let onDisk: TestService | undefined;
      try {
        onDisk = await startTestService(sandbox, { dataDir, onDisk: true });
        process.umask(umask);
        await onDisk.services.apiKeys.create({ email: "modes@security.test", plan: "Starter" });
        const environmentDir = onDisk.config.environmentDir;
        expect(fs.existsSync(path.join(environmentDir, "pglite", "PG_VERSION"))).to.equal(true);
        expect(modesUnder(environmentDir)).to.deep.equal({ directories: ["700"], files: ["600"] });
        await onDisk.stop();
        onDisk = undefined;
        expect(modesUnder(environmentDir)).to.deep.equal({ directories: ["700"], files: ["600"] });
      } finally {
        process.umask(umask);
        await onDisk?.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});

/** The distinct permission modes (octal) of the directories and the files of a tree, its root included. */
function modesUnder(root: string): { directories: string[]; files: string[] } {
  const directories = new Set<string>();
  const files = new Set<string>();
  const walk = (dir: string) => {
    directories.add((fs.statSync(dir).mode & 0o777).toString(8));
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const target = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(target);
      else if (entry.isFile()) files.add((fs.statSync(target).mode & 0o777).toString(8));
    }
  };
  walk(root);
  return { directories: [...directories].sort(), files: [...files].sort() };
}
