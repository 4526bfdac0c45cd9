import { expect } from "chai";
import { parseUnits, Wallet, ZeroAddress } from "ethers";
import {
  SecurityToken__factory,
  StoEscrow__factory,
  TokenFactory__factory,
  USDC__factory,
} from "../../typechain-types";
import { execute } from "../helpers/flow";
import { createOwnSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

/**
 * What an issuer's auditors check on the token contracts, through the API: the issuer's key replaced (the old one can
 * do nothing), a frozen holder's dividends held and then claimed, and a token with holders, a frozen amount, an open
 * offering and unclaimed dividends moved to a newer published implementation after the upgrade delay, nothing lost.
 */
describe("e2e: token safeguards (tokenizer handover, held dividends, upgrades after a visible delay)", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet, alice: Wallet, bob: Wallet, carol: Wallet, deployer: Wallet;
  const chainId = "aa36a7";
  const symbol = "SAFE";
  let tokenAddress: string;

  const provider = () => providerFor(sandbox.sepolia);
  const token = () => SecurityToken__factory.connect(tokenAddress, provider());
  const usdc = () => USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, provider());
  const chainNow = async () => (await provider().getBlock("latest"))!.timestamp;
  const jumpTo = async (timestamp: number) => {
    await sandbox.sepolia.provider.request({ method: "evm_setNextBlockTimestamp", params: [timestamp] });
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
  };
  const prepare = (body: Record<string, unknown>) =>
    api.post("/prepare-transactions", { chainId, tokenSymbol: symbol, ...body });
  const refused = (res: ApiResponse, status: number, message: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.message).to.match(message);
    return res.body.error;
  };
  /** The revert a call meets, as text; undefined when it succeeds. */
  const rejection = (call: Promise<unknown>) =>
    call.then(
      () => undefined,
      (e: { data?: string; shortMessage?: string; message?: string }) =>
        (e.data && SecurityToken__factory.createInterface().parseError(e.data)?.name) ??
        e.shortMessage ??
        e.message ??
        "rejected",
    );
  const freshWallet = async () => {
    const wallet = Wallet.createRandom();
    await sandbox.sepolia.provider.request({
      method: "hardhat_setBalance",
      params: [wallet.address, "0x8ac7230489e80000"],
    });
    await service.services.signers.add(wallet.address, "all-keys");
    return new Wallet(wallet.privateKey);
  };

  before(async () => {
    // Chains of its own: the upgrade delay moves their clock a week ahead.
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox);
    [deployer, issuer, alice, bob, carol] = [0, 1, 2, 3, 4].map((i) => sandbox.accounts[i]);
    api = service.api.withKey(
      (await service.services.apiKeys.create({ email: "ops@safe.test", plan: "Enterprise" })).key,
    );
    for (const w of [issuer, alice, bob, carol]) await service.services.signers.add(w.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@safe.test",
      name: "Safeguarded Holdings",
      tokenSymbol: symbol,
      preMints: [{ amount: "600" }, { amount: "400" }],
      initialHolders: [
        { walletAddress: alice.address, email: "alice@safe.test" },
        { walletAddress: bob.address, email: "bob@safe.test" },
      ],
    });
    tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;
    await execute(api, issuer, {
      method: "approve",
      chainId,
      tokenSymbol: "USDC",
      spenderAddress: tokenAddress,
      amount: "1000",
      tokenizerAddress: issuer.address,
    });
    await execute(api, issuer, { method: "dividendDistribution", chainId, tokenSymbol: symbol, amount: "1000" });
  });
  after(async () => {
    await service?.stop();
    await sandbox?.close();
  });

  it("a frozen holder's dividends are held, not forfeited, and claimed in full after the unfreeze", async () => {
    const owed = await token().withdrawableDividendOf(bob.address);
    expect(parseUnits("400", 6) - owed <= 1n).to.equal(true); // 400 USDC, less at most a unit of rounding
    await execute(api, issuer, { method: "freezeAddress", chainId, tokenSymbol: symbol, investorAddress: bob.address });
    const held = refused(
      await prepare({ method: "claimDividends", signerAddress: bob.address }),
      400,
      /is frozen on SAFE: its dividends \([\d.]+ USDC\) are held, not forfeited/,
    );
    expect(held.details).to.include({ restriction: "SENDER_FROZEN" });
    // The chain refuses it too, whoever prepares it.
    expect(await rejection(token().connect(bob.connect(provider())).claimDividends())).to.match(/DividendsHeld/);
    expect(await token().withdrawableDividendOf(bob.address)).to.equal(owed);

    await execute(api, issuer, {
      method: "freezeAddress",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
      freeze: false,
    });
    const before = await usdc().balanceOf(bob.address);
    await execute(api, bob, { method: "claimDividends", chainId, tokenSymbol: symbol });
    expect((await usdc().balanceOf(bob.address)) - before).to.equal(owed);
  });

  it("the issuer's key is replaced in two steps, after which the old key can do nothing and the new one everything", async () => {
    const newKey = await freshWallet();
    refused(
      await prepare({ method: "acceptTokenizer", signerAddress: newKey.address }),
      400,
      /no handover of SAFE is pending/,
    );
    await execute(api, issuer, {
      method: "transferTokenizer",
      chainId,
      tokenSymbol: symbol,
      newTokenizer: newKey.address,
    });
    refused(
      await prepare({ method: "acceptTokenizer", signerAddress: carol.address }),
      400,
      new RegExp(`handover of SAFE is to ${newKey.address}`),
    );
    // The token accepts in a block after the one that started the handover (its delay is 0 until the tokenizer sets one).
    refused(
      await prepare({ method: "acceptTokenizer", signerAddress: newKey.address }),
      400,
      /the handover of SAFE may be accepted after/,
    );
    await jumpTo((await chainNow()) + 1);
    await execute(api, newKey, { method: "acceptTokenizer", chainId, tokenSymbol: symbol });
    expect(await token().tokenizer()).to.equal(newKey.address);
    // The service's record follows the chain.
    expect((await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenizerAddress).to.equal(
      newKey.address,
    );

    // The old key: refused by the service, and by the chain if it signs anyway.
    refused(
      await prepare({
        method: "mintToken",
        signerAddress: issuer.address,
        userToMint: [{ investorAddress: alice.address, amount: "1" }],
      }),
      400,
      /does not hold MINTER_ROLE/,
    );
    refused(
      await prepare({ method: "dividendDistribution", signerAddress: issuer.address, amount: "1" }),
      400,
      /is not the tokenizer of SAFE/,
    );
    const asOld = token().connect(issuer.connect(provider()));
    expect(await rejection(asOld.mint(alice.address, 1n))).to.be.a("string");
    expect(await rejection(asOld.pause())).to.be.a("string");
    expect(await rejection(asOld.grantRole(await token().MINTER_ROLE(), issuer.address))).to.be.a("string");

    // The new key mints, and grants a narrow role it can revoke; revoking what is not held is an error, not a no-op.
    await execute(api, newKey, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [{ investorAddress: alice.address, amount: "10" }],
    });
    expect(await token().balanceOf(alice.address)).to.equal(parseUnits("610", 18));
    await execute(api, newKey, {
      method: "grantTokenRole",
      chainId,
      tokenSymbol: symbol,
      role: "minter",
      account: carol.address,
    });
    await execute(api, carol, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [{ investorAddress: bob.address, amount: "5" }],
    });
    await execute(api, newKey, {
      method: "revokeTokenRole",
      chainId,
      tokenSymbol: symbol,
      role: "minter",
      account: carol.address,
    });
    const minter = await token().MINTER_ROLE();
    expect(
      await rejection(token().connect(newKey.connect(provider())).revokeRole.staticCall(minter, carol.address)),
    ).to.match(/RoleNotHeld/);
    refused(
      await prepare({ method: "grantTokenRole", signerAddress: newKey.address, role: "admin", account: carol.address }),
      400,
      /DEFAULT_ADMIN_ROLE is the tokenizer's alone/,
    );

    // Hand it back, so the next test runs with the issuer's key.
    await execute(api, newKey, {
      method: "transferTokenizer",
      chainId,
      tokenSymbol: symbol,
      newTokenizer: issuer.address,
    });
    await jumpTo((await chainNow()) + 1);
    await execute(api, issuer, { method: "acceptTokenizer", chainId, tokenSymbol: symbol });
    expect(await token().tokenizer()).to.equal(issuer.address);
  });

  it("a token with holders, a frozen amount, an open offering and unclaimed dividends moves to a newer version after the visible delay, nothing lost", async () => {
    // An open offering with a position, a frozen amount, unclaimed dividends (alice's).
    const start = (await chainNow()) + 60;
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    await execute(api, issuer, {
      method: "newSto",
      chainId,
      tokenSymbol: symbol,
      offeringName: "Series U",
      tokenAmount: "100",
      startDate: iso(start),
      endDate: iso(start + 30 * 86_400),
      minRaiseUSD: "100",
      maxRaiseUSD: "1000",
      minInvestment: "10",
      maxInvestment: "1000",
    });
    await jumpTo(start + 1);
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: carol.address, investorEmail: "carol@safe.test", whitelistStatus: true }],
    });
    await execute(api, carol, {
      method: "newInvest",
      chainId,
      tokenSymbol: symbol,
      investorAddress: carol.address,
      investmentAmount: "250",
    });
    await execute(api, issuer, {
      method: "freezeTokens",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
      amount: "100",
    });

    const escrowAddress: string = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.escrowAddress;
    const escrow = StoEscrow__factory.connect(escrowAddress, provider());
    const snapshot = async () => ({
      supply: await token().totalSupply(),
      reserved: await token().reservedSupply(),
      balances: await Promise.all([alice, bob, carol].map((w) => token().balanceOf(w.address))),
      frozen: await Promise.all([alice, bob, carol].map((w) => token().getFrozenTokens(w.address))),
      dividends: await Promise.all([alice, bob, carol].map((w) => token().withdrawableDividendOf(w.address))),
      bindings: await Promise.all([alice, bob, carol].map((w) => token().investorOf(w.address))),
      paymentHeld: await usdc().balanceOf(tokenAddress),
      offering: (await escrow.offering(1)).toString(),
      position: [await escrow.invested(1, carol.address), await escrow.tokensOwed(1, carol.address)].join(","),
      escrowHeld: await usdc().balanceOf(escrowAddress),
      tokenizer: await token().tokenizer(),
    });
    const before = await snapshot();
    expect(before.dividends[0] > 0n).to.equal(true);
    expect(before.frozen[1]).to.equal(parseUnits("100", 18));

    refused(
      await prepare({ method: "scheduleTokenUpgrade", signerAddress: issuer.address }),
      400,
      /already run, or are scheduled for, the published version/,
    );
    // The platform publishes a new version (the factory's owner: the deployer).
    const owner = deployer.connect(provider());
    const tokenImpl = await new SecurityToken__factory(owner).deploy();
    const escrowImpl = await new StoEscrow__factory(owner).deploy();
    const factory = TokenFactory__factory.connect(sandbox.deployments[11155111].contracts.TokenFactory, owner);
    await (await factory.publishImplementations(await tokenImpl.getAddress(), await escrowImpl.getAddress())).wait();

    const scheduled = await execute(api, issuer, { method: "scheduleTokenUpgrade", chainId, tokenSymbol: symbol });
    expect(scheduled.prepared.transactions).to.have.length(2);
    expect(scheduled.prepared.info.upgradeDelaySeconds).to.equal(7 * 86_400);
    refused(
      await prepare({ method: "executeTokenUpgrade", signerAddress: issuer.address }),
      400,
      /may be executed from .*the upgrade delay holders are given/,
    );
    expect(await token().implementation()).to.not.equal(await tokenImpl.getAddress());
    await jumpTo((await chainNow()) + 7 * 86_400 + 1);
    await execute(api, issuer, { method: "executeTokenUpgrade", chainId, tokenSymbol: symbol });
    expect(await token().implementation()).to.equal(await tokenImpl.getAddress());
    expect(await escrow.implementation()).to.equal(await escrowImpl.getAddress());
    expect((await token().scheduledUpgrade()).scheduled).to.equal(ZeroAddress);

    expect(await snapshot()).to.deep.equal(before);
    // And it works on: alice claims her dividends, carol invests more.
    await execute(api, alice, { method: "claimDividends", chainId, tokenSymbol: symbol });
    await execute(api, carol, {
      method: "newInvest",
      chainId,
      tokenSymbol: symbol,
      investorAddress: carol.address,
      investmentAmount: "50",
    });
    expect(await escrow.invested(1, carol.address)).to.equal(parseUnits("300", 6));
    const controls = (await api.get("/get-token-controls", { tokenSymbol: symbol })).body.controls.map(
      (c: any) => c.action,
    );
    expect(controls).to.include.members([
      "upgrade_scheduled",
      "upgraded",
      "tokenizer_transfer_started",
      "tokenizer_changed",
    ]);
  });
});
