import { expect } from "chai";
import { parseUnits, type Wallet } from "ethers";
import { SecurityToken__factory, USDC__factory } from "../../typechain-types";
import { unwrap } from "../../client/index";
import { execute } from "../helpers/flow";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

const usdc = (n: string) => parseUnits(n, 6);

describe("e2e: security token offerings through HTTP", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet, alice: Wallet, bob: Wallet, carol: Wallet, dave: Wallet;
  const chainId = "aa36a7";
  const symbol = "STOK";
  let tokenAddress: string;

  const chainNow = async () => (await providerFor(sandbox.sepolia).getBlock("latest"))!.timestamp;
  const jumpTo = async (timestamp: number) => {
    await sandbox.sepolia.provider.request({ method: "evm_setNextBlockTimestamp", params: [timestamp] });
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
  };
  const payment = () =>
    USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, providerFor(sandbox.sepolia));
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  const expectPreflight = async (res: Promise<{ status: number; body: any }>, message: RegExp) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.message).to.match(message);
  };
  const invest = (investor: Wallet, amount: string, email = `${investor.address.slice(2, 8)}@sto.test`) =>
    execute(api, investor, {
      method: "newInvest",
      chainId,
      tokenSymbol: symbol,
      investorAddress: investor.address,
      investorEmail: email,
      investmentAmount: amount,
    });
  const prepare = (body: Record<string, unknown>) =>
    api.post("/prepare-transactions", { chainId, tokenSymbol: symbol, ...body });

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    [issuer, alice, bob, carol, dave] = [1, 2, 3, 4, 5].map((i) => sandbox.accounts[i]);
    const { key } = await service.services.apiKeys.create({ email: "ops@sto.test", plan: "Enterprise" });
    api = service.api.withKey(key);
    for (const w of [issuer, alice, bob, carol, dave]) await service.services.signers.add(w.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@sto.test",
      name: "Sto Holdings",
      tokenSymbol: symbol,
      supplyCap: "1000000",
    });
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [alice, bob, carol].map((w) => ({
        investorAddress: w.address,
        investorEmail: `${w.address.slice(2, 8)}@sto.test`,
        whitelistStatus: true,
      })),
    });
    tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;
  });
  after(async () => service?.stop());

  it("a successful offering: several investors, one capped by the hard cap with a partial refund, all claim", async () => {
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: alice.address, investmentAmount: "1000" }),
      /has no ongoing offering/,
    );
    await expectPreflight(prepare({ method: "claimTokens", investorAddress: alice.address }), /has no offering/);

    const start = (await chainNow()) + 3600;
    const offering = {
      method: "newSto",
      signerAddress: issuer.address,
      tokenizerEmail: "issuer@sto.test",
      offeringName: "Series A",
      tokenAmount: "1000",
      acceptedCoin: "USDC",
      startDate: iso(start),
      endDate: iso(start + 86_400),
      minRaiseUSD: "4000",
      maxRaiseUSD: "10000",
      minInvestment: "1000",
      maxInvestment: "6000",
    };
    await expectPreflight(
      prepare({ ...offering, startDate: iso((await chainNow()) - 10) }),
      /startDate must be in the future/,
    );
    await expectPreflight(prepare({ ...offering, minRaiseUSD: "20000" }), /cannot exceed maxRaiseUSD/);
    await expectPreflight(prepare({ ...offering, minInvestment: "7000" }), /minInvestment cannot exceed maxInvestment/);
    await expectPreflight(prepare({ ...offering, endDate: iso(start - 1) }), /endDate must be after startDate/);
    await expectPreflight(
      prepare({ ...offering, tokenPrice: "11" }),
      /tokenPrice 11 does not match maxRaiseUSD \/ tokenAmount = 10/,
    );
    await expectPreflight(prepare({ ...offering, acceptedCoin: "USDT" }), /acceptedCoin must be USDC/);
    await expectPreflight(prepare({ ...offering, tokenAmount: "2000000" }), /exceeds the room under STOK's supply cap/);
    const created = await execute(api, issuer, { ...offering, tokenPrice: "10", tokenSymbol: symbol, chainId });
    expect(created.prepared.info.tokenPrice).to.equal("10");
    await expectPreflight(prepare(offering), /Tokenizer already has an ongoing STO/);

    // Reads through the typed client (client/): typed from /openapi.json.
    const stos = unwrap(await api.typed.GET("/get-stos", { params: { query: { tokenSymbol: symbol } } }));
    expect(stos.status).to.have.length(1);
    const sto = stos.status[0];
    expect(sto).to.include({
      name: "Series A",
      status: "PENDING",
      tokenAmount: "1000",
      hardCap: "10000",
      softCap: "4000",
      tokenPrice: "10",
      acceptedCoin: "USDC",
    });

    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: alice.address, investmentAmount: "1000" }),
      /has not started/,
    );
    await jumpTo(start + 1);
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: dave.address, investmentAmount: "1000" }),
      /cannot receive STOK \(The receiver is not whitelisted\), so the offering takes no investment from it/,
    );
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: alice.address, investmentAmount: "500" }),
      /below the minimum investment of 1000/,
    );
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: alice.address, investmentAmount: "7000" }),
      /above the maximum investment of 6000/,
    );

    const usdcToken = payment();
    const before = Object.fromEntries(
      await Promise.all(
        [issuer, alice, bob, carol].map(async (w) => [w.address, await usdcToken.balanceOf(w.address)] as const),
      ),
    );
    const first = await invest(alice, "5000");
    expect(first.prepared.transactions).to.have.length(2); // approve, then invest
    await invest(bob, "4000");
    const capped = await invest(carol, "3000");
    expect(capped.prepared.info).to.include({ acceptedAmount: "1000", refundedAmount: "2000", expectedTokens: "100" });
    expect(before[carol.address] - (await usdcToken.balanceOf(carol.address))).to.equal(usdc("1000"));

    const balance = unwrap(
      await api.typed.GET("/get-sto-balance", { params: { query: { tokenSymbol: symbol, id: sto.uuid } } }),
    );
    expect(balance).to.deep.equal({
      uuid: sto.uuid,
      name: "Series A",
      companyName: "Sto Holdings",
      status: "ENDED",
      tokenAmount: "1000",
      hardCap: "10000",
      softCap: "4000",
      minInvestment: "1000",
      maxInvestment: "6000",
      startDate: iso(start),
      endDate: iso(start + 86_400),
      tokenPrice: "10",
      tokenSymbol: symbol,
      currentAmountRaised: "10000",
      availableAmount: "0",
    });
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: bob.address, investmentAmount: "1000" }),
      /reached its hard cap/,
    );
    await expectPreflight(prepare({ method: "claimTokens", investorAddress: alice.address }), /is not closed yet/);

    await execute(api, issuer, {
      method: "closeOffer",
      tokenizerEmail: "issuer@sto.test",
      tokenSymbol: symbol,
      chainId,
    });
    expect((await usdcToken.balanceOf(issuer.address)) - before[issuer.address]).to.equal(usdc("10000"));

    const token = SecurityToken__factory.connect(tokenAddress, providerFor(sandbox.sepolia));
    for (const [w, tokens] of [
      [alice, "500"],
      [bob, "400"],
      [carol, "100"],
    ] as const) {
      await execute(api, w, { method: "claimTokens", chainId, tokenSymbol: symbol, investorAddress: w.address });
      expect(await token.balanceOf(w.address)).to.equal(parseUnits(tokens, 18));
    }
    await expectPreflight(prepare({ method: "claimTokens", investorAddress: alice.address }), /already claimed/);
    await expectPreflight(prepare({ method: "claimTokens", investorAddress: dave.address }), /Nothing to claim/);
    expect(await token.reservedSupply()).to.equal(0n);

    const list = unwrap(
      await api.typed.GET("/get-investments-by-sto-id", { params: { query: { tokenSymbol: symbol, id: sto.uuid } } }),
    );
    expect(list.total).to.equal(3);
    expect(list.offeringTransactionsList.map((i) => [i.user, i.amountInUSD, i.currency, i.status])).to.deep.equal([
      [`${alice.address.slice(2, 8)}@sto.test`, "5000", "USDC", "claimTokens"],
      [`${bob.address.slice(2, 8)}@sto.test`, "4000", "USDC", "claimTokens"],
      [`${carol.address.slice(2, 8)}@sto.test`, "1000", "USDC", "claimTokens"],
    ]);
    for (const item of list.offeringTransactionsList) {
      expect(Object.keys(item).sort()).to.deep.equal([
        "amountInUSD",
        "currency",
        "date",
        "id",
        "status",
        "txHash",
        "user",
      ]);
      expect(item.txHash).to.match(/^0x[0-9a-f]{64}$/);
    }
    const byId = unwrap(
      await api.typed.GET("/get-sto-by-id", { params: { query: { tokenSymbol: symbol, id: sto.uuid } } }),
    );
    expect(byId).to.include({ status: "COMPLETED", currentAmountRaised: "10000" });
    const investor = unwrap(
      await api.typed.GET("/get-investor-info", {
        params: { query: { tokenSymbol: symbol, email: `${alice.address.slice(2, 8)}@sto.test` } },
      }),
    );
    expect(investor.investments).to.have.length(1);
    expect(investor.investments[0]).to.include({
      amountInUSDT: "5000",
      status: "claimTokens",
      offeringName: "Series A",
    });
  });

  it("a failed offering: soft cap missed, anyone closes after the end, everyone is refunded", async () => {
    const start = (await chainNow()) + 60;
    await execute(api, issuer, {
      method: "newSto",
      tokenSymbol: symbol,
      chainId,
      offeringName: "Series B",
      tokenAmount: "100",
      startDate: iso(start),
      endDate: iso(start + 3600),
      minRaiseUSD: "5000",
      maxRaiseUSD: "8000",
      minInvestment: "100",
      maxInvestment: "8000",
    });
    await jumpTo(start + 1);
    const usdcToken = payment();
    const before = { alice: await usdcToken.balanceOf(alice.address), bob: await usdcToken.balanceOf(bob.address) };
    await invest(alice, "1000");
    await invest(bob, "2000");
    await expectPreflight(
      prepare({ method: "closeOffer", signerAddress: bob.address }),
      /Only the tokenizer may close/,
    );
    await jumpTo(start + 3601);
    await expectPreflight(
      prepare({ method: "newInvest", investorAddress: alice.address, investmentAmount: "100" }),
      /has ended/,
    );
    await execute(api, bob, { method: "closeOffer", tokenSymbol: symbol, chainId });

    for (const w of [alice, bob])
      await execute(api, w, { method: "claimTokens", chainId, tokenSymbol: symbol, investorAddress: w.address });
    expect(await usdcToken.balanceOf(alice.address)).to.equal(before.alice);
    expect(await usdcToken.balanceOf(bob.address)).to.equal(before.bob);

    const stos = (await api.get("/get-stos", { tokenSymbol: symbol })).body.status;
    const seriesB = stos.find((s: any) => s.name === "Series B");
    expect(seriesB).to.include({ status: "FAILED", currentAmountRaised: "3000", availableAmount: "0" });
    const list = await api.get("/get-investments-by-sto-id", { tokenSymbol: symbol, id: seriesB.uuid });
    expect(list.body.offeringTransactionsList.map((i: any) => i.status)).to.deep.equal(["refund", "refund"]);
    const token = SecurityToken__factory.connect(tokenAddress, providerFor(sandbox.sepolia));
    expect(await token.reservedSupply()).to.equal(0n);
  });

  it("STO reads need a key: 400 API key is missing from headers.", async () => {
    for (const path of ["/get-stos", "/get-sto-by-id", "/get-investments-by-sto-id", "/get-sto-balance"]) {
      const res = await service.api.get(path, { tokenSymbol: symbol, id: "00000000-0000-4000-8000-000000000000" });
      expect(res.status, path).to.equal(400);
      expect(res.body.message).to.equal("API key is missing from headers.");
    }
    const unknown = await api.get("/get-sto-balance", {
      tokenSymbol: symbol,
      id: "00000000-0000-4000-8000-000000000000",
    });
    expect(unknown.status).to.equal(404);
    const malformed = await api.get("/get-sto-balance", { tokenSymbol: symbol, id: "not-a-uuid" });
    expect(malformed.status).to.equal(400);
  });
});
