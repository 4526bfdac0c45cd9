/**
 * Issue 48, "a deployed token can be fixed": SecurityToken and StoEscrow sit behind ERC-1967 proxies and move to a new
 * implementation only when the factory's owner published it, the token's tokenizer scheduled it, and
 * DelayedUpgrades' 7 days passed. A token in full use (holders, frozen amounts and addresses, investor bindings, a
 * pending recovery, roles, unclaimed dividends, an open offering with positions) is upgraded and nothing is lost;
 * then every refusal of the upgrade path.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { SecurityToken, StoEscrow } from "../../../typechain-types";
import {
  DAY,
  INVESTOR,
  ROLE,
  SECURITY_TOKEN_STORAGE,
  TOKEN_SLOT,
  TOKENS,
  UPGRADE_DELAY,
  USDC,
  createTokenization,
  deployFactoryFixture,
  magnifiedEntitlementOf,
  tokenizationParams,
} from "./helpers";

const IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";

/**
 * A capped token with alice (1000, 100 frozen), aliceSpare (alice's second wallet, 50), bob (500, address-frozen),
 * carol (200) and dave (whitelisted, empty, bound to bob's investor); a FREEZER agent; a recovery of alice into
 * aliceSpare pending; two dividend distributions of which alice claimed the first; an allowance; a recovery delay of
 * 3 days; and an open 30-day offering in which alice and carol hold positions. V2 implementations are deployed, not
 * published.
 */
async function tokenInUseFixture() {
  const base = await deployFactoryFixture();
  const { factory, tokenizer, alice, bob, carol, dave, usdc } = base;
  const [aliceSpare, agent] = (await ethers.getSigners()).slice(7, 9);
  const { token, escrow } = await createTokenization(
    factory,
    tokenizer,
    tokenizationParams(await usdc.getAddress(), {
      supplyCap: TOKENS(10_000),
      initialHolders: [alice.address, aliceSpare.address, bob.address, carol.address, dave.address],
      initialInvestorIds: [INVESTOR("alice"), INVESTOR("alice"), INVESTOR("bob"), INVESTOR("carol"), INVESTOR("bob")],
      preMints: [TOKENS(1000), TOKENS(50), TOKENS(500), TOKENS(200), 0n],
    }),
  );
  for (const who of [tokenizer, alice, carol]) {
    await usdc.mint(who.address, USDC(1_000_000));
    await usdc.connect(who).approve(escrow.target, ethers.MaxUint256);
  }
  await usdc.connect(tokenizer).approve(token.target, ethers.MaxUint256);
  await token.connect(tokenizer).grantRole(ROLE.FREEZER, agent.address);
  await token.connect(tokenizer).setRecoveryDelay(3 * DAY);
  await token.connect(tokenizer).distributeDividends(777_777n);
  await token.connect(alice).claimDividends();
  await token.connect(tokenizer).distributeDividends(USDC(1750) + 3n);
  await token.connect(agent).setFrozenTokens(alice.address, TOKENS(100));
  await token.connect(agent).setAddressFrozen(bob.address, true);
  await token.connect(tokenizer).requestRecovery(alice.address, aliceSpare.address);
  await token.connect(carol).approve(alice.address, TOKENS(7));
  const start = (await time.latest()) + 10;
  await escrow.connect(tokenizer).newOffering(TOKENS(1000), 0n, USDC(1000), USDC(13_000), 0n, USDC(13_000), start, start + 30 * DAY);
  await time.increaseTo(start);
  await escrow.connect(alice).invest(USDC(1999));
  await escrow.connect(carol).invest(USDC(2500));
  const tokenV2 = await ethers.deployContract("SecurityTokenV2Mock");
  const escrowV2 = await ethers.deployContract("StoEscrowV2Mock");
  return { ...base, token, escrow, aliceSpare, agent, tokenV2, escrowV2 };
}
type Ctx = Awaited<ReturnType<typeof tokenInUseFixture>>;

/** Everything a holder, the issuer or an investor could lose in an upgrade, as plain values. */
async function stateOf(c: Ctx, token: SecurityToken, escrow: StoEscrow) {
  const accounts = [c.alice, c.aliceSpare, c.bob, c.carol, c.dave, c.outsider, c.agent, c.tokenizer].map((s) => s.address);
  const raw = async (slot: bigint) => ethers.provider.getStorage(token.target, SECURITY_TOKEN_STORAGE + slot);
  const perAccount = await Promise.all(
    accounts.map(async (a) => ({
      balance: await token.balanceOf(a),
      frozen: await token.getFrozenTokens(a),
      addressFrozen: await token.isFrozen(a),
      whitelisted: await token.isWhitelisted(a),
      investor: await token.investorOf(a),
      magnifiedEntitlement: await magnifiedEntitlementOf(token, a),
      accumulative: await token.accumulativeDividendOf(a),
      withdrawable: await token.withdrawableDividendOf(a),
      withdrawn: await token.withdrawnDividendOf(a),
      recovery: [...(await token.pendingRecovery(a))],
      roles: await Promise.all(Object.values(ROLE).map((r) => token.hasRole(r, a))),
      invested: await escrow.invested(1, a),
      tokensOwed: await escrow.tokensOwed(1, a),
      claimed: await escrow.claimed(1, a),
      remainder: await escrow.remainderOf(1, a),
      paymentBalance: await c.usdc.balanceOf(a),
    })),
  );
  return {
    token: {
      name: await token.name(),
      symbol: await token.symbol(),
      decimals: await token.decimals(),
      totalSupply: await token.totalSupply(),
      supplyCap: await token.supplyCap(),
      reservedSupply: await token.reservedSupply(),
      paymentToken: await token.paymentToken(),
      escrow: await token.escrow(),
      tokenizer: await token.tokenizer(),
      pendingDefaultAdmin: [...(await token.pendingDefaultAdmin())],
      paused: await token.paused(),
      recoveryDelay: await token.recoveryDelay(),
      totalDividendsDistributed: await token.totalDividendsDistributed(),
      magnifiedDividendPerShare: await raw(TOKEN_SLOT.magnifiedDividendPerShare),
      carriedRemainder: await raw(TOKEN_SLOT.carriedRemainder),
      registry: await token.implementationRegistry(),
      allowance: await token.allowance(c.carol.address, c.alice.address),
      paymentHeld: await c.usdc.balanceOf(token.target),
    },
    escrow: {
      token: await escrow.token(),
      currentOfferingId: await escrow.currentOfferingId(),
      offering: [...(await escrow.offering(1))],
      status: await escrow.status(1),
      registry: await escrow.implementationRegistry(),
      paymentHeld: await c.usdc.balanceOf(escrow.target),
    },
    accounts: perAccount,
  };
}

async function scheduleBoth(c: Ctx) {
  await c.factory.connect(c.deployer).publishImplementations(c.tokenV2.target, c.escrowV2.target);
  await c.token.connect(c.tokenizer).scheduleUpgrade(c.tokenV2.target);
  await c.escrow.connect(c.tokenizer).scheduleUpgrade(c.escrowV2.target);
}

describe("Delayed upgrades of SecurityToken and StoEscrow (ERC-1967, UUPS)", function () {
  describe("a token in use, upgraded after the delay to published V2 implementations", function () {
    it("loses nothing: balances, freezes, bindings, the pending recovery, dividends, roles, the offering and its positions", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, escrow, tokenizer, tokenV2, escrowV2 } = c;
      const before = await stateOf(c, token, escrow);
      // The fixture has what must survive.
      expect(before.accounts[0].frozen).to.equal(TOKENS(100));
      expect(before.accounts[0].recovery[0]).to.equal(c.aliceSpare.address);
      expect(before.accounts[2].addressFrozen).to.equal(true);
      expect(before.accounts[0].withdrawn).to.be.greaterThan(0n);
      expect(before.accounts[1].withdrawable).to.be.greaterThan(0n);
      expect(before.accounts[3].tokensOwed).to.be.greaterThan(0n);
      expect(before.token.reservedSupply).to.equal(TOKENS(1000));

      await c.factory.connect(c.deployer).publishImplementations(tokenV2.target, escrowV2.target);
      const at = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(at);
      await expect(token.connect(tokenizer).scheduleUpgrade(tokenV2.target))
        .to.emit(token, "UpgradeScheduled")
        .withArgs(tokenV2.target, at + UPGRADE_DELAY, tokenizer.address);
      await expect(escrow.connect(tokenizer).scheduleUpgrade(escrowV2.target))
        .to.emit(escrow, "UpgradeScheduled")
        .withArgs(escrowV2.target, at + 1 + UPGRADE_DELAY, tokenizer.address);
      // Holders see it coming.
      expect(await token.scheduledUpgrade()).to.deep.equal([tokenV2.target, BigInt(at + UPGRADE_DELAY)]);

      await time.increaseTo(at + 1 + UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.emit(token, "Upgraded")
        .withArgs(tokenV2.target);
      await expect(escrow.connect(tokenizer).upgradeToAndCall(escrowV2.target, "0x"))
        .to.emit(escrow, "Upgraded")
        .withArgs(escrowV2.target);

      const tokenAfter = await ethers.getContractAt("SecurityTokenV2Mock", token.target);
      const escrowAfter = await ethers.getContractAt("StoEscrowV2Mock", escrow.target);
      expect(await tokenAfter.version()).to.equal("2");
      expect(await escrowAfter.version()).to.equal("2");
      expect(await tokenAfter.implementation()).to.equal(tokenV2.target);
      expect(ethers.getAddress(ethers.dataSlice(await ethers.provider.getStorage(token.target, IMPLEMENTATION_SLOT), 12))).to.equal(
        tokenV2.target,
      );
      expect(await tokenAfter.scheduledUpgrade()).to.deep.equal([ethers.ZeroAddress, 0n]);
      expect(await stateOf(c, tokenAfter, escrowAfter)).to.deep.equal(before);
    });

    it("and everything goes on under V2: the recovery executes, dividends are claimed, the offering closes and delivers", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { usdc, tokenizer, alice, aliceSpare, bob, carol, agent } = c;
      await scheduleBoth(c);
      await time.increase(UPGRADE_DELAY);
      await c.token.connect(tokenizer).upgradeToAndCall(c.tokenV2.target, "0x");
      await c.escrow.connect(tokenizer).upgradeToAndCall(c.escrowV2.target, "0x");
      const token = await ethers.getContractAt("SecurityTokenV2Mock", c.token.target);
      const escrow = await ethers.getContractAt("StoEscrowV2Mock", c.escrow.target);

      const lostEntitlement = await magnifiedEntitlementOf(token, alice.address);
      const heirEntitlement = await magnifiedEntitlementOf(token, aliceSpare.address);
      await expect(token.connect(aliceSpare).executeRecovery(alice.address))
        .to.emit(token, "ForcedTransfer")
        .withArgs(alice.address, aliceSpare.address, TOKENS(1000));
      expect(await magnifiedEntitlementOf(token, aliceSpare.address)).to.equal(heirEntitlement + lostEntitlement);
      expect(await token.getFrozenTokens(aliceSpare.address)).to.equal(TOKENS(100));

      // bob's dividends stay held while he is frozen, and are paid after.
      await expect(token.connect(bob).claimDividends()).to.be.revertedWithCustomError(token, "DividendsHeld");
      await token.connect(agent).setAddressFrozen(bob.address, false);
      const bobOwed = await token.withdrawableDividendOf(bob.address);
      await expect(token.connect(bob).claimDividends()).to.changeTokenBalance(usdc, bob, bobOwed);

      await escrow.connect(tokenizer).close();
      // alice's position was taken from a wallet recovered since: the tokenizer redirects it to her new wallet.
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(escrow, "InvestorCannotReceive");
      await escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      await escrow.claim(1, carol.address);
      expect(await token.balanceOf(carol.address)).to.equal(TOKENS(200) + (USDC(2500) * TOKENS(1000)) / USDC(13_000));
      await escrow.connect(tokenizer).withdrawProceeds(1);
      expect(await token.reservedSupply()).to.equal(0n);
      await token.connect(carol).transfer(bob.address, TOKENS(1));
    });
  });

  describe("refusals", function () {
    it("an implementation the factory does not publish cannot be scheduled (UpgradeNotPublished)", async function () {
      const { token, escrow, tokenizer, tokenV2, escrowV2 } = await loadFixture(tokenInUseFixture);
      await expect(token.connect(tokenizer).scheduleUpgrade(tokenV2.target))
        .to.be.revertedWithCustomError(token, "UpgradeNotPublished")
        .withArgs(tokenV2.target);
      await expect(escrow.connect(tokenizer).scheduleUpgrade(escrowV2.target))
        .to.be.revertedWithCustomError(escrow, "UpgradeNotPublished")
        .withArgs(escrowV2.target);
      await expect(token.connect(tokenizer).scheduleUpgrade(ethers.ZeroAddress))
        .to.be.revertedWithCustomError(token, "UpgradeNotPublished")
        .withArgs(ethers.ZeroAddress);
    });

    it("an upgrade that was not scheduled, or to another implementation than the scheduled one (UpgradeNotScheduled)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, tokenV2, tokenImpl, factory, deployer, escrowV2 } = c;
      await factory.connect(deployer).publishImplementations(tokenV2.target, escrowV2.target);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(tokenV2.target);
      await expect(token.connect(tokenizer).upgradeToAndCall(ethers.ZeroAddress, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(ethers.ZeroAddress);
      await token.connect(tokenizer).scheduleUpgrade(tokenV2.target);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenImpl.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(tokenImpl.target);
    });

    it("before the delay has passed (UpgradeNotReady), to the second", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, escrow, tokenizer, tokenV2, escrowV2 } = c;
      await scheduleBoth(c);
      const [, readyAt] = await token.scheduledUpgrade();
      await time.setNextBlockTimestamp(readyAt - 1n);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotReady")
        .withArgs(readyAt);
      const [, escrowReadyAt] = await escrow.scheduledUpgrade();
      await expect(escrow.connect(tokenizer).upgradeToAndCall(escrowV2.target, "0x"))
        .to.be.revertedWithCustomError(escrow, "UpgradeNotReady")
        .withArgs(escrowReadyAt);
      // Each block is one second later: the escrow's schedule (one second after the token's) is ready now.
      expect(escrowReadyAt).to.equal(readyAt + 1n);
      await expect(escrow.connect(tokenizer).upgradeToAndCall(escrowV2.target, "0x")).to.emit(escrow, "Upgraded");
      expect(await time.latest()).to.equal(escrowReadyAt);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x")).to.emit(token, "Upgraded");
      // The schedule was consumed.
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(tokenV2.target);
    });

    it("an implementation withdrawn by the factory's owner during the delay cannot be executed (UpgradeNotPublished)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, tokenV2, tokenImpl, escrowImpl, factory, deployer } = c;
      await scheduleBoth(c);
      // Found faulty: the owner makes the old version current again and withdraws V2.
      await factory.connect(deployer).publishImplementations(tokenImpl.target, escrowImpl.target);
      await factory.connect(deployer).withdrawImplementation(tokenV2.target);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotPublished")
        .withArgs(tokenV2.target);
      expect(await token.implementation()).to.equal(tokenImpl.target);
    });

    it("anyone but the tokenizer (a role holder included) may neither schedule, cancel nor execute", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, escrow, tokenizer, agent, alice, tokenV2, escrowV2 } = c;
      await c.factory.connect(c.deployer).publishImplementations(tokenV2.target, escrowV2.target);
      await expect(token.connect(agent).scheduleUpgrade(tokenV2.target))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
      await expect(escrow.connect(agent).scheduleUpgrade(escrowV2.target))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(agent.address);
      await token.connect(tokenizer).scheduleUpgrade(tokenV2.target);
      await escrow.connect(tokenizer).scheduleUpgrade(escrowV2.target);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(alice).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.ADMIN);
      await expect(escrow.connect(alice).upgradeToAndCall(escrowV2.target, "0x"))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(alice.address);
      await expect(token.connect(agent).cancelUpgrade())
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
      await expect(escrow.connect(agent).cancelUpgrade()).to.be.revertedWithCustomError(escrow, "NotTokenizer").withArgs(agent.address);
      // The factory's owner publishes, but does not upgrade anyone's token.
      await expect(token.connect(c.deployer).upgradeToAndCall(tokenV2.target, "0x")).to.be.revertedWithCustomError(
        token,
        "AccessControlUnauthorizedAccount",
      );
    });

    it("an old tokenizer cannot execute an upgrade it scheduled before handing over; the new one can", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, outsider, tokenV2 } = c;
      await scheduleBoth(c);
      await token.connect(tokenizer).beginDefaultAdminTransfer(outsider.address);
      await token.connect(outsider).acceptDefaultAdminTransfer();
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x")).to.be.revertedWithCustomError(
        token,
        "AccessControlUnauthorizedAccount",
      );
      await expect(token.connect(outsider).upgradeToAndCall(tokenV2.target, "0x")).to.emit(token, "Upgraded");
    });

    it("a cancelled upgrade cannot be executed; cancelling with nothing scheduled is refused", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, escrow, tokenizer, tokenV2, escrowV2 } = c;
      await expect(token.connect(tokenizer).cancelUpgrade())
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(ethers.ZeroAddress);
      await scheduleBoth(c);
      await expect(token.connect(tokenizer).cancelUpgrade())
        .to.emit(token, "UpgradeCancelled")
        .withArgs(tokenV2.target, tokenizer.address);
      await expect(escrow.connect(tokenizer).cancelUpgrade())
        .to.emit(escrow, "UpgradeCancelled")
        .withArgs(escrowV2.target, tokenizer.address);
      expect(await token.scheduledUpgrade()).to.deep.equal([ethers.ZeroAddress, 0n]);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x"))
        .to.be.revertedWithCustomError(token, "UpgradeNotScheduled")
        .withArgs(tokenV2.target);
      await expect(escrow.connect(tokenizer).upgradeToAndCall(escrowV2.target, "0x"))
        .to.be.revertedWithCustomError(escrow, "UpgradeNotScheduled")
        .withArgs(escrowV2.target);
    });

    it("scheduling again replaces the schedule and restarts the delay", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, tokenV2 } = c;
      await scheduleBoth(c);
      await time.increase(UPGRADE_DELAY - DAY);
      await token.connect(tokenizer).scheduleUpgrade(tokenV2.target);
      await time.increase(DAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x")).to.be.revertedWithCustomError(
        token,
        "UpgradeNotReady",
      );
    });

    it("a published contract of another kind is refused when scheduled (WrongImplementationKind): an escrow on the token, a plain ERC-20, and the token's on the escrow", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, escrow, tokenizer, factory, deployer, tokenImpl, escrowImpl } = c;
      const notUups = await ethers.deployContract("TestERC20", ["Not", "UUPS", 6]);
      await factory.connect(deployer).publishImplementations(notUups.target, escrowImpl.target);
      for (const wrong of [escrowImpl.target, notUups.target]) {
        await expect(token.connect(tokenizer).scheduleUpgrade(wrong))
          .to.be.revertedWithCustomError(token, "WrongImplementationKind")
          .withArgs(wrong);
      }
      await expect(escrow.connect(tokenizer).scheduleUpgrade(tokenImpl.target))
        .to.be.revertedWithCustomError(escrow, "WrongImplementationKind")
        .withArgs(tokenImpl.target);
    });

    it("a published contract of the right kind that is not UUPS-compatible is refused at execution (ERC1967InvalidImplementation)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, factory, deployer, escrowImpl } = c;
      const notUups = await ethers.deployContract("KindOnlyMock");
      await factory.connect(deployer).publishImplementations(notUups.target, escrowImpl.target);
      await token.connect(tokenizer).scheduleUpgrade(notUups.target);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(notUups.target, "0x"))
        .to.be.revertedWithCustomError(token, "ERC1967InvalidImplementation")
        .withArgs(notUups.target);
    });

    it("a published contract answering another proxiableUUID is refused (UUPSUnsupportedProxiableUUID)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, factory, deployer, escrowImpl } = c;
      const wrong = await ethers.deployContract("WrongProxiableUUIDMock");
      await factory.connect(deployer).publishImplementations(wrong.target, escrowImpl.target);
      await token.connect(tokenizer).scheduleUpgrade(wrong.target);
      await time.increase(UPGRADE_DELAY);
      await expect(token.connect(tokenizer).upgradeToAndCall(wrong.target, "0x"))
        .to.be.revertedWithCustomError(token, "UUPSUnsupportedProxiableUUID")
        .withArgs(ethers.keccak256(ethers.toUtf8Bytes("not the ERC-1967 implementation slot")));
    });

    it("value without a call is refused (ERC1967NonPayable); a failing call reverts the whole upgrade (FailedCall)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, tokenV2, tokenImpl } = c;
      await scheduleBoth(c);
      await time.increase(UPGRADE_DELAY);
      await expect(
        token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x", { value: 1n }),
      ).to.be.revertedWithCustomError(token, "ERC1967NonPayable");
      // A call V2 does not have: the delegatecall fails without data.
      await expect(token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0xdeadbeef")).to.be.revertedWithCustomError(
        token,
        "FailedCall",
      );
      // A call that reverts with an error of its own bubbles it, and nothing is upgraded.
      await expect(
        token.connect(tokenizer).upgradeToAndCall(tokenV2.target, token.interface.encodeFunctionData("unpause")),
      ).to.be.revertedWithCustomError(token, "ExpectedPause");
      expect(await token.implementation()).to.equal(tokenImpl.target);
      // One that succeeds runs on the new implementation in the upgrade's transaction.
      await token.connect(tokenizer).upgradeToAndCall(tokenV2.target, token.interface.encodeFunctionData("pause"));
      expect(await token.paused()).to.equal(true);
      expect(await token.implementation()).to.equal(tokenV2.target);
    });

    it("the implementations refuse upgrade calls made on them directly (UUPSUnauthorizedCallContext)", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenImpl, escrowImpl, tokenizer, tokenV2 } = c;
      await expect(tokenImpl.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x")).to.be.revertedWithCustomError(
        tokenImpl,
        "UUPSUnauthorizedCallContext",
      );
      await expect(escrowImpl.upgradeToAndCall(tokenV2.target, "0x")).to.be.revertedWithCustomError(
        escrowImpl,
        "UUPSUnauthorizedCallContext",
      );
      // proxiableUUID answers on the implementation only.
      expect(await tokenImpl.proxiableUUID()).to.equal(IMPLEMENTATION_SLOT);
      await expect(token.proxiableUUID()).to.be.revertedWithCustomError(token, "UUPSUnauthorizedCallContext");
      expect(await token.UPGRADE_DELAY()).to.equal(BigInt(UPGRADE_DELAY));
    });

    it("a recovery requested before the upgrade keeps its delay across it", async function () {
      const c = await loadFixture(tokenInUseFixture);
      const { token, tokenizer, alice, tokenV2 } = c;
      await token.connect(tokenizer).cancelRecovery(alice.address);
      await scheduleBoth(c);
      await time.increase(UPGRADE_DELAY);
      await token.connect(tokenizer).requestRecovery(alice.address, c.aliceSpare.address);
      await token.connect(tokenizer).upgradeToAndCall(tokenV2.target, "0x");
      await expect(token.connect(tokenizer).executeRecovery(alice.address)).to.be.revertedWithCustomError(token, "RecoveryNotReady");
      await time.increase(3 * DAY);
      await token.connect(tokenizer).executeRecovery(alice.address);
    });
  });
});
