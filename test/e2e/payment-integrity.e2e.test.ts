// tier: e2e
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet, parseEther, parseUnits, type JsonRpcProvider } from "ethers";
import { AgentMandate__factory, BKN__factory, PaidRelayDelegate__factory, USDC__factory } from "../../typechain-types";
import { distinctClient } from "../helpers/relayed";
import { createOwnSandbox, providerFor, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { decodePaymentResponse, payWithEthers, quoteOf, type Requirements } from "../helpers/x402";

/**
 * Paid work is never given away, whatever the payer does after the quote. Each case is tried as a payer who wants the
 * work for free would try it, through the HTTP API, on chains that mine a block every second (the payment chain is
 * held still where a case needs an order of events).
 */

const BLOCK_TIME = 1;
const PRICE = 10_000n; // 0.01 USDC: a write, a faucet claim
const READ_PRICE = 1_000n; // 0.001 USDC: a RAMS read
const SEPOLIA = 11155111;
const BASE = 84532;

describe(`e2e: payment integrity (chains mining every ${BLOCK_TIME} s)`, function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let base: JsonRpcProvider;
  let sepolia: JsonRpcProvider;
  let funder: Wallet;
  const relayer = () => sandbox.accounts[RELAYER_INDEX].address;
  const payTo = () => sandbox.accounts[SETTLEMENT_INDEX].address;

  const usdc = () => USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, base);
  const bkn = () => BKN__factory.connect(sandbox.deployments[SEPOLIA].contracts.BKN, sepolia);
  /** A new payer holding exactly `amount` USDC on the payment chain (and some ETH, to move it). */
  const payerWith = async (amount: bigint): Promise<Wallet> => {
    const payer = new Wallet(Wallet.createRandom().privateKey, base);
    const from = funder.connect(base);
    await (await from.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
    await (
      await USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, from).transfer(payer.address, amount)
    ).wait();
    return payer;
  };
  /** Holds the payment chain still (no blocks) while `during` runs; it mines again after. */
  const holdingBase = async <T>(during: () => Promise<T>): Promise<T> => {
    await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [0] });
    try {
      return await during();
    } finally {
      await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [BLOCK_TIME * 1000] });
    }
  };
  const until = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100)))
      if (await check()) return;
    throw new Error(`timed out waiting for ${what}`);
  };
  const statusOf = async (txId: string) => (await api.get("/get-transaction-status", { txId })).body;
  const ended = async (txId: string) => {
    await until(`batch ${txId} to end`, async () => ["success", "rejected"].includes((await statusOf(txId)).status));
    return statusOf(txId);
  };
  /** The relayer's nonce and ETH on a chain: what it spent. */
  const relayerFacts = async (provider: JsonRpcProvider) => ({
    nonce: await provider.getTransactionCount(relayer(), "latest"),
    eth: await provider.getBalance(relayer()),
  });

  const faucetQuote = async () =>
    quoteOf(
      await api.post(
        "/faucet/bkn",
        { recipientAddress: Wallet.createRandom().address },
        { "Idempotency-Key": randomUUID() },
      ),
    ).accepts[0];
  const claim = async (
    payer: Wallet,
    quote: Requirements,
    recipient: string,
    overrides: Parameters<typeof payWithEthers>[2] = {},
  ) =>
    api.post(
      "/faucet/bkn",
      { recipientAddress: recipient },
      {
        "Idempotency-Key": randomUUID(),
        "X-PAYMENT": await payWithEthers(payer, quote, overrides),
        ...distinctClient(),
      },
    );
  const paymentOfClaim = async (txId: string) => (await service.services.payments.forBatch(txId))[0];

  /** A relayed agentCreateToken (Base Sepolia: its payment rides in its transaction) and its send quote. */
  const relayedToken = async (symbol: string) => {
    const res = await api.post(
      "/x402/token/create",
      { chainId: "84532", name: `Agent ${symbol}`, symbol, agentWallet: sandbox.accounts[6].address },
      distinctClient(),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const quote = quoteOf(await api.post("/send-transactions", { txId: res.body.txId })).accepts[0];
    return { txId: res.body.txId as string, quote };
  };

  /** A relayed RAMS set-operator (Sepolia: paid on Base Sepolia, so its payment is settled first), signed by `principal`. */
  const relayedSetOperator = async (principal: Wallet, operator: string) => {
    const typed = (
      await keyed.get("/rams/typed-data/set-operator", {
        chainId: "aa36a7",
        principal: principal.address,
        operator,
        approved: "true",
      })
    ).body.data;
    const signature = await principal.signTypedData(
      typed.typedData.domain,
      typed.typedData.types,
      typed.typedData.message,
    );
    const prepare = () =>
      api.post(
        "/x402/rams/set-operator",
        {
          chainId: "aa36a7",
          principal: principal.address,
          operator,
          approved: "true",
          signature,
          deadline: typed.deadline,
          executionMode: "service-relayed",
        },
        distinctClient(),
      );
    return { prepare };
  };
  const mandates = () => AgentMandate__factory.connect(sandbox.deployments[SEPOLIA].contracts.AgentMandate, sepolia);
  const sendRelayed = async (txId: string, payer: Wallet) => {
    const quote = quoteOf(await api.post("/send-transactions", { txId })).accepts[0];
    return api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(payer, quote) });
  };

  before(async () => {
    sandbox = await createOwnSandbox({ blockTime: BLOCK_TIME });
    service = await startTestService(sandbox, { env: { SEND_WAIT_MS: "30000", X402_SETTLEMENT_BATCH_MS: "250" } });
    api = service.api;
    base = providerFor(sandbox.baseSepolia);
    sepolia = providerFor(sandbox.sepolia);
    funder = sandbox.accounts[3];
    const { key } = await service.services.apiKeys.create({ email: "ops@integrity.test", plan: "Enterprise" });
    keyed = api.withKey(key);
  });
  after(async () => {
    await service?.stop();
    base?.destroy();
    sepolia?.destroy();
    await sandbox?.close();
  });

  it("an authorization too short for its settlement (8 s) is refused with a 402 naming the validBefore it needs; nothing is done", async () => {
    const payer = await payerWith(PRICE);
    const recipient = Wallet.createRandom().address;
    const now = Math.floor(Date.now() / 1000);
    const res = await claim(payer, await faucetQuote(), recipient, { validBefore: now + 8 });
    expect(res.status, JSON.stringify(res.body)).to.equal(402);
    expect(res.body.error.message).to.match(
      /expires too soon: validBefore \d+ leaves \d+ s, and this payment needs \d+ s .*validBefore ≥ (\d+)/,
    );
    expect(res.body.error.details.requiredValidBefore).to.be.at.least(now + 30);
    expect(await usdc().balanceOf(payer.address)).to.equal(PRICE);
    expect(await bkn().balanceOf(recipient)).to.equal(0n);
  });

  it("USDC moved away right after a faucet claim was accepted: the claim never mints, nothing is charged, the relayer spends nothing", async () => {
    const payer = await payerWith(PRICE);
    const recipient = Wallet.createRandom().address;
    const quote = await faucetQuote();
    const before = await relayerFacts(sepolia);
    const { sending } = await holdingBase(async () => {
      const sending = claim(payer, quote, recipient);
      await until(
        "the claim's settlement in the pool",
        async () =>
          (
            await service.services.db.query("SELECT 1 FROM payments WHERE payer = $1 AND settle_tx_hash IS NOT NULL", [
              payer.address.toLowerCase(),
            ])
          ).length > 0,
      );
      await moveAway(payer);
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      return { sending };
    });
    const res = await sending;
    expect([200, 202]).to.include(res.status);
    const batch = await ended(res.body.txId);
    expect(batch.status).to.equal("rejected");
    expect(batch.error).to.match(/the payment could not be settled: .*; nothing was sent/);
    expect((await paymentOfClaim(res.body.txId)).status).to.equal("released");
    expect(await bkn().balanceOf(recipient), "no mint without its payment").to.equal(0n);
    expect(await relayerFacts(sepolia)).to.deep.equal(before);
  });

  it("USDC moved away right after a relayed RAMS operation was accepted: the operation never runs, nothing is charged, the relayer spends nothing", async () => {
    const payer = await payerWith(PRICE);
    const principal = new Wallet(Wallet.createRandom().privateKey);
    const operator = Wallet.createRandom().address;
    const prepared = await (await relayedSetOperator(principal, operator)).prepare();
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const txId = prepared.body.data.txId;
    const quote = quoteOf(await api.post("/send-transactions", { txId })).accepts[0];
    const before = await relayerFacts(sepolia);
    const { sending } = await holdingBase(async () => {
      const sending = api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(payer, quote) });
      await until(
        "the operation's settlement in the pool",
        async () => (await service.services.payments.forBatch(txId))[0]?.settleTxHash !== null,
      );
      await moveAway(payer);
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      return { sending };
    });
    expect([200, 202]).to.include((await sending).status);
    const batch = await ended(txId);
    expect(batch.status).to.equal("rejected");
    expect((await service.services.payments.forBatch(txId))[0].status).to.equal("released");
    expect(await mandates().isOperator(principal.address, operator), "the operation did not run").to.equal(false);
    expect(await relayerFacts(sepolia)).to.deep.equal(before);
    expect(await usdc().balanceOf(payTo())).to.be.greaterThan(0n);
  });

  it("four authorisations for a balance of one price, sent at once: one faucet claim is paid and done, three get 402 naming the shortfall", async () => {
    const payer = await payerWith(PRICE);
    const quote = await faucetQuote();
    const recipients = [0, 1, 2, 3].map(() => Wallet.createRandom().address);
    const answers = await Promise.all(recipients.map((r) => claim(payer, quote, r)));
    const accepted = answers.filter((a) => a.status === 200 || a.status === 202);
    const refused = answers.filter((a) => a.status === 402);
    expect(accepted, JSON.stringify(answers.map((a) => a.body))).to.have.length(1);
    expect(refused).to.have.length(3);
    for (const r of refused) expect(r.body.error.message).to.match(/does not cover this payment .* short/);
    await ended(accepted[0].body.txId);
    const minted = await Promise.all(recipients.map((r) => bkn().balanceOf(r)));
    expect(minted.filter((b) => b > 0n)).to.have.length(1);
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
  });

  it("four authorisations for a balance of one price on relayed sends: one operation, three 402s; the relayer sends one transaction", async () => {
    const payer = await payerWith(PRICE);
    const tokens = await Promise.all(["PIA", "PIB", "PIC", "PID"].map((s) => relayedToken(s)));
    const before = await relayerFacts(base);
    const answers = await Promise.all(
      tokens.map(async (t) =>
        api.post("/send-transactions", { txId: t.txId }, { "X-PAYMENT": await payWithEthers(payer, t.quote) }),
      ),
    );
    expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).to.deep.equal([
      200, 402, 402, 402,
    ]);
    expect(answers.find((a) => a.status === 200)!.body.status).to.equal("success");
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
    expect((await relayerFacts(base)).nonce - before.nonce).to.equal(1);
  });

  it("paid reads against a balance of one price, four at once: one answer with its data, three 402s", async () => {
    const payer = await payerWith(READ_PRICE);
    const query = { chainId: "aa36a7", agent: Wallet.createRandom().address, principal: Wallet.createRandom().address };
    const quote = quoteOf(await api.get("/rams/mandate", query)).accepts[0];
    const answers = await Promise.all(
      [0, 1, 2, 3].map(async () => api.get("/rams/mandate", query, { "X-PAYMENT": await payWithEthers(payer, quote) })),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 402, 402, 402]);
    const paid = answers.find((a) => a.status === 200)!;
    expect(paid.body.data.status).to.equal("none");
    expect(decodePaymentResponse(paid)).to.include({ success: true });
    for (const a of answers.filter((x) => x.status === 402)) expect(a.body).to.not.have.property("data");
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
  });

  it("a relayed operation that would revert (a second set-operator after the first used the signature's nonce) is refused unsent: payment released, the relayer spends nothing", async () => {
    const payer = await payerWith(2n * PRICE);
    const principal = new Wallet(Wallet.createRandom().privateKey);
    const operator = Wallet.createRandom().address;
    const op = await relayedSetOperator(principal, operator);
    const [first, second] = [await op.prepare(), await op.prepare()];
    expect(ok(await sendRelayed(first.body.data.txId, payer)).body.status).to.equal("success");
    const before = await relayerFacts(sepolia);
    const sent = ok(await sendRelayed(second.body.data.txId, payer));
    expect(sent.body.status).to.equal("rejected");
    expect(sent.body.error).to.match(/^transaction 1 would revert: .*InvalidSignature.*; nothing was sent$/);
    expect(sent.body.payment).to.include({ status: "released" });
    expect(await relayerFacts(sepolia)).to.deep.equal(before);
    expect(await usdc().balanceOf(payer.address)).to.equal(PRICE);
  });

  it("paid, then the operation fails for a reason of the payer's: charged, nothing owed back (two claims for one recipient, both paid; one mints, the other is refused)", async () => {
    const payer = await payerWith(2n * PRICE);
    const recipient = Wallet.createRandom().address;
    const quote = await faucetQuote();
    const { both } = await holdingBase(async () => {
      const both = Promise.all([claim(payer, quote, recipient), claim(payer, quote, recipient)]);
      await until(
        "both settlements in the pool",
        async () =>
          (
            await service.services.db.query("SELECT 1 FROM payments WHERE payer = $1 AND settle_tx_hash IS NOT NULL", [
              payer.address.toLowerCase(),
            ])
          ).length === 2,
      );
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      return { both };
    });
    const [a, b] = await both;
    const batches = [await ended(a.body.txId), await ended(b.body.txId)];
    expect(batches.map((x) => x.status).sort()).to.deep.equal(["rejected", "success"]);
    // Refused by the simulation before signing, or (both simulated before either was mined) reverted when mined.
    expect(batches.find((x) => x.status === "rejected")!.error).to.match(/FaucetCooldown|reverted on-chain/);
    expect((await paymentOfClaim(a.body.txId)).status).to.equal("settled");
    expect((await paymentOfClaim(b.body.txId)).status).to.equal("settled");
    expect(await usdc().balanceOf(payer.address), "both attempts paid").to.equal(0n);
    // The payer's own race (a claim for a recipient in its cooldown) is the payer's failure: no refund is owed.
    const rejected = batches.find((x) => x.status === "rejected")!;
    expect(rejected.payments[0]).to.not.have.property("refund");
    expect(await service.services.paymentRefunds.forBatch(rejected.txId)).to.deep.equal([]);
    expect(await bkn().balanceOf(recipient)).to.equal(parseUnits("100", 18));
  });

  it("a relayed transaction signed again after someone else used its nonce keeps its payment: one transaction pays and runs", async () => {
    const payer = await payerWith(PRICE);
    const { txId, quote } = await relayedToken("RESGN");
    const relayerKey = sandbox.accounts[RELAYER_INDEX].connect(base);
    const { sending } = await holdingBase(async () => {
      const sending = api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(payer, quote) });
      let first: string | null = null;
      await until("the relayed transaction in the pool", async () => {
        first = (await statusOf(txId)).transactions?.[0]?.hash ?? null;
        return first !== null && (await base.getTransaction(first)) !== null;
      });
      // The relayer's key takes the same nonce with a transaction of its own, priced to replace the service's.
      const pending = (await base.getTransaction(first!))!;
      await relayerKey.sendTransaction({
        to: relayerKey.address,
        value: 0n,
        nonce: pending.nonce,
        gasLimit: 60_000n,
        maxFeePerGas: pending.maxFeePerGas! * 3n,
        maxPriorityFeePerGas: pending.maxFeePerGas! * 2n,
      });
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      return { sending };
    });
    const sent = await sending;
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.status).to.equal("success");
    const payment = (await service.services.payments.forBatch(txId))[0];
    expect(payment).to.include({ status: "settled", settleInOperation: true });
    const receipt = (await base.getTransactionReceipt(sent.body.txHashes[0]))!;
    expect(receipt.to, "sent to the relayer's delegate, with the payment").to.equal(relayer());
    const paidCalls = receipt.logs
      .filter((l) => l.address === relayer())
      .map((l) => PaidRelayDelegate__factory.createInterface().parseLog(l)?.name);
    expect(paidCalls).to.deep.equal(["PaidCall"]);
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
  });

  it("a relayed transaction replaced with higher fees under a fee spike keeps its payment: the replacement pays and runs", async () => {
    const payer = await payerWith(PRICE);
    const { txId, quote } = await relayedToken("SPIKE");
    const { sending, first } = await holdingBase(async () => {
      const sending = api.post("/send-transactions", { txId }, { "X-PAYMENT": await payWithEthers(payer, quote) });
      let first: string | null = null;
      await until("the relayed transaction in the pool", async () => {
        first = (await statusOf(txId)).transactions?.[0]?.hash ?? null;
        return first !== null && (await base.getTransaction(first)) !== null;
      });
      // The base fee jumps far above the transaction's fee cap: it cannot be mined until it is replaced.
      await sandbox.baseSepolia.provider.request({
        method: "hardhat_setNextBlockBaseFeePerGas",
        params: ["0xba43b7400"],
      }); // 50 gwei
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      await until(
        "a replacement with higher fees",
        async () => (await statusOf(txId)).transactions?.[0]?.hash !== first,
      );
      return { sending, first: first! };
    });
    const sent = await sending;
    expect(sent.body.status, JSON.stringify(sent.body)).to.equal("success");
    expect(sent.body.txHashes[0]).to.not.equal(first);
    expect(await base.getTransactionReceipt(first), "the underpriced form was never mined").to.equal(null);
    const receipt = (await base.getTransactionReceipt(sent.body.txHashes[0]))!;
    expect(receipt.to, "the replacement is sent to the relayer's delegate, with the payment").to.equal(relayer());
    expect(
      receipt.logs
        .filter((l) => l.address === relayer())
        .map((l) => PaidRelayDelegate__factory.createInterface().parseLog(l)?.name),
    ).to.deep.equal(["PaidCall"]);
    expect((await service.services.payments.forBatch(txId))[0]).to.include({
      status: "settled",
      settleInOperation: true,
    });
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
  });

  it("a settlement wallet without gas keeps the payment owed: the claim waits, nothing is minted, and it completes once the wallet is funded", async () => {
    const payer = await payerWith(PRICE);
    const recipient = Wallet.createRandom().address;
    const quote = await faucetQuote();
    const settlementWallet = payTo();
    const funds = await base.getBalance(settlementWallet);
    const failuresBefore = service.services.x402!.failures.ours;
    await sandbox.baseSepolia.provider.request({ method: "hardhat_setBalance", params: [settlementWallet, "0x0"] });
    let res: ApiResponse;
    try {
      res = await api
        .post(
          "/faucet/bkn",
          { recipientAddress: recipient },
          { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(payer, quote), ...distinctClient() },
        )
        .then(async (r) => r);
      await until("a settlement failure of ours", async () => service.services.x402!.failures.ours > failuresBefore);
      const payment = await paymentOfClaim(res.body.txId);
      expect(payment.status, "owed, not released").to.be.oneOf(["reserved", "settling"]);
      expect((await statusOf(res.body.txId)).status).to.equal("pending");
      expect(await bkn().balanceOf(recipient)).to.equal(0n);
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      expect(metrics).to.match(/tak_x402_settlement_failures_total\{cause="ours"\} [1-9]/);
    } finally {
      await sandbox.baseSepolia.provider.request({
        method: "hardhat_setBalance",
        params: [settlementWallet, `0x${funds.toString(16)}`],
      });
    }
    const batch = await ended(res.body.txId);
    expect(batch.status).to.equal("success");
    expect((await paymentOfClaim(res.body.txId)).status).to.equal("settled");
    expect(await bkn().balanceOf(recipient)).to.equal(parseUnits("100", 18));
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
  });

  it("a foreign hash reported on another tenant's batch is refused (4xx) and leaves both batches as they were", async () => {
    const [a, b] = await Promise.all(
      ["a@tenants.test", "b@tenants.test"].map((email) =>
        service.services.apiKeys.create({ email, plan: "Enterprise" }),
      ),
    );
    const [signerA, signerB] = [sandbox.accounts[4].connect(sepolia), sandbox.accounts[5].connect(sepolia)];
    for (const s of [signerA, signerB]) await service.services.signers.add(s.address, "all-keys");
    const prepare = (key: string, signer: Wallet, symbol: string) =>
      api.withKey(key).post("/prepare-transactions", {
        method: "newTokenization",
        chainId: "aa36a7",
        signerAddress: signer.address,
        tokenizerEmail: `${symbol.toLowerCase()}@tenants.test`,
        name: symbol,
        tokenSymbol: symbol,
        executionMode: "client-broadcast",
      });
    const [pa, pb] = [ok(await prepare(a.key, signerA, "TNTA")).body, ok(await prepare(b.key, signerB, "TNTB")).body];
    const sentA = await signerA.sendTransaction({
      ...pa.transactions[0],
      gasLimit: BigInt(pa.transactions[0].gasLimit),
    });
    const stolen = await api.withKey(b.key).post("/send-transactions", { txId: pb.txId, txHash: sentA.hash });
    expect(stolen.status, JSON.stringify(stolen.body)).to.equal(400);
    expect(stolen.body.error.code).to.equal("TRANSACTION_MISMATCH");
    expect((await api.withKey(b.key).get("/get-transaction-status", { txId: pb.txId })).body.status).to.equal(
      "prepared",
    );
    const own = await api.withKey(a.key).post("/send-transactions", { txId: pa.txId, txHash: sentA.hash });
    expect([200, 202], JSON.stringify(own.body)).to.include(own.status);
    await until(
      "tenant A's batch",
      async () =>
        (await api.withKey(a.key).get("/get-transaction-status", { txId: pa.txId })).body.status === "success",
    );
  });

  it("a retried request with an Idempotency-Key gets the first answer and is charged once; another body under the key is a 409", async () => {
    const payer = await payerWith(PRICE);
    const body = { chainId: "84532", name: "Agent IDEM", symbol: "IDEM", agentWallet: sandbox.accounts[6].address };
    const prepareKey = randomUUID();
    const headers = { "Idempotency-Key": prepareKey, ...distinctClient() };
    const first = ok(await api.post("/x402/token/create", body, headers));
    const again = ok(await api.post("/x402/token/create", body, headers));
    expect(again.body.txId).to.equal(first.body.txId);
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    const other = await api.post("/x402/token/create", { ...body, symbol: "IDEM2" }, headers);
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal("IDEMPOTENCY_CONFLICT");

    // The send: the 402 quote is not kept; the paid call under the same key is, and its retry is not charged again.
    const sendKey = { "Idempotency-Key": randomUUID() };
    const quote = quoteOf(await api.post("/send-transactions", { txId: first.body.txId }, sendKey)).accepts[0];
    const payment = await payWithEthers(payer, quote);
    const paid = ok(
      await api.post("/send-transactions", { txId: first.body.txId }, { ...sendKey, "X-PAYMENT": payment }),
    );
    const retried = ok(
      await api.post("/send-transactions", { txId: first.body.txId }, { ...sendKey, "X-PAYMENT": payment }),
    );
    expect(retried.body).to.deep.equal(paid.body);
    expect(retried.headers.get("idempotent-replayed")).to.equal("true");
    expect(decodePaymentResponse(retried)).to.deep.equal(decodePaymentResponse(paid));
    expect(await usdc().balanceOf(payer.address)).to.equal(0n);
    const bad = await api.post(
      "/send-transactions",
      { txId: first.body.txId },
      { "Idempotency-Key": "has spaces in it" },
    );
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.match(/^Idempotency-Key must be visible ASCII/);
  });

  /** The payer sends all its USDC away with a tip that puts it ahead of the settlement in the next block. */
  async function moveAway(payer: Wallet) {
    const fees = await base.getFeeData();
    // No estimate: on the pending block (with the settlement in it) the payer has nothing left to send.
    await USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, payer).transfer(
      funder.address,
      await usdc().balanceOf(payer.address),
      {
        gasLimit: 100_000n,
        maxPriorityFeePerGas: fees.maxFeePerGas! * 2n,
        maxFeePerGas: fees.maxFeePerGas! * 4n,
      },
    );
  }

  function ok(res: ApiResponse, label = ""): ApiResponse {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201, 202]);
    return res;
  }
});
