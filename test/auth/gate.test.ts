import { randomBytes } from "node:crypto";
import type { PaymentRequirements } from "@x402/core/types";
import { expect } from "chai";
import {
  admitPrepare,
  admitSend,
  chargePrepare,
  chargeSend,
  requireKeyOf,
  type Caller,
  type GateServices,
} from "../../service/auth/gate";
import {
  KEY_MISSING_FROM_HEADERS,
  KEY_REQUIRED_FOR_ENDPOINT,
  KEY_REQUIRED_FOR_METHOD,
} from "../../service/auth/api-key";
import { ACCESS } from "../../service/auth/access-rules";
import { loadConfig } from "../../service/config";
import { ApiError } from "../../service/errors";
import { findMethod } from "../../service/methods";
import type { MethodDefinition } from "../../service/methods/types";
import type { Batch } from "../../service/model/batch";
import { PaymentRequired, X402Unavailable } from "../../service/payments/payment-errors";
import { RELAYED_NEEDS_X402, X402, X402_DISABLED, X402_DISABLED_ON_CHAIN } from "../../service/payments/x402";
import type { ApiKeyRecord } from "../../service/store/api-keys";
import type { RequestFacts } from "../../service/wire/request";
import { fakePaymentCore, PAYMENT_CHAIN_ID } from "../fakes/payment-core";
import { FakePrices } from "../fakes/prices";

/**
 * The access gate's decisions (service/auth/gate.ts): who may call, who pays, what is refused before any payment is
 * asked for or held. The x402 gate (payments/x402.ts) runs for real on the in-memory payment stores and a scripted
 * facilitator (test/fakes/); no service, database or chain.
 */
describe("access gate (in-memory payments)", () => {
  const SECRETS = { ADMIN_TOKEN: "a".repeat(24), DATA_ENCRYPTION_KEY: "k".repeat(32) };
  const OTHER_CHAIN = 11155111;
  const method = (name: string): MethodDefinition => findMethod(name)!;
  const keyOnly = method("whitelist"); // key required, metered
  const relayable = method("agentRegister"); // key optional, relayable, not metered
  const neverRelayed = method("agentMintToken"); // key optional, not relayable
  const key = (id = randomBytes(8).toString("hex")): ApiKeyRecord => ({
    id,
    email: `${id}@example.com`,
    plan: "Starter",
    createdAt: new Date().toISOString(),
    revokedAt: null,
  });
  const req: RequestFacts = {
    header: (name) => (name.toLowerCase() === "host" ? "api.example.com" : undefined),
    protocol: "https",
    host: "api.example.com",
    hostname: "api.example.com",
    method: "POST",
    path: "/prepare-transactions",
    originalUrl: "/prepare-transactions",
  };

  /** The gate's services with x402 on (unless `x402: false`), on the fakes; `env` adds configuration. */
  function gate(options: { x402?: boolean; env?: Record<string, string> } = {}) {
    const core = fakePaymentCore();
    const config = loadConfig({ ...SECRETS, ...options.env });
    const x402 = new X402({ payments: core.stores.payments, config }, core.terms, core.settler, core.log);
    const services: GateServices = {
      config,
      x402: options.x402 === false ? undefined : x402,
      prices: new FakePrices(config.ENVIRONMENT),
      // Keys are read by identify() alone, which these cases do not call: any use fails the test.
      apiKeys: {} as GateServices["apiKeys"],
    };
    return { core, x402, services };
  }

  /** The quote of agentRegister's prepare share (5,000) for batch `txId`. */
  const prepareQuote = (x402: X402, txId: string) =>
    x402.requirements({
      subject: `prepare:${txId}`,
      routeKey: "POST /prepare-transactions",
      amount: 5_000n,
      resourceUrl: "https://api.example.com/prepare-transactions",
      description: "agentRegister: prepare",
    });

  /** A payment header paying exactly `quote` from `payer`, as a client would send it (its signature left out: the facilitator is scripted). */
  const paying = (quote: PaymentRequirements, payer = "0x" + randomBytes(20).toString("hex")) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      x402Version: 2,
      accepted: {
        scheme: quote.scheme,
        network: quote.network,
        asset: quote.asset,
        amount: quote.amount,
        payTo: quote.payTo,
      },
      payload: {
        authorization: {
          from: payer,
          to: quote.payTo,
          value: quote.amount,
          validAfter: String(now - 60),
          validBefore: String(now + 300),
          nonce: "0x" + randomBytes(32).toString("hex"),
        },
      },
    };
    return Buffer.from(JSON.stringify(payload)).toString("base64");
  };

  const refusal = async (call: () => unknown): Promise<Error> => {
    try {
      await call();
    } catch (error) {
      return error as Error;
    }
    throw new Error("not refused");
  };
  const apiError = async (call: () => unknown, status: number, message?: string | RegExp) => {
    const error = await refusal(call);
    expect(error).to.be.instanceOf(ApiError);
    expect((error as ApiError).status).to.equal(status);
    if (typeof message === "string") expect(error.message).to.equal(message);
    else if (message) expect(error.message).to.match(message);
  };

  describe("who may call", () => {
    it("a rule that requires a key refuses a caller without one, in the words that endpoint's clients expect", async () => {
      await apiError(() => requireKeyOf({}, ACCESS.keyEndpoint), 401, KEY_REQUIRED_FOR_ENDPOINT);
      await apiError(() => requireKeyOf({}, ACCESS.keyMethod), 401, KEY_REQUIRED_FOR_METHOD);
      await apiError(() => requireKeyOf({}, ACCESS.keyHeaders), 400, KEY_MISSING_FROM_HEADERS);
      const caller = { apiKey: key() };
      expect(requireKeyOf(caller, ACCESS.keyEndpoint)).to.equal(caller);
      expect(requireKeyOf({}, ACCESS.agenticWrite)).to.deep.equal({});
    });
  });

  describe("prepare: who pays (admitPrepare, chargePrepare)", () => {
    it("a method that needs a key is never relayed, and is free of x402 with its key", async () => {
      const { services } = gate();
      await apiError(
        () => admitPrepare(services, { apiKey: key() }, keyOnly, "service-relayed", PAYMENT_CHAIN_ID),
        400,
        /cannot be service-relayed: the token holder/,
      );
      const caller = { apiKey: key() };
      expect(await admitPrepare(services, caller, keyOnly, "client-signed", PAYMENT_CHAIN_ID)).to.equal(caller);
    });

    it("a method never relayed says so whatever the credential; a relayed one refuses a key", async () => {
      const { services } = gate();
      for (const caller of [{}, { apiKey: key() }] as Caller[])
        await apiError(
          () => admitPrepare(services, caller, neverRelayed, "service-relayed", PAYMENT_CHAIN_ID),
          400,
          /its signer must be the wallet that holds the rights/,
        );
      await apiError(
        () => admitPrepare(services, { apiKey: key() }, relayable, "service-relayed", PAYMENT_CHAIN_ID),
        400,
        RELAYED_NEEDS_X402,
      );
    });

    it("with a key: the key pays (no x402); without one: x402 at the method's price, or a 401 where x402 is off", async () => {
      const { services, x402 } = gate({
        env: { X402_DISABLED_CHAINS: String(OTHER_CHAIN), [`RPC_URL_${OTHER_CHAIN}`]: "http://127.0.0.1:9" },
      });
      const caller = { apiKey: key() };
      expect(await admitPrepare(services, caller, relayable, "client-signed", PAYMENT_CHAIN_ID)).to.equal(caller);
      const access = await admitPrepare(services, {}, relayable, "client-signed", PAYMENT_CHAIN_ID);
      expect(access.x402).to.equal(x402);
      expect(access.price).to.equal(10_000n);
      const offOnChain = await refusal(() => admitPrepare(services, {}, relayable, "client-signed", OTHER_CHAIN));
      expect(offOnChain).to.be.instanceOf(X402Unavailable);
      expect(offOnChain.message).to.equal(X402_DISABLED_ON_CHAIN);
      const off = gate({ x402: false });
      const disabled = await refusal(() =>
        admitPrepare(off.services, {}, relayable, "client-signed", PAYMENT_CHAIN_ID),
      );
      expect(disabled).to.be.instanceOf(X402Unavailable);
      expect(disabled.message).to.equal(X402_DISABLED);
    });

    it("without a payment: a 402 with the prepare share's quote, before anything is stored or held", async () => {
      const { services, core } = gate();
      const access = await admitPrepare(services, {}, relayable, "client-signed", PAYMENT_CHAIN_ID);
      let stored = false;
      const txId = randomBytes(16).toString("hex");
      const error = await refusal(() =>
        chargePrepare(services, req, undefined, access, { method: relayable, mode: "client-signed", txId }, () => {
          stored = true;
          return Promise.resolve({ txId });
        }),
      );
      expect(error).to.be.instanceOf(PaymentRequired);
      const quote = (error as PaymentRequired).quote;
      expect(quote.accepts[0]).to.deep.include({ amount: "5000", network: `eip155:${PAYMENT_CHAIN_ID}` });
      expect(stored).to.equal(false);
      expect(await core.stores.payments.forBatch(txId)).to.deep.equal([]);
    });

    it("paid: the prepare share reserved, the batch stored, settled before the answer, which quotes the send share", async () => {
      const { services, core, x402 } = gate();
      const access = await admitPrepare(services, {}, relayable, "client-signed", PAYMENT_CHAIN_ID);
      const txId = randomBytes(16).toString("hex");
      const quote = prepareQuote(x402, txId);
      const answer = await chargePrepare(
        services,
        req,
        paying(quote),
        access,
        { method: relayable, mode: "client-signed", txId },
        () => Promise.resolve({ txId }),
      );
      expect(answer.settlement).to.deep.include({ success: true });
      expect(answer.body.x402Requirements).to.deep.include({ amount: "5000" });
      expect(answer.body.x402Requirements!.extra).to.deep.include({ routeKey: "POST /send-transactions" });
      const [payment] = await core.stores.payments.forBatch(txId);
      expect(payment).to.deep.include({ subject: `prepare:${txId}`, status: "settled", amount: "5000" });
    });

    it("a batch that cannot be stored releases its prepare share: nothing charged", async () => {
      const { services, core, x402 } = gate();
      const access = await admitPrepare(services, {}, relayable, "client-signed", PAYMENT_CHAIN_ID);
      const txId = randomBytes(16).toString("hex");
      const quote = prepareQuote(x402, txId);
      const error = await refusal(() =>
        chargePrepare(services, req, paying(quote), access, { method: relayable, mode: "client-signed", txId }, () =>
          Promise.reject(new Error("disk full")),
        ),
      );
      expect(error.message).to.equal("disk full");
      const [payment] = await core.stores.payments.forBatch(txId);
      expect(payment).to.deep.include({ status: "released", releaseReason: "prepare failed: disk full" });
      expect(core.facilitator.asked).to.deep.equal([]);
    });

    it("relayed: the prepare is free (nothing asked) and the send quote is the whole price", async () => {
      const { services, core } = gate();
      const access = await admitPrepare(services, {}, relayable, "service-relayed", PAYMENT_CHAIN_ID);
      const txId = randomBytes(16).toString("hex");
      const answer = await chargePrepare(
        services,
        req,
        undefined,
        access,
        { method: relayable, mode: "service-relayed", txId },
        () => Promise.resolve({ txId }),
      );
      expect(answer.settlement).to.equal(undefined);
      expect(answer.body.x402Requirements).to.deep.include({ amount: "10000" });
      expect(await core.stores.payments.forBatch(txId)).to.deep.equal([]);
    });
  });

  describe("send: who pays (admitSend, chargeSend)", () => {
    const batch = (over: Partial<Batch>): Batch => ({
      txId: randomBytes(16).toString("hex"),
      chainId: PAYMENT_CHAIN_ID,
      method: "agentRegister",
      executionMode: "client-signed",
      signer: "0x" + "c0".repeat(20),
      apiKeyId: null,
      status: "prepared",
      body: {},
      plan: {},
      info: {},
      failedIndex: null,
      error: null,
      outcome: null,
      createdAt: new Date().toISOString(),
      transactions: [],
      ...over,
    });

    it("a relayed batch refuses a key and is paid with x402", async () => {
      const { services, x402 } = gate();
      const relayed = batch({ executionMode: "service-relayed" });
      await apiError(() => admitSend(services, { apiKey: key() }, relayed, relayable), 400, RELAYED_NEEDS_X402);
      expect(admitSend(services, {}, relayed, relayable)).to.deep.equal({ x402 });
    });

    it("a batch prepared under a key needs that key (401 without, 403 with another); a metered method spends its credit", async () => {
      const { services } = gate();
      const owner = key();
      const underKey = batch({ apiKeyId: owner.id, method: "whitelist" });
      await apiError(() => admitSend(services, {}, underKey, keyOnly), 401, KEY_REQUIRED_FOR_METHOD);
      await apiError(() => admitSend(services, { apiKey: key() }, underKey, keyOnly), 403, /another API key/);
      expect(admitSend(services, { apiKey: owner }, underKey, keyOnly)).to.deep.equal({
        apiKey: owner,
        creditKeyId: owner.id,
      });
      const free = batch({ apiKeyId: owner.id });
      expect(admitSend(services, { apiKey: owner }, free, relayable)).to.deep.equal({
        apiKey: owner,
        creditKeyId: undefined,
      });
    });

    it("a batch prepared without a key: a key presented pays; else x402 for an optional-key method", async () => {
      const { services, x402 } = gate();
      const caller = { apiKey: key() };
      expect(admitSend(services, caller, batch({}), relayable)).to.deep.equal({ apiKey: caller.apiKey });
      expect(admitSend(services, {}, batch({}), relayable)).to.deep.equal({ x402 });
      expect(admitSend(services, {}, batch({ method: "whitelist" }), keyOnly)).to.deep.equal({});
      const off = gate({ x402: false });
      expect(await refusal(() => admitSend(off.services, {}, batch({}), relayable))).to.be.instanceOf(X402Unavailable);
    });

    it("the send share is reserved from the payment; a wrong payer is refused before anything is held", async () => {
      const { services, core, x402 } = gate();
      const b = batch({});
      const quote = x402.requirements({
        subject: `send:${b.txId}`,
        routeKey: "POST /send-transactions",
        amount: 5_000n,
        resourceUrl: "https://api.example.com/send-transactions",
        description: "agentRegister: send",
      });
      const access = admitSend(services, {}, b, relayable);
      const wrongPayer = await refusal(() =>
        chargeSend(services, req, paying(quote), access, b, relayable, () => {
          throw new ApiError("FORBIDDEN", "not the signer");
        }),
      );
      expect((wrongPayer as ApiError).status).to.equal(403);
      expect(await core.stores.payments.forBatch(b.txId)).to.deep.equal([]);
      const reserved = await chargeSend(services, req, paying(quote), access, b, relayable);
      expect(reserved).to.deep.include({ subject: `send:${b.txId}`, status: "reserved", amount: "5000", txId: b.txId });
      const twice = await refusal(() => chargeSend(services, req, paying(quote), access, b, relayable));
      expect(twice.name).to.equal("AlreadyPaid");
      expect(await chargeSend(services, req, undefined, { apiKey: key() }, b, relayable)).to.equal(undefined);
    });
  });
});
