import { expect } from "chai";
import { parseUnits, Wallet, ZeroAddress } from "ethers";
import { SecurityToken__factory, USDC__factory } from "../../typechain-types";
import { execute } from "../helpers/flow";
import { EventStreamClient } from "../helpers/event-stream";
import { createOwnSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

const tokens = (n: string) => parseUnits(n, 18);

/**
 * Issuer controls through HTTP only: a lost wallet recovered and its dividends claimed from the new one, a court-ordered
 * freeze and forced transfer by a compliance officer with its own key, a paused token, an offering whose investors the
 * token no longer accepts resolved, and the cap table at a past block against the chain at that block.
 */
describe("e2e: issuer controls (ERC-7943 freezes and forced transfers, recovery, pause, roles, transfer checks, cap table)", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let officerApi: ApiClient;
  let strangerApi: ApiClient;
  let issuer: Wallet, alice: Wallet, bob: Wallet, carol: Wallet, dave: Wallet, erin: Wallet;
  let officer: Wallet;
  let stream: EventStreamClient;
  const chainId = "aa36a7";
  const symbol = "CTRL";
  let tokenAddress: string;

  const token = () => SecurityToken__factory.connect(tokenAddress, providerFor(sandbox.sepolia));
  const usdc = () => USDC__factory.connect(sandbox.deployments[11155111].contracts.USDC, providerFor(sandbox.sepolia));
  const chainNow = async () => (await providerFor(sandbox.sepolia).getBlock("latest"))!.timestamp;
  const jumpTo = async (timestamp: number) => {
    await sandbox.sepolia.provider.request({ method: "evm_setNextBlockTimestamp", params: [timestamp] });
    await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
  };
  /** A fresh wallet with gas, known to the service as a signer. */
  const freshWallet = async () => {
    const wallet = Wallet.createRandom();
    await sandbox.sepolia.provider.request({
      method: "hardhat_setBalance",
      params: [wallet.address, "0x8ac7230489e80000"],
    });
    await service.services.signers.add(wallet.address, "all-keys");
    return new Wallet(wallet.privateKey);
  };
  const prepare = (client: ApiClient, body: Record<string, unknown>) =>
    client.post("/prepare-transactions", { chainId, tokenSymbol: symbol, ...body });
  const refused = (res: ApiResponse, status: number, message: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.message).to.match(message);
    return res.body.error;
  };
  const holding = async (address: string) =>
    (await api.get("/get-balance-whitelist", { tokenSymbol: symbol, investorAddress: address })).body;

  before(async () => {
    // Chains of its own: recoveries wait for the token's delay, which this file moves the chains' clock past.
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox);
    [issuer, alice, bob, carol, dave, erin] = [1, 2, 3, 4, 5, 6].map((i) => sandbox.accounts[i]);
    officer = await freshWallet();
    const keys = service.services.apiKeys;
    api = service.api.withKey((await keys.create({ email: "ops@ctrl.test", plan: "Enterprise" })).key);
    officerApi = service.api.withKey((await keys.create({ email: "compliance@ctrl.test", plan: "Starter" })).key);
    strangerApi = service.api.withKey((await keys.create({ email: "stranger@ctrl.test", plan: "Starter" })).key);
    for (const w of [issuer, alice, bob, carol, dave, erin]) await service.services.signers.add(w.address, "all-keys");
    stream = await EventStreamClient.open(
      service.url,
      {
        types:
          "token.frozen,token.address_frozen,token.forced_transfer,token.wallet_recovered,token.paused,token.role_changed",
      },
      { "x-api-key": api.apiKey! },
    );
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@ctrl.test",
      name: "Control Holdings",
      tokenSymbol: symbol,
      supplyCap: "100000",
      preMints: [{ amount: "1000" }, { amount: "500" }, { amount: "300" }],
      initialHolders: [
        { walletAddress: alice.address, email: "alice@ctrl.test" },
        { walletAddress: bob.address, email: "bob@ctrl.test" },
        { walletAddress: carol.address, email: "carol@ctrl.test" },
      ],
    });
    tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;
  });
  after(async () => {
    stream?.close();
    await service?.stop();
    await sandbox?.close();
  });

  /** The new wallet's signed request for the recovery of `lost` into it, as the service asks for it. */
  const recoveryProof = async (lost: string, newWallet: Wallet) => {
    const asked = await prepare(api, {
      method: "recoverWallet",
      signerAddress: issuer.address,
      lostWallet: lost,
      newWallet: newWallet.address,
    });
    expect(asked.status, JSON.stringify(asked.body)).to.equal(400);
    expect(asked.body.error.param).to.equal("newWalletSignature");
    const message: string = asked.body.error.details.messageToSign;
    return { newWalletMessage: message, newWalletSignature: await newWallet.signMessage(message) };
  };
  const recoveryDelay = async () => Number(await token().recoveryDelay());

  it("an investor who lost its keys gets its tokens and unclaimed dividends on a new wallet after the delay, proven by the new wallet, and claims from it", async () => {
    await execute(api, issuer, {
      method: "approve",
      chainId,
      tokenSymbol: "USDC",
      spenderAddress: tokenAddress,
      amount: "1800",
      tokenizerAddress: issuer.address,
    });
    await execute(api, issuer, { method: "dividendDistribution", chainId, tokenSymbol: symbol, amount: "1800" });
    const unclaimed = await token().withdrawableDividendOf(alice.address);
    expect(parseUnits("1000", 6) - unclaimed <= 1n).to.equal(true);

    const newWallet = await freshWallet();
    const proof = await recoveryProof(alice.address, newWallet);
    // A signature by another wallet, or over another lost wallet, is refused before anything is signed.
    const forged = await freshWallet();
    refused(
      await prepare(api, {
        method: "recoverWallet",
        signerAddress: issuer.address,
        lostWallet: alice.address,
        newWallet: newWallet.address,
        newWalletMessage: proof.newWalletMessage,
        newWalletSignature: await forged.signMessage(proof.newWalletMessage),
      }),
      400,
      /newWalletSignature was made by/,
    );
    refused(
      await prepare(api, {
        method: "recoverWallet",
        signerAddress: issuer.address,
        lostWallet: bob.address,
        newWallet: newWallet.address,
        ...proof,
      }),
      400,
      /statement is not the request to recover/,
    );

    // alice was bound to her investor at the premint; the new wallet is bound (and whitelisted) first, then the request.
    const requested = await execute(api, issuer, {
      method: "recoverWallet",
      chainId,
      tokenSymbol: symbol,
      lostWallet: alice.address,
      newWallet: newWallet.address,
      ...proof,
    });
    expect(requested.prepared.transactions).to.have.length(2);
    expect(requested.prepared.info).to.include({
      tokenBalance: "1000",
      frozenAmount: "0",
      investorEmail: "alice@ctrl.test",
      recoveryDelaySeconds: await recoveryDelay(),
    });
    expect(await token().investorOf(newWallet.address)).to.equal(await token().investorOf(alice.address));
    // Nothing moved yet, and the request cannot be executed before the delay.
    expect(await holding(alice.address)).to.include({ tokenBalance: "1000", whitelisted: true });
    refused(
      await prepare(api, { method: "executeWalletRecovery", signerAddress: issuer.address, lostWallet: alice.address }),
      400,
      /may be executed from .* recovery delay/,
    );

    await jumpTo((await chainNow()) + (await recoveryDelay()) + 1);
    const executed = await execute(api, newWallet, {
      method: "executeWalletRecovery",
      chainId,
      tokenSymbol: symbol,
      lostWallet: alice.address,
    });
    expect(executed.prepared.info).to.include({ tokenBalance: "1000", newWallet: newWallet.address });
    expect(await holding(newWallet.address)).to.include({
      tokenBalance: "1000",
      whitelisted: true,
      frozenAmount: "0",
      unfrozenBalance: "1000",
      addressFrozen: false,
    });
    expect(await holding(alice.address)).to.include({ tokenBalance: "0", whitelisted: false });
    const investor = (await api.get("/get-investor-info", { tokenSymbol: symbol, email: "alice@ctrl.test" })).body;
    expect(investor.wallets.map((w: any) => [w.walletAddress, w.tokenBalance])).to.deep.include.members([
      [newWallet.address, "1000"],
    ]);

    const before = await usdc().balanceOf(newWallet.address);
    await execute(api, newWallet, { method: "claimDividends", chainId, tokenSymbol: symbol });
    expect((await usdc().balanceOf(newWallet.address)) - before).to.equal(unclaimed);
    refused(
      await prepare(api, { method: "claimDividends", signerAddress: alice.address }),
      400,
      /no CTRL dividends to claim/,
    );

    await stream.waitFor("token.wallet_recovered", (events) =>
      events.some((e) => e.event === "token.wallet_recovered"),
    );
    const event = stream.events.find((e) => e.event === "token.wallet_recovered")!;
    expect(event.data.data).to.include({
      tokenSymbol: symbol,
      action: "recovery",
      account: alice.address,
      counterparty: newWallet.address,
      agent: newWallet.address,
    });
    const controls = (await api.get("/get-token-controls", { tokenSymbol: symbol, account: alice.address })).body;
    expect(controls.controls.map((c: any) => c.action)).to.include.members(["recovery_requested", "recovery"]);
  });

  it("a recovery agent cannot take a wallet in use: another investor's wallet is refused, and the holder cancels a request for its own", async () => {
    // The agent's own wallet, bound to another investor, is refused before anything is signed.
    const bobBalance = await token().balanceOf(bob.address);
    const mine = await freshWallet();
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: mine.address, investorEmail: "agent@ctrl.test", whitelistStatus: true }],
    });
    const seizure = refused(
      await prepare(api, {
        method: "recoverWallet",
        signerAddress: issuer.address,
        lostWallet: bob.address,
        newWallet: mine.address,
        ...(await recoveryProof(bob.address, mine)),
      }),
      400,
      /is bound to another investor than bob@ctrl.test/,
    );
    expect(seizure.param).to.equal("newWallet");

    // An accomplice's fresh wallet, bound to bob by the agent's request, still waits for the delay: bob cancels.
    const accomplice = await freshWallet();
    await execute(api, issuer, {
      method: "recoverWallet",
      chainId,
      tokenSymbol: symbol,
      lostWallet: bob.address,
      newWallet: accomplice.address,
      ...(await recoveryProof(bob.address, accomplice)),
    });
    expect((await token().pendingRecovery(bob.address)).newWallet).to.equal(accomplice.address);
    refused(
      await prepare(api, { method: "cancelWalletRecovery", signerAddress: carol.address, lostWallet: bob.address }),
      400,
      /does not hold RECOVERY_ROLE/,
    );
    await execute(api, bob, { method: "cancelWalletRecovery", chainId, tokenSymbol: symbol, lostWallet: bob.address });
    expect((await token().pendingRecovery(bob.address)).newWallet).to.equal(ZeroAddress);
    await jumpTo((await chainNow()) + (await recoveryDelay()) + 1);
    refused(
      await prepare(api, { method: "executeWalletRecovery", signerAddress: issuer.address, lostWallet: bob.address }),
      400,
      /no recovery of .* is pending/,
    );
    expect(await token().balanceOf(bob.address)).to.equal(bobBalance);
    const controls = (await api.get("/get-token-controls", { tokenSymbol: symbol, account: bob.address })).body;
    expect(controls.controls.map((c: any) => c.action)).to.include.members([
      "recovery_requested",
      "recovery_cancelled",
    ]);
  });

  it("a court-ordered freeze and forced transfer, by a compliance officer with its own key and the roles the issuer granted", async () => {
    // Without a role the officer's key does not even see the token; the issuer grants FREEZER and ENFORCER.
    refused(
      await prepare(officerApi, {
        method: "freezeTokens",
        signerAddress: officer.address,
        investorAddress: bob.address,
        amount: "200",
      }),
      403,
      /Unauthorized token symbol/,
    );
    for (const role of ["freezer", "ENFORCER_ROLE"]) {
      const granted = await execute(api, issuer, {
        method: "grantTokenRole",
        chainId,
        tokenSymbol: symbol,
        role,
        account: officer.address,
      });
      expect(granted.prepared.info.account).to.equal(officer.address);
    }
    refused(
      await prepare(api, {
        method: "grantTokenRole",
        signerAddress: issuer.address,
        role: "FREEZER_ROLE",
        account: officer.address,
      }),
      400,
      /already holds FREEZER_ROLE/,
    );
    refused(
      await prepare(api, {
        method: "grantTokenRole",
        signerAddress: issuer.address,
        role: "janitor",
        account: officer.address,
      }),
      400,
      /^role must be one of/,
    );

    // The order: freeze 200 of bob's 500.
    await execute(officerApi, officer, {
      method: "freezeTokens",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
      amount: "200",
    });
    expect(await holding(bob.address)).to.include({
      tokenBalance: "500",
      frozenAmount: "200",
      unfrozenBalance: "300",
      addressFrozen: false,
    });
    const info = (await api.get("/get-investor-info", { tokenSymbol: symbol, email: "bob@ctrl.test" })).body;
    expect(info).to.include({ frozenAmount: "200", unfrozenBalance: "300" });

    // Bob can move 300, not 301: the check and the prepare answer the same code.
    const check = (
      await api.get("/check-transfer", { tokenSymbol: symbol, from: bob.address, to: carol.address, amount: "301" })
    ).body;
    expect(check).to.include({
      allowed: false,
      restrictionCode: 7,
      restriction: "INSUFFICIENT_UNFROZEN_BALANCE",
      message: "The amount exceeds the sender's unfrozen balance",
    });
    expect(
      (await api.get("/check-transfer", { tokenSymbol: symbol, from: bob.address, to: carol.address, amount: "300" }))
        .body,
    ).to.include({ allowed: true, restrictionCode: 0 });
    const error = refused(
      await prepare(api, { method: "transferTo", signerAddress: bob.address, to: carol.address, amount: "301" }),
      400,
      /part of its balance is frozen/,
    );
    expect(error.details).to.include({ restrictionCode: 7, restriction: "INSUFFICIENT_UNFROZEN_BALANCE" });

    // Then the whole address, then the forced transfer of everything to the court's wallet (dave).
    await execute(officerApi, officer, {
      method: "freezeAddress",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
    });
    expect(
      (await api.get("/check-transfer", { tokenSymbol: symbol, from: bob.address, to: carol.address, amount: "1" }))
        .body,
    ).to.include({ restrictionCode: 4, restriction: "SENDER_FROZEN" });
    expect(
      (await api.get("/check-transfer", { tokenSymbol: symbol, from: carol.address, to: bob.address, amount: "1" }))
        .body,
    ).to.include({ restrictionCode: 5, restriction: "RECEIVER_FROZEN" });
    expect(
      refused(
        await prepare(api, { method: "transferTo", signerAddress: bob.address, to: carol.address, amount: "1" }),
        400,
        /is frozen on CTRL/,
      ).param,
    ).to.equal("signerAddress");
    refused(
      await prepare(officerApi, {
        method: "forcedTransfer",
        signerAddress: officer.address,
        from: bob.address,
        to: dave.address,
        amount: "500",
      }),
      400,
      /cannot receive CTRL: The receiver is not whitelisted/,
    );
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: dave.address, investorEmail: "court@ctrl.test", whitelistStatus: true }],
    });
    const forced = await execute(officerApi, officer, {
      method: "forcedTransfer",
      chainId,
      tokenSymbol: symbol,
      from: bob.address,
      to: dave.address,
      amount: "500",
      reason: "Court order 2026/117",
    });
    expect(forced.prepared.info).to.include({ frozenTaken: "200", frozenAfter: "0" });
    expect(await holding(bob.address)).to.include({ tokenBalance: "0", frozenAmount: "0", addressFrozen: true });
    expect(await holding(dave.address)).to.include({ tokenBalance: "500" });
    expect(await token().totalSupply()).to.equal(tokens("1800"));

    // The officer holds no PAUSER_ROLE; a key whose signer holds no role at all is told it may not see the token.
    refused(
      await prepare(officerApi, { method: "pauseToken", signerAddress: officer.address }),
      403,
      /Unauthorized token symbol/,
    );
    refused(
      await prepare(api, { method: "pauseToken", signerAddress: officer.address }),
      400,
      /does not hold PAUSER_ROLE/,
    );
    refused(
      await prepare(strangerApi, {
        method: "freezeAddress",
        signerAddress: carol.address,
        investorAddress: dave.address,
      }),
      403,
      /Unauthorized token symbol/,
    );
    await execute(api, issuer, {
      method: "revokeTokenRole",
      chainId,
      tokenSymbol: symbol,
      role: "FREEZER_ROLE",
      account: officer.address,
    });
    // Without FREEZER_ROLE the officer's own key no longer reaches the freezes.
    refused(
      await prepare(officerApi, {
        method: "freezeAddress",
        signerAddress: officer.address,
        investorAddress: bob.address,
        freeze: false,
      }),
      403,
      /Unauthorized token symbol/,
    );
    await execute(api, issuer, {
      method: "freezeAddress",
      chainId,
      tokenSymbol: symbol,
      investorAddress: bob.address,
      freeze: "false",
    });

    await stream.waitFor("the freeze and forced-transfer events", (events) =>
      ["token.frozen", "token.address_frozen", "token.forced_transfer", "token.role_changed"].every((t) =>
        events.some((e) => e.event === t),
      ),
    );
    // (The recovery's move is a forced transfer too: this is the one of bob's holding.)
    const forcedEvent = stream.events.find(
      (e) => e.event === "token.forced_transfer" && e.data.data.account === bob.address,
    )!;
    expect(forcedEvent.data.data).to.include({
      account: bob.address,
      counterparty: dave.address,
      amount: "500",
      agent: officer.address,
    });
    const frozenEvents = stream.events.filter((e) => e.event === "token.frozen").map((e) => e.data.data.amount);
    expect(frozenEvents).to.include.members(["200", "0"]);
  });

  it("a paused token refuses holder transfers with the PAUSED code; the reads show it", async () => {
    await execute(api, issuer, { method: "pauseToken", chainId, tokenSymbol: symbol });
    refused(await prepare(api, { method: "pauseToken", signerAddress: issuer.address }), 400, /already paused/);
    expect(await holding(carol.address)).to.include({ tokenPaused: true });
    expect(
      (await api.get("/check-transfer", { tokenSymbol: symbol, from: carol.address, to: dave.address, amount: "1" }))
        .body,
    ).to.include({ restrictionCode: 1, restriction: "PAUSED" });
    expect(
      refused(
        await prepare(api, { method: "transferTo", signerAddress: carol.address, to: dave.address, amount: "1" }),
        400,
        /is paused/,
      ).details,
    ).to.include({ restrictionCode: 1 });
    refused(
      await prepare(api, { method: "burnToken", signerAddress: carol.address, amount: "1" }),
      400,
      /Transfers of this token are paused/,
    );
    await execute(api, issuer, { method: "unpauseToken", chainId, tokenSymbol: symbol });
    await execute(api, carol, { method: "transferTo", chainId, tokenSymbol: symbol, to: dave.address, amount: "1" });
  });

  it("an offering whose investors the token no longer accepts: the claim answers why, the issuer delivers to a recovery wallet or refunds", async () => {
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    const start = (await chainNow()) + 60;
    await execute(api, issuer, {
      method: "newSto",
      chainId,
      tokenSymbol: symbol,
      offeringName: "Series R",
      tokenAmount: "1000",
      startDate: iso(start),
      endDate: iso(start + 86_400),
      minRaiseUSD: "1000",
      maxRaiseUSD: "10000",
      minInvestment: "100",
      maxInvestment: "5000",
    });
    await jumpTo(start + 1);
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: erin.address, investorEmail: "erin@ctrl.test", whitelistStatus: true }],
    });
    for (const [w, amount] of [
      [carol, "2000"],
      [erin, "1500"],
    ] as const) {
      await execute(api, w, {
        method: "newInvest",
        chainId,
        tokenSymbol: symbol,
        investorAddress: w.address,
        investorEmail: `${w.address.slice(2, 8)}@ctrl.test`,
        investmentAmount: amount,
      });
    }
    await execute(api, issuer, {
      method: "closeOffer",
      chainId,
      tokenSymbol: symbol,
      tokenizerEmail: "issuer@ctrl.test",
    });
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [carol, erin].map((w) => ({ investorAddress: w.address, whitelistStatus: false })),
    });

    const error = refused(
      await prepare(api, { method: "claimTokens", investorAddress: carol.address }),
      400,
      /cannot receive CTRL .*resolveOfferingClaim/,
    );
    expect(error.details).to.include({ restrictionCode: 3, restriction: "RECEIVER_NOT_WHITELISTED" });
    refused(
      await prepare(api, {
        method: "resolveOfferingClaim",
        signerAddress: issuer.address,
        investorAddress: dave.address,
        refund: true,
      }),
      400,
      /did not invest/,
    );
    refused(
      await prepare(api, {
        method: "resolveOfferingClaim",
        signerAddress: issuer.address,
        investorAddress: carol.address,
      }),
      400,
      /either deliverTo .* or refund/,
    );

    // The issuer cannot deliver carol's tokens to a wallet of its own: only to a wallet bound to carol.
    refused(
      await prepare(api, {
        method: "resolveOfferingClaim",
        signerAddress: issuer.address,
        investorAddress: carol.address,
        deliverTo: issuer.address,
      }),
      400,
      /is not bound to the same investor as/,
    );

    // carol lost her keys too: her tokens go to her new wallet, whitelisted for her (which binds it to her).
    const carolNew = await freshWallet();
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: carolNew.address, investorEmail: "carol@ctrl.test", whitelistStatus: true }],
    });
    const delivered = await execute(api, issuer, {
      method: "resolveOfferingClaim",
      chainId,
      tokenSymbol: symbol,
      investorAddress: carol.address,
      deliverTo: carolNew.address,
    });
    expect(delivered.prepared.info).to.include({
      outcome: "delivered",
      tokens: "200",
      investorRestriction: "RECEIVER_NOT_WHITELISTED",
    });
    expect(await token().balanceOf(carolNew.address)).to.equal(tokens("200"));

    // erin is refunded by the issuer (approve, then refund: two transactions).
    const before = await usdc().balanceOf(erin.address);
    const refunded = await execute(api, issuer, {
      method: "resolveOfferingClaim",
      chainId,
      tokenSymbol: symbol,
      investorAddress: erin.address,
      refund: "true",
    });
    expect(refunded.prepared.transactions).to.have.length(2);
    expect((await usdc().balanceOf(erin.address)) - before).to.equal(parseUnits("1500", 6));
    refused(
      await prepare(api, {
        method: "resolveOfferingClaim",
        signerAddress: issuer.address,
        investorAddress: erin.address,
        refund: true,
      }),
      400,
      /already settled/,
    );

    // Nothing is stuck: every position settled, no reservation left.
    expect(await token().reservedSupply()).to.equal(0n);
    const statuses = (
      await api.get("/get-investor-info", { tokenSymbol: symbol, email: `${erin.address.slice(2, 8)}@ctrl.test` })
    ).body.investments.map((i: any) => i.status);
    expect(statuses).to.deep.equal(["refund"]);
  });

  it("the cap table at a past block equals the balances the chain had at that block, paged and as CSV", async () => {
    await execute(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: carol.address, whitelistStatus: true }],
    });
    const past = await providerFor(sandbox.sepolia).getBlockNumber();
    await execute(api, dave, {
      method: "transferTo",
      chainId,
      tokenSymbol: symbol,
      to: carol.address,
      amount: "123.5",
    });
    await execute(api, issuer, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [{ investorAddress: erin.address, investorEmail: "erin@ctrl.test", amount: "10" }],
    });

    const all = (await api.get("/get-holders", { tokenSymbol: symbol, blockNumber: String(past), limit: "100" })).body;
    expect(all).to.include({ tokenSymbol: symbol, blockNumber: past, checkedAgainstChain: true });
    const contract = token();
    expect(all.totalSupplyRaw).to.equal((await contract.totalSupply({ blockTag: past })).toString());
    for (const h of all.holders) {
      expect(h.balanceRaw, h.address).to.equal((await contract.balanceOf(h.address, { blockTag: past })).toString());
      expect(h.frozenAmountRaw, h.address).to.equal(
        (await contract.getFrozenTokens(h.address, { blockTag: past })).toString(),
      );
    }
    const sum = all.holders.reduce((s: bigint, h: any) => s + BigInt(h.balanceRaw), 0n);
    expect(sum.toString()).to.equal(all.totalSupplyRaw);
    expect(all.holders.map((h: any) => h.address)).to.not.include(erin.address); // minted after that block
    expect(all.holders[0].shareOfSupply).to.match(/^\d+(\.\d+)?$/);

    const now = (await api.get("/get-holders", { tokenSymbol: symbol })).body;
    expect(now.holders.find((h: any) => h.address === erin.address)).to.include({ balance: "10" });
    expect(now.holders.find((h: any) => h.address === carol.address).balance).to.equal(
      String(Number(all.holders.find((h: any) => h.address === carol.address)?.balance ?? "0") + 123.5),
    );

    const first = (
      await api.get("/get-holders", { tokenSymbol: symbol, blockNumber: String(past), limit: "2", offset: "0" })
    ).body;
    const second = (
      await api.get("/get-holders", { tokenSymbol: symbol, blockNumber: String(past), limit: "2", offset: "2" })
    ).body;
    expect([...first.holders, ...second.holders].map((h: any) => h.address)).to.deep.equal(
      all.holders.slice(0, 4).map((h: any) => h.address),
    );
    expect(first.total).to.equal(all.total);

    const csv = await fetch(`${service.url}/get-holders?tokenSymbol=${symbol}&blockNumber=${past}&format=csv`, {
      headers: { "x-api-key": api.apiKey! },
    });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get("content-type")).to.match(/^text\/csv/);
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).to.equal(
      "address,email,balance,balanceRaw,frozenAmount,frozenAmountRaw,addressFrozen,shareOfSupply",
    );
    expect(lines.slice(1).map((l) => l.split(",")[0])).to.deep.equal(all.holders.map((h: any) => h.address));

    const tooEarly = await api.get("/get-holders", { tokenSymbol: symbol, blockNumber: "1" });
    expect(tooEarly.status).to.equal(400);
    expect(tooEarly.body.error.param).to.equal("blockNumber");
    expect(
      (
        await api.get("/check-transfer", {
          tokenSymbol: symbol,
          from: ZeroAddress,
          to: dave.address,
          amount: "1000000",
        })
      ).body,
    ).to.include({ restrictionCode: 8, restriction: "SUPPLY_CAP_EXCEEDED" });
  });
});
