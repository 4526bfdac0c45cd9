import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet, parseEther, parseUnits, zeroPadValue } from "ethers";
import { BKN__factory, USDC__factory } from "../../typechain-types";
import { MULTICALL3_ADDRESS } from "../../service/chains/networks";
import { getSandbox, providerFor, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * A payment on another chain than its operation cannot ride in the operation's transaction: faucet claims mint on
 * Sepolia (11155111) and are paid on Base Sepolia (84532). Such payments are gathered and settled together, one
 * transaction of the settlement wallet (Multicall3's aggregate3, each payment's transferWithAuthorization allowed to
 * fail alone) per batch; each payment's verdict is read from that transaction's receipt.
 */

const PRICE = 10_000n;
const GATHER_MS = 2_000;

describe("e2e: payments settled in batches (a payment on another chain than its operation)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let payTo: string;
  let ip = 1;

  const usdc = () => USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const claimQuote = async () =>
    quoteOf(
      await api.post(
        "/faucet/bkn",
        { recipientAddress: Wallet.createRandom().address },
        { "Idempotency-Key": randomUUID() },
      ),
    ).accepts[0];
  /** A paid faucet claim; answers its payment once it is settled or released. */
  const paidClaim = async (payer: Wallet, quote: Awaited<ReturnType<typeof claimQuote>>) => {
    const idempotencyKey = randomUUID();
    const res = await api.post(
      "/faucet/bkn",
      { recipientAddress: Wallet.createRandom().address },
      {
        "Idempotency-Key": idempotencyKey,
        "X-PAYMENT": await payWithEthers(payer, quote),
        "x-forwarded-for": `10.9.0.${ip++ % 250}`,
      },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const payment = await service.services.payments.bySubject(`faucet:${idempotencyKey}`);
      if (payment?.status === "settled" || payment?.status === "released") return payment;
    }
    throw new Error(`the payment of claim ${idempotencyKey} neither settled nor released`);
  };
  const authorizationUsedIn = async (hash: string, payer: string, nonce: string) => {
    const receipt = (await providerFor(sandbox.baseSepolia).getTransactionReceipt(hash))!;
    const topic = USDC__factory.createInterface().getEvent("AuthorizationUsed").topicHash;
    return receipt.logs.some(
      (l) =>
        l.topics[0] === topic &&
        l.topics[1] === zeroPadValue(payer.toLowerCase(), 32) &&
        l.topics[2] === nonce.toLowerCase(),
    );
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox, { env: { X402_SETTLEMENT_BATCH_MS: String(GATHER_MS) } });
    api = service.api;
    payTo = sandbox.accounts[SETTLEMENT_INDEX].address;
  });
  after(async () => service?.stop());

  it("payments made together share settlement transactions (Multicall3): 5 in at most 2; each charged once, each naming its transaction", async () => {
    const payer = sandbox.accounts[2];
    const quote = await claimQuote();
    const before = { payer: await usdc().balanceOf(payer.address), payTo: await usdc().balanceOf(payTo) };
    // The payment chain holds its blocks: the first settlement goes at once (nothing went out for GATHER_MS) and waits
    // in the pool; the others, coming meanwhile, are gathered and go together GATHER_MS after it. (On a chain that
    // mines at once, the next batch leaves as soon as the previous one is mined.)
    const base = sandbox.baseSepolia.provider;
    await base.request({ method: "evm_setAutomine", params: [false] });
    let claims: Promise<Awaited<ReturnType<typeof paidClaim>>[]>;
    try {
      claims = Promise.all(Array.from({ length: 5 }, () => paidClaim(payer, quote)));
      await new Promise((r) => setTimeout(r, GATHER_MS + 1_500));
    } finally {
      await base.request({ method: "evm_setAutomine", params: [true] });
      await base.request({ method: "evm_mine", params: [] });
    }
    const payments = await claims;
    expect(payments.map((p) => p.status)).to.deep.equal(Array(5).fill("settled"));
    const carried = new Map<string, number>();
    for (const p of payments) carried.set(p.settlement.transaction, (carried.get(p.settlement.transaction) ?? 0) + 1);
    expect(carried.size, `5 payments in ${JSON.stringify([...carried])}`).to.be.at.most(2);
    for (const p of payments) {
      expect(p.settleTxHash).to.equal(p.settlement.transaction);
      expect(await authorizationUsedIn(p.settlement.transaction, p.payer, p.authorizationNonce), p.id).to.equal(true);
      const tx = await providerFor(sandbox.baseSepolia).getTransaction(p.settlement.transaction);
      expect(tx!.to).to.equal(MULTICALL3_ADDRESS);
    }
    expect(before.payer - (await usdc().balanceOf(payer.address))).to.equal(5n * PRICE);
    expect((await usdc().balanceOf(payTo)) - before.payTo).to.equal(5n * PRICE);
  });

  it("a payment whose payer moved its USDC after it was accepted is released alone (nothing charged, its claim mints nothing); the rest of its batch is settled", async () => {
    // A payer holding one price: its payment verifies and is accepted; while the settlement waits in the pool, the
    // payer sends the USDC elsewhere with a higher tip (mined first in the same block).
    const poor = new Wallet(Wallet.createRandom().privateKey, providerFor(sandbox.baseSepolia));
    const funder = sandbox.accounts[3].connect(providerFor(sandbox.baseSepolia));
    await (await funder.sendTransaction({ to: poor.address, value: parseEther("1") })).wait();
    await (
      await USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, funder).transfer(poor.address, PRICE)
    ).wait();
    const quote = await claimQuote();
    const beforePayTo = await usdc().balanceOf(payTo);
    const bkn = BKN__factory.connect(sandbox.deployments[11155111].contracts.BKN, providerFor(sandbox.sepolia));
    const [poorRecipient, richRecipient] = [Wallet.createRandom().address, Wallet.createRandom().address];
    const base = sandbox.baseSepolia.provider;
    await base.request({ method: "evm_setAutomine", params: [false] });
    let outcomes: Promise<[any, any]>;
    try {
      outcomes = Promise.all([
        claimFor(poor, quote, poorRecipient),
        claimFor(sandbox.accounts[2], quote, richRecipient),
      ]);
      await untilBothSettling(poor.address, sandbox.accounts[2].address);
      const fees = await providerFor(sandbox.baseSepolia).getFeeData();
      // No estimate: on the pending block (with the settlement in it) the payer has nothing left to send.
      await USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, poor).transfer(funder.address, PRICE, {
        gasLimit: 100_000n,
        maxPriorityFeePerGas: fees.maxFeePerGas! * 2n,
        maxFeePerGas: fees.maxFeePerGas! * 4n,
      });
    } finally {
      await base.request({ method: "evm_setAutomine", params: [true] });
      await base.request({ method: "evm_mine", params: [] });
    }
    const [poorClaim, richClaim] = await outcomes;
    expect(richClaim.payment.status).to.equal("settled");
    expect(poorClaim.payment.status).to.equal("released");
    expect(poorClaim.payment.releaseReason).to.match(/can no longer be used/);
    expect(poorClaim.payment.payload, "an ended payment holds no authorization").to.equal(null);
    expect(poorClaim.claim.status, JSON.stringify(poorClaim.claim)).to.equal("failed");
    expect(poorClaim.claim.error).to.match(/the payment could not be settled.*nothing was sent/);
    expect(await bkn.balanceOf(poorRecipient), "the unpaid claim minted nothing").to.equal(0n);
    expect(await bkn.balanceOf(richRecipient)).to.equal(parseUnits("100", 18));
    expect((await usdc().balanceOf(payTo)) - beforePayTo).to.equal(PRICE);
  });

  /** A claim for `recipient`, followed until its payment and the claim ended. */
  async function claimFor(payer: Wallet, quote: Awaited<ReturnType<typeof claimQuote>>, recipient: string) {
    const idempotencyKey = randomUUID();
    const res = await api.post(
      "/faucet/bkn",
      { recipientAddress: recipient },
      {
        "Idempotency-Key": idempotencyKey,
        "X-PAYMENT": await payWithEthers(payer, quote),
        "x-forwarded-for": `10.9.1.${ip++ % 250}`,
      },
    );
    expect([200, 202], JSON.stringify(res.body)).to.include(res.status);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const claim = (await api.get("/get-transaction-status", { txId: res.body.txId })).body;
      const payment = await service.services.payments.bySubject(`faucet:${idempotencyKey}`);
      if ((payment?.status === "settled" || payment?.status === "released") && claim.status !== "pending") {
        return { payment, claim: { status: claim.status === "success" ? "confirmed" : "failed", error: claim.error } };
      }
    }
    throw new Error(`claim ${idempotencyKey} did not end`);
  }

  /** Until both payers' payments are in a settlement transaction in the pool. */
  async function untilBothSettling(...payers: string[]) {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const rows = await service.services.db.query<{ payer: string }>(
        "SELECT payer FROM payments WHERE status = 'settling' AND settle_tx_hash IS NOT NULL",
      );
      if (payers.every((p) => rows.some((r) => r.payer === p.toLowerCase()))) return;
    }
    throw new Error("the payments were not sent for settlement");
  }
});
