import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet, parseUnits } from "ethers";
import { BKN__factory, USDC__factory } from "../../typechain-types";
import { getSandbox, providerFor, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { decodePaymentResponse, payWithEthers, quoteOf } from "../helpers/x402";

/**
 * POST /faucet/bkn: sandbox only; 100 BKN on Sepolia (11155111) per claim;
 * Idempotency-Key (UUID v4) required; 24 h cooldown per recipient; an API key has 10 lifetime claims that never touch
 * mintToken credits; without a key x402 pays 0.01 USDC.
 */

const FAUCET_CHAIN = 11155111;
const PRICE = 10_000n;
const HUNDRED_BKN = parseUnits("100", 18);

describe("e2e: BKN faucet (POST /faucet/bkn)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let payer: Wallet;
  let payTo: string;

  const usdc = () => USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const bkn = () => BKN__factory.connect(sandbox.deployments[FAUCET_CHAIN].contracts.BKN, providerFor(sandbox.sepolia));
  const usdcBalances = async () => ({
    payer: await usdc().balanceOf(payer.address),
    payTo: await usdc().balanceOf(payTo),
  });
  /** `idempotencyKey: null` sends no Idempotency-Key header. */
  const claim = (
    client: ApiClient,
    recipientAddress: unknown,
    idempotencyKey: string | null = randomUUID(),
    headers: Record<string, string> = {},
  ) =>
    client.post(
      "/faucet/bkn",
      { recipientAddress },
      { ...(idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }), ...headers },
    );
  const newKey = async (email: string) => {
    const { key, record } = await service.services.apiKeys.create({ email, plan: "Starter" });
    return { client: api.withKey(key), id: record.id };
  };
  const expect400 = (res: ApiResponse, names: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.message, JSON.stringify(res.body)).to.match(names);
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    payer = sandbox.accounts[2];
    payTo = sandbox.accounts[SETTLEMENT_INDEX].address;
  });
  after(async () => service?.stop());

  it("refuses a missing or non-UUID-v4 Idempotency-Key (400 naming the header) and a zero or malformed recipientAddress (400 naming the field)", async () => {
    const { client } = await newKey("validation@faucet.test");
    const recipient = Wallet.createRandom().address;
    const before = await usdcBalances();
    for (const key of [
      null,
      "",
      "not-a-uuid",
      "6ba7b810-9dad-11d1-80b4-00c04fd430c8" /* v1 */,
      "6ba7b810-9dad-41d1-c0b4-00c04fd430c8" /* bad variant */,
    ]) {
      const res = await claim(client, recipient, key);
      expect400(res, /Idempotency-Key/);
    }
    // the same without a key: still a 400, never a payment challenge
    expect400(await claim(api, recipient, "nope"), /Idempotency-Key/);
    for (const bad of ["0x0000000000000000000000000000000000000000", "0x1234", "not-an-address", 42, undefined]) {
      const res = await claim(client, bad);
      expect400(res, /recipientAddress/);
    }
    expect(await bkn().balanceOf(recipient)).to.equal(0n);
    expect(await usdcBalances()).to.deep.equal(before);
  });

  describe("with an API key", () => {
    let key: { client: ApiClient; id: string };
    let recipient: string;
    let idempotencyKey: string;
    let first: ApiResponse;

    before(async () => {
      key = await newKey("claims@faucet.test");
      recipient = Wallet.createRandom().address;
      idempotencyKey = randomUUID();
    });

    it("claims 100 BKN: 200 with the claim record; the recipient holds 100 BKN; no USDC moves; one faucet credit spent", async () => {
      const credits = await service.services.credits.balances(key.id);
      const before = await usdcBalances();
      first = await claim(key.client, recipient, idempotencyKey);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const body = first.body;
      expect(body.claimId).to.match(/^[0-9a-f-]{36}$/i);
      expect(body).to.include({
        status: "confirmed",
        chainId: "11155111",
        amount: "100",
        amountRaw: "100000000000000000000",
      });
      expect(body.recipientAddress.toLowerCase()).to.equal(recipient.toLowerCase());
      expect(body.token).to.deep.equal({
        address: sandbox.deployments[FAUCET_CHAIN].contracts.BKN,
        symbol: "BKN",
        decimals: 18,
      });
      expect(body.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
      expect(body.explorerUrl).to.be.a("string").and.to.include(body.transactionHash);
      expect(body.cooldownEndsAt).to.be.a("string");
      const endsAt = Date.parse(body.cooldownEndsAt);
      expect(endsAt - Date.now()).to.be.within(23 * 3600_000, 25 * 3600_000);
      expect(first.headers.get("payment-response")).to.equal(null);

      expect(await bkn().balanceOf(recipient)).to.equal(HUNDRED_BKN);
      const receipt = await providerFor(sandbox.sepolia).getTransactionReceipt(body.transactionHash);
      expect(receipt?.status).to.equal(1);
      expect(await usdcBalances()).to.deep.equal(before);
      const after = await service.services.credits.balances(key.id);
      expect(after.faucet).to.equal(credits.faucet - 1);
      expect(after.mintToken).to.equal(credits.mintToken);
    });

    it("the same Idempotency-Key and recipient again → 200 with the same claimId and transactionHash; no second mint", async () => {
      const credits = await service.services.credits.balances(key.id);
      const again = await claim(key.client, recipient, idempotencyKey);
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      expect(again.body.claimId).to.equal(first.body.claimId);
      expect(again.body.transactionHash).to.equal(first.body.transactionHash);
      expect(again.body.status).to.equal("confirmed");
      // a checksum-case variant of the same recipient is the same claim
      const lower = await claim(key.client, recipient.toLowerCase(), idempotencyKey);
      expect(lower.status, JSON.stringify(lower.body)).to.equal(200);
      expect(lower.body.claimId).to.equal(first.body.claimId);
      expect(await bkn().balanceOf(recipient)).to.equal(HUNDRED_BKN);
      expect(await service.services.credits.balances(key.id)).to.deep.equal(credits);
    });

    it("the same Idempotency-Key with another recipient → 409", async () => {
      const other = Wallet.createRandom().address;
      const res = await claim(key.client, other, idempotencyKey);
      expect(res.status, JSON.stringify(res.body)).to.equal(409);
      expect(res.body.message).to.match(/Idempotency-Key/);
      expect(await bkn().balanceOf(other)).to.equal(0n);
    });

    it("the same recipient with a new Idempotency-Key within 24 h → 429 with Retry-After (seconds) naming the cooldown; nothing charged", async () => {
      const credits = await service.services.credits.balances(key.id);
      const before = await usdcBalances();
      const res = await claim(key.client, recipient, randomUUID());
      expect(res.status, JSON.stringify(res.body)).to.equal(429);
      const retryAfter = res.headers.get("retry-after");
      expect(retryAfter).to.match(/^\d+$/);
      expect(Number(retryAfter))
        .to.be.greaterThan(0)
        .and.at.most(24 * 3600);
      expect(res.body.error.code).to.match(/COOLDOWN/);
      expect(res.body.message).to.match(/cooldown|claimed recently|claim again/i);
      expect(res.body.message).to.include(first.body.cooldownEndsAt);

      // without a key (x402): the cooldown is checked before any payment is taken
      const paidAttempt = await claim(api, recipient, randomUUID());
      expect(paidAttempt.status, JSON.stringify(paidAttempt.body)).to.equal(429);
      expect(Number(paidAttempt.headers.get("retry-after"))).to.be.greaterThan(0);

      expect(await bkn().balanceOf(recipient)).to.equal(HUNDRED_BKN);
      expect(await usdcBalances()).to.deep.equal(before);
      expect(await service.services.credits.balances(key.id)).to.deep.equal(credits);
    });

    it("a key and a payment header together: the key pays (a faucet credit), no USDC moves", async () => {
      const recipientB = Wallet.createRandom().address;
      const quote = quoteOf(await claim(api, recipientB)).accepts[0];
      const credits = await service.services.credits.balances(key.id);
      const before = await usdcBalances();
      const res = await claim(key.client, recipientB, randomUUID(), { "X-PAYMENT": await payWithEthers(payer, quote) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers.get("payment-response")).to.equal(null);
      expect(await usdcBalances()).to.deep.equal(before);
      expect((await service.services.credits.balances(key.id)).faucet).to.equal(credits.faucet - 1);
    });
  });

  it("a key has 10 lifetime claims: the 11th answers 403 'Out of credits for faucet'; mintToken credits are untouched", async () => {
    const key = await newKey("lifetime@faucet.test");
    const initial = await service.services.credits.balances(key.id);
    expect(initial.faucet).to.equal(10);
    const before = await usdcBalances();
    for (let i = 0; i < 10; i++) {
      const recipient = Wallet.createRandom().address;
      const res = await claim(key.client, recipient);
      expect(res.status, `claim ${i + 1}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect(res.body.status).to.equal("confirmed");
    }
    const eleventh = Wallet.createRandom().address;
    const res = await claim(key.client, eleventh);
    expect(res.status, JSON.stringify(res.body)).to.equal(403);
    expect(res.body.message).to.equal("Out of credits for faucet");
    expect(await bkn().balanceOf(eleventh)).to.equal(0n);
    const after = await service.services.credits.balances(key.id);
    expect(after.faucet).to.equal(0);
    expect(after.mintToken).to.equal(initial.mintToken);
    expect({ ...after, faucet: initial.faucet }).to.deep.equal(initial);
    expect(await usdcBalances()).to.deep.equal(before);
  });

  describe("with x402 (no key)", () => {
    it("without payment → 402 quoting 10000 base units for routeKey POST /faucet/bkn; nothing minted", async () => {
      const recipient = Wallet.createRandom().address;
      const before = await usdcBalances();
      const res = await claim(api, recipient);
      const quote = quoteOf(res);
      expect(res.body.error.code).to.equal("PAYMENT_REQUIRED");
      expect(quote.x402Version).to.equal(2);
      expect(quote.accepts[0]).to.include({
        scheme: "exact",
        network: "eip155:84532",
        asset: sandbox.deployments[84532].contracts.USDC,
        amount: "10000",
        payTo,
      });
      expect(quote.accepts[0].extra).to.include({
        routeKey: "POST /faucet/bkn",
        name: "USDC",
        version: "2",
        assetTransferMethod: "eip3009",
        displayPrice: "0.01 USDC",
      });
      expect(await bkn().balanceOf(recipient)).to.equal(0n);
      expect(await usdcBalances()).to.deep.equal(before);
    });

    it("paid → 200 with PAYMENT-RESPONSE (success); exactly 10000 moves from the payer to the payee; 100 BKN minted", async () => {
      const recipient = Wallet.createRandom().address;
      const idempotencyKey = randomUUID();
      const quote = quoteOf(await claim(api, recipient, idempotencyKey)).accepts[0];
      const before = await usdcBalances();
      const res = await claim(api, recipient, idempotencyKey, { "X-PAYMENT": await payWithEthers(payer, quote) });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({
        status: "confirmed",
        chainId: "11155111",
        amount: "100",
        amountRaw: "100000000000000000000",
      });
      const settlement = decodePaymentResponse(res);
      expect(settlement, "PAYMENT-RESPONSE").to.be.an("object");
      expect(settlement).to.include({ success: true, network: "eip155:84532" });
      expect(settlement.payer.toLowerCase()).to.equal(payer.address.toLowerCase());
      const after = await usdcBalances();
      expect(before.payer - after.payer).to.equal(PRICE);
      expect(after.payTo - before.payTo).to.equal(PRICE);
      expect(await bkn().balanceOf(recipient)).to.equal(HUNDRED_BKN);

      // the paid claim replays by its Idempotency-Key without paying again
      const replay = await claim(api, recipient, idempotencyKey);
      expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
      expect(replay.body.claimId).to.equal(res.body.claimId);
      expect(await usdcBalances()).to.deep.equal(after);
    });
  });

  describe("production deployment", () => {
    let production: TestService;
    before(async () => {
      production = await startTestService(sandbox, { env: { ENVIRONMENT: "production", X402_ENABLED: "false" } });
    });
    after(async () => production?.stop());

    it("POST /faucet/bkn → 404 (the faucet exists only in the sandbox)", async () => {
      const recipient = Wallet.createRandom().address;
      const res = await claim(production.api, recipient);
      expect(res.status, JSON.stringify(res.body)).to.equal(404);
      const withPayment = await claim(production.api, recipient, randomUUID(), { "X-PAYMENT": "anything" });
      expect(withPayment.status).to.equal(404);
      expect(await bkn().balanceOf(recipient)).to.equal(0n);
      const discovery = await production.api.get("/.well-known/x402");
      expect(discovery.status).to.equal(200);
      expect((discovery.body.resources ?? []).some((r: { resource: string }) => /faucet/.test(r.resource))).to.equal(
        false,
      );
    });
  });
});
