// tier: chaos
import { expect } from "chai";
import { parseUnits, type JsonRpcProvider, type Wallet } from "ethers";
import { AgentToken__factory, SecurityToken__factory, USDC__factory } from "../../typechain-types";
import { execute, prepareAndSign } from "../helpers/flow";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { createOwnSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { decodePaymentResponse } from "../helpers/x402";

/** Seconds between blocks: real networks do not mine a transaction the moment it is sent. */
const BLOCK_TIME = 1;
const usdc = (n: string) => parseUnits(n, 6);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe(`e2e: a whole flow on chains that mine every ${BLOCK_TIME} s, with CONFIRMATIONS=2`, function () {
  this.timeout(150_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let sepolia: JsonRpcProvider;
  let base: JsonRpcProvider;
  let issuer: Wallet, alice: Wallet, bob: Wallet;
  const chainId = "aa36a7";
  const symbol = "IVAL";

  /** Receipt of a transaction and the chain's height: its block and at least one more (two confirmations). */
  async function expectTwoConfirmations(provider: JsonRpcProvider, hash: string) {
    const receipt = await provider.getTransactionReceipt(hash);
    expect(receipt, `receipt of ${hash}`).to.not.equal(null);
    expect(receipt!.status).to.equal(1);
    expect(await provider.getBlockNumber()).to.be.at.least(receipt!.blockNumber + 1);
    return receipt!;
  }
  /** prepare → sign → send, then every transaction of the batch has two confirmations (the service waited for them). */
  async function run(wallet: Wallet, body: Record<string, unknown>) {
    const result = await execute(api, wallet, { chainId, ...body });
    const status = (await api.get("/get-transaction-status", { txId: result.prepared.txId })).body;
    expect(status.status).to.equal("success");
    const receipts = [];
    for (const tx of status.transactions) receipts.push(await expectTwoConfirmations(sepolia, tx.hash));
    // Transactions of one batch are each confirmed before the next is broadcast: never in the same block.
    for (let i = 1; i < receipts.length; i++)
      expect(receipts[i].blockNumber).to.be.at.least(receipts[i - 1].blockNumber + 2);
    return result;
  }
  const chainTime = async () => (await sepolia.getBlock("latest"))!.timestamp;

  before(async () => {
    sandbox = await createOwnSandbox({ blockTime: BLOCK_TIME });
    expect(sandbox.sepolia.blockTime).to.equal(BLOCK_TIME);
    expect(sandbox.baseSepolia.blockTime).to.equal(BLOCK_TIME);
    service = await startTestService(sandbox, { env: { CONFIRMATIONS: "2", SEND_WAIT_MS: "30000" } });
    expect(service.config.CONFIRMATIONS).to.equal(2);
    sepolia = providerFor(sandbox.sepolia);
    base = providerFor(sandbox.baseSepolia);
    [issuer, alice, bob] = [1, 2, 3].map((i) => sandbox.accounts[i]);
    const { key } = await service.services.apiKeys.create({ email: "ops@interval.test", plan: "Enterprise" });
    api = service.api.withKey(key);
    for (const w of [issuer, alice, bob]) await service.services.signers.add(w.address, "all-keys");
  });
  after(async () => {
    await service?.stop();
    sepolia?.destroy();
    base?.destroy();
    await sandbox?.close();
  });

  it("a sent transaction is not mined at once on these chains", async () => {
    // A block of the interval may land between the send and the look-up (more likely on a busy machine): such an
    // attempt proves nothing and is made again. On a chain mining at once every attempt would see a new block.
    for (let attempt = 1; ; attempt++) {
      const before = await sepolia.getBlockNumber();
      const tx = await alice.connect(sepolia).sendTransaction({ to: alice.address, value: 0n });
      const receipt = await sepolia.getTransactionReceipt(tx.hash);
      const blockLanded = (await sepolia.getBlockNumber()) !== before;
      expect((await tx.wait())!.status).to.equal(1);
      if (blockLanded && attempt < 5) continue;
      expect(receipt).to.equal(null);
      break;
    }
  });

  it("newTokenization → whitelist → mintToken → newSto → newInvest ×2 → closeOffer → claimTokens, all over HTTP", async () => {
    await run(issuer, {
      method: "newTokenization",
      tokenizerEmail: "issuer@interval.test",
      name: "Interval Holdings",
      tokenSymbol: symbol,
      supplyCap: "1000000",
    });
    const tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;
    const token = SecurityToken__factory.connect(tokenAddress, sepolia);
    expect(await token.tokenizer()).to.equal(issuer.address);

    await run(issuer, {
      method: "whitelist",
      tokenSymbol: symbol,
      userToWhitelist: [alice, bob].map((w) => ({
        investorAddress: w.address,
        investorEmail: `${w.address.slice(2, 8)}@interval.test`,
        whitelistStatus: true,
      })),
    });
    expect(await token.isWhitelisted(alice.address)).to.equal(true);
    expect(await token.isWhitelisted(bob.address)).to.equal(true);

    await run(issuer, {
      method: "mintToken",
      tokenSymbol: symbol,
      userToMint: [{ investorEmail: "alice@interval.test", investorAddress: alice.address, amount: "250" }],
    });
    expect(await token.balanceOf(alice.address)).to.equal(parseUnits("250", 18));

    // The offering starts a few seconds from now by the client's clock, as clients send it: the chain keeps that clock.
    const offering = {
      method: "newSto",
      tokenSymbol: symbol,
      tokenizerEmail: "issuer@interval.test",
      offeringName: "Interval Series",
      tokenAmount: "1000",
      acceptedCoin: "USDC",
      minRaiseUSD: "1000",
      maxRaiseUSD: "10000",
      minInvestment: "100",
      maxInvestment: "6000",
    };
    const wallNow = Math.floor(Date.now() / 1000);
    // A start a few seconds in the past (a client clock behind, a slow request) is a 400 naming the chain's time.
    const late = await api.post("/prepare-transactions", {
      ...offering,
      chainId,
      signerAddress: issuer.address,
      startDate: iso(wallNow - 3),
      endDate: iso(wallNow + 3600),
    });
    expect(late.status, JSON.stringify(late.body)).to.equal(400);
    expect(late.body.message).to.match(
      /^startDate must be in the future \(chain time is \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z\)$/,
    );
    expect(late.body.error.details).to.include({ field: "startDate", startDate: iso(wallNow - 3) });
    expect(Date.parse(late.body.error.details.chainTime) / 1000).to.be.within(wallNow - 2, wallNow + 5);
    // now + 30 s, the example, is accepted at prepare (not sent: the flow below uses a nearer start).
    const in30 = await api.post("/prepare-transactions", {
      ...offering,
      chainId,
      signerAddress: issuer.address,
      startDate: iso(wallNow + 30),
      endDate: iso(wallNow + 3600),
    });
    expect(in30.status, JSON.stringify(in30.body)).to.equal(200);

    const start = Math.floor(Date.now() / 1000) + 8;
    await run(issuer, { ...offering, startDate: iso(start), endDate: iso(start + 3600) });
    const sto = (await api.get("/get-stos", { tokenSymbol: symbol })).body.status[0];
    expect(sto).to.include({ name: "Interval Series", status: "PENDING", hardCap: "10000", softCap: "1000" });

    // Wait for the start in real time: no evm_increaseTime on these chains.
    while ((await chainTime()) < start) await sleep(250);
    const payment = USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, sepolia);
    const before = {
      issuer: await payment.balanceOf(issuer.address),
      alice: await payment.balanceOf(alice.address),
      bob: await payment.balanceOf(bob.address),
    };
    for (const [w, amount] of [
      [alice, "6000"],
      [bob, "5000"],
    ] as const) {
      const invested = await run(w, {
        method: "newInvest",
        tokenSymbol: symbol,
        investorAddress: w.address,
        investorEmail: `${w.address.slice(2, 8)}@interval.test`,
        investmentAmount: amount,
      });
      expect(invested.prepared.transactions).to.have.length(2); // approve, then invest (estimated before the approve is mined)
    }
    expect(before.alice - (await payment.balanceOf(alice.address))).to.equal(usdc("6000"));
    expect(before.bob - (await payment.balanceOf(bob.address))).to.equal(usdc("4000")); // capped: 4000 of 5000 accepted
    expect((await api.get("/get-sto-balance", { tokenSymbol: symbol, id: sto.uuid })).body).to.include({
      status: "ENDED",
      currentAmountRaised: "10000",
    });

    await run(issuer, { method: "closeOffer", tokenizerEmail: "issuer@interval.test", tokenSymbol: symbol });
    expect((await payment.balanceOf(issuer.address)) - before.issuer).to.equal(usdc("10000"));

    // Alice claims through the service; Bob broadcasts his claim himself and reports the hash before it is mined.
    await run(alice, { method: "claimTokens", tokenSymbol: symbol, investorAddress: alice.address });
    expect(await token.balanceOf(alice.address)).to.equal(parseUnits("850", 18));
    const { prepared, signedTransactions } = await prepareAndSign(api, bob, {
      method: "claimTokens",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
    });
    const heightBefore = await sepolia.getBlockNumber();
    const broadcast = await sepolia.broadcastTransaction(signedTransactions[0]);
    const early = await sepolia.getTransactionReceipt(broadcast.hash);
    // Reported before it is mined, unless a block of the interval landed meanwhile (a busy machine).
    if ((await sepolia.getBlockNumber()) === heightBefore) expect(early).to.equal(null);
    const reported = await api.post("/send-transactions", { txId: prepared.txId, txHash: broadcast.hash });
    expect(reported.status, JSON.stringify(reported.body)).to.equal(200);
    expect(reported.body.status).to.equal("success");
    await expectTwoConfirmations(sepolia, broadcast.hash);
    expect(await token.balanceOf(bob.address)).to.equal(parseUnits("400", 18));
    expect(await token.reservedSupply()).to.equal(0n);

    const list = await api.get("/get-investments-by-sto-id", { tokenSymbol: symbol, id: sto.uuid });
    expect(list.body.offeringTransactionsList.map((i: any) => [i.amountInUSD, i.status])).to.deep.equal([
      ["6000", "claimTokens"],
      ["4000", "claimTokens"],
    ]);
    expect((await api.get("/get-sto-by-id", { tokenSymbol: symbol, id: sto.uuid })).body).to.include({
      status: "COMPLETED",
    });
  });

  it("a service-relayed x402 call: paid at send, relayed with its payment in one transaction, confirmed twice, then settled", async () => {
    const payer = sandbox.accounts[4];
    const payment = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, base);
    const paidBefore = await payment.balanceOf(payer.address);
    const txId = await prepareRelayedToken(service.api, "IVAG", sandbox.accounts[6].address);
    const paid = await payRelayedSend(service.api, txId, payer);
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.status).to.equal("success");
    expect(paid.body.payment.status).to.equal("settled");
    const settlement = decodePaymentResponse(paid);
    expect(settlement).to.include({ success: true, network: "eip155:84532" });
    expect((await base.getTransactionReceipt(settlement.transaction))?.status).to.equal(1);
    expect(paidBefore - (await payment.balanceOf(payer.address))).to.equal(10_000n);

    const status = (await service.api.get("/get-transaction-status", { txId })).body;
    expect(status).to.include({ status: "success", executionMode: "service-relayed" });
    await expectTwoConfirmations(base, status.txHash);
    // Same chain: the operation's own transaction carried the payment (the relayer's EIP-7702 delegate), and the
    // payment counts as settled only once that transaction has its two confirmations.
    expect(settlement.transaction).to.equal(status.txHash);
    expect(status.payments[0]).to.include({ status: "settled", settlementTransaction: status.txHash });
    const agentToken = AgentToken__factory.connect(status.outcome.tokenAddress, base);
    expect(await agentToken.owner()).to.equal(sandbox.accounts[6].address);
  });
});
