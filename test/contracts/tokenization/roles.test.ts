import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { SecurityToken, StoEscrow } from "../../../typechain-types";
import { INVESTOR, ROLE, TOKENS, USDC, investorIdOf, tokenFixture } from "./helpers";

/**
 * tokenFixture plus `agent` (no role yet), `newKey` (the tokenizer's replacement, e.g. a multisig), a second wallet of
 * alice's investor, a funded payment token, a published V2 implementation and 1 frozen token on alice.
 */
async function rolesFixture() {
  const base = await tokenFixture();
  const { token, tokenizer, usdc, alice, factory, deployer, escrowImpl } = base;
  const [agent, newKey, aliceSpare] = (await ethers.getSigners()).slice(7, 10);
  await token.connect(tokenizer).whitelistInvestors([aliceSpare.address], [investorIdOf(alice.address)]);
  await token.connect(tokenizer).setFrozenTokens(alice.address, 1n);
  for (const who of [tokenizer, newKey]) {
    await usdc.mint(who.address, USDC(1_000_000));
    await usdc.connect(who).approve(token.target, ethers.MaxUint256);
  }
  const tokenV2 = await ethers.deployContract("SecurityTokenV2Mock");
  await factory.connect(deployer).publishImplementations(tokenV2.target, escrowImpl.target);
  return { ...base, agent, newKey, aliceSpare, tokenV2 };
}
type Ctx = Awaited<ReturnType<typeof rolesFixture>>;

/** Every function a role opens, called so that it would succeed for a holder of that role. */
function restrictedCalls(c: Ctx, token: SecurityToken) {
  const { alice, bob, carol, dave, aliceSpare } = c;
  return [
    { role: ROLE.MINTER, name: "mint", call: () => token.mint.staticCall(carol.address, 1n) },
    { role: ROLE.WHITELISTER, name: "setWhitelisted", call: () => token.setWhitelisted.staticCall(dave.address, true) },
    {
      role: ROLE.WHITELISTER,
      name: "setWhitelistedBatch",
      call: () => token.setWhitelistedBatch.staticCall([dave.address], [true]),
    },
    {
      role: ROLE.WHITELISTER,
      name: "whitelistInvestors",
      call: () => token.whitelistInvestors.staticCall([dave.address], [INVESTOR("dave")]),
    },
    { role: ROLE.FREEZER, name: "setAddressFrozen", call: () => token.setAddressFrozen.staticCall(bob.address, true) },
    { role: ROLE.FREEZER, name: "setFrozenTokens", call: () => token.setFrozenTokens.staticCall(bob.address, 1n) },
    { role: ROLE.FREEZER, name: "freezePartialTokens", call: () => token.freezePartialTokens.staticCall(bob.address, 1n) },
    {
      role: ROLE.FREEZER,
      name: "unfreezePartialTokens",
      call: () => token.unfreezePartialTokens.staticCall(alice.address, 1n),
    },
    {
      role: ROLE.ENFORCER,
      name: "forcedTransfer",
      call: () => token.forcedTransfer.staticCall(alice.address, bob.address, 1n),
    },
    {
      role: ROLE.RECOVERY,
      name: "requestRecovery",
      call: () => token.requestRecovery.staticCall(alice.address, aliceSpare.address),
    },
    { role: ROLE.PAUSER, name: "pause", call: () => token.pause.staticCall() },
    { role: ROLE.ADMIN, name: "distributeDividends", call: () => token.distributeDividends.staticCall(USDC(1)) },
    { role: ROLE.ADMIN, name: "setRecoveryDelay", call: () => token.setRecoveryDelay.staticCall(3 * 24 * 3600) },
    { role: ROLE.ADMIN, name: "scheduleUpgrade", call: () => token.scheduleUpgrade.staticCall(c.tokenV2.target) },
    { role: ROLE.ADMIN, name: "grantRole", call: () => token.grantRole.staticCall(ROLE.PAUSER, dave.address) },
    {
      role: ROLE.ADMIN,
      name: "beginDefaultAdminTransfer",
      call: () => token.beginDefaultAdminTransfer.staticCall(dave.address),
    },
  ];
}

/** The escrow functions only the token's tokenizer may call, with arguments that pass that check. */
async function tokenizerOnlyEscrowCalls(escrow: StoEscrow, c: Ctx) {
  const start = (await time.latest()) + 100;
  return [
    () => escrow.newOffering.staticCall(TOKENS(10), 0n, 0n, USDC(10), 0n, USDC(10), start, start + 100),
    () => escrow.setPaused.staticCall(true),
    () => escrow.withdrawProceeds.staticCall(1),
    () => escrow.redirectClaim.staticCall(1, c.alice.address, c.aliceSpare.address),
    () => escrow.refundClaim.staticCall(1, c.alice.address, c.alice.address),
    () => escrow.scheduleUpgrade.staticCall(c.tokenV2.target),
  ];
}

async function expectRefusedEverywhere(c: Ctx, who: HardhatEthersSigner) {
  const token = c.token.connect(who);
  for (const { role, name, call } of restrictedCalls(c, token)) {
    await expect(call(), name).to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount").withArgs(who.address, role);
  }
  await expect(token.unpause.staticCall(), "unpause").to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount");
  const escrow = c.escrow.connect(who);
  for (const call of await tokenizerOnlyEscrowCalls(escrow, c)) {
    await expect(call()).to.be.revertedWithCustomError(escrow, "NotTokenizer").withArgs(who.address);
  }
}

async function expectAllowedEverywhere(c: Ctx, who: HardhatEthersSigner) {
  const token = c.token.connect(who);
  for (const { name, call } of restrictedCalls(c, token)) await expect(call(), name).to.not.be.reverted;
  // Past the tokenizer check, each escrow call meets the escrow's own rules (no offering yet), or succeeds.
  const escrow = c.escrow.connect(who);
  for (const call of await tokenizerOnlyEscrowCalls(escrow, c)) {
    await expect(call()).to.not.be.revertedWithCustomError(escrow, "NotTokenizer");
  }
}

describe("SecurityToken roles and the tokenizer handover", function () {
  describe("roles", function () {
    it("names its roles by the hash of their names", async function () {
      const { token } = await loadFixture(rolesFixture);
      expect(await token.MINTER_ROLE()).to.equal(ROLE.MINTER);
      expect(await token.WHITELISTER_ROLE()).to.equal(ROLE.WHITELISTER);
      expect(await token.FREEZER_ROLE()).to.equal(ROLE.FREEZER);
      expect(await token.ENFORCER_ROLE()).to.equal(ROLE.ENFORCER);
      expect(await token.RECOVERY_ROLE()).to.equal(ROLE.RECOVERY);
      expect(await token.PAUSER_ROLE()).to.equal(ROLE.PAUSER);
      for (const role of Object.values(ROLE)) expect(await token.getRoleAdmin(role)).to.equal(ROLE.ADMIN);
    });

    it("the tokenizer holds every role without a grant, and may call every restricted function", async function () {
      const c = await loadFixture(rolesFixture);
      for (const role of Object.values(ROLE)) expect(await c.token.hasRole(role, c.tokenizer.address)).to.equal(true);
      await expectAllowedEverywhere(c, c.tokenizer);
    });

    it("a wallet without a role may call none of them", async function () {
      const c = await loadFixture(rolesFixture);
      await expectRefusedEverywhere(c, c.agent);
    });

    it("role matrix: a role opens exactly its own functions, no other role's and none of the tokenizer's", async function () {
      const c = await loadFixture(rolesFixture);
      const { token, tokenizer, agent } = c;
      for (const granted of [ROLE.MINTER, ROLE.WHITELISTER, ROLE.FREEZER, ROLE.ENFORCER, ROLE.RECOVERY, ROLE.PAUSER]) {
        await token.connect(tokenizer).grantRole(granted, agent.address);
        for (const { role, name, call } of restrictedCalls(c, token.connect(agent))) {
          if (role === granted) await expect(call(), name).to.not.be.reverted;
          else {
            await expect(call(), `${name} with another role`)
              .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
              .withArgs(agent.address, role);
          }
        }
        const escrow = c.escrow.connect(agent);
        for (const call of await tokenizerOnlyEscrowCalls(escrow, c)) {
          await expect(call()).to.be.revertedWithCustomError(escrow, "NotTokenizer").withArgs(agent.address);
        }
        await token.connect(tokenizer).revokeRole(granted, agent.address);
      }
    });

    it("PAUSER_ROLE pauses and unpauses", async function () {
      const { token, tokenizer, agent } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.PAUSER, agent.address);
      await expect(token.connect(agent).pause()).to.emit(token, "Paused").withArgs(agent.address);
      await expect(token.connect(agent).unpause()).to.emit(token, "Unpaused").withArgs(agent.address);
    });

    it("MINTER_ROLE and WHITELISTER_ROLE are granted and revoked like the others: the agent acts, then no longer", async function () {
      const { token, tokenizer, agent, carol, dave } = await loadFixture(rolesFixture);
      await expect(token.connect(tokenizer).grantRole(ROLE.MINTER, agent.address))
        .to.emit(token, "RoleGranted")
        .withArgs(ROLE.MINTER, agent.address, tokenizer.address);
      await expect(token.connect(agent).mint(carol.address, TOKENS(5)))
        .to.emit(token, "Transfer")
        .withArgs(ethers.ZeroAddress, carol.address, TOKENS(5));
      await token.connect(tokenizer).grantRole(ROLE.WHITELISTER, agent.address);
      await expect(token.connect(agent).whitelistInvestors([dave.address], [INVESTOR("dave")]))
        .to.emit(token, "InvestorBound")
        .withArgs(dave.address, INVESTOR("dave"), agent.address);
      await token.connect(agent).setWhitelisted(dave.address, false);

      await expect(token.connect(tokenizer).revokeRole(ROLE.MINTER, agent.address))
        .to.emit(token, "RoleRevoked")
        .withArgs(ROLE.MINTER, agent.address, tokenizer.address);
      await expect(token.connect(agent).mint(carol.address, 1n))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.MINTER);
      await token.connect(tokenizer).revokeRole(ROLE.WHITELISTER, agent.address);
      await expect(token.connect(agent).setWhitelisted(dave.address, true))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.WHITELISTER);
      expect(await token.hasRole(ROLE.MINTER, agent.address)).to.equal(false);
    });

    it("an agent renounces its own role", async function () {
      const { token, tokenizer, agent } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.PAUSER, agent.address);
      await expect(token.connect(agent).renounceRole(ROLE.PAUSER, agent.address))
        .to.emit(token, "RoleRevoked")
        .withArgs(ROLE.PAUSER, agent.address, agent.address);
      await expect(token.connect(agent).pause()).to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount");
    });

    it("only the tokenizer grants and revokes", async function () {
      const { token, tokenizer, agent, bob } = await loadFixture(rolesFixture);
      await expect(token.connect(agent).grantRole(ROLE.PAUSER, bob.address))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
      await token.connect(tokenizer).grantRole(ROLE.PAUSER, bob.address);
      await expect(token.connect(agent).revokeRole(ROLE.PAUSER, bob.address))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
    });
  });

  // Issue 48: `revokeRole` on the tokenizer emitted RoleRevoked and changed nothing; a role grant or revocation that
  // cannot take effect now reverts with an error that says why.
  describe("grants and revocations that cannot take effect revert with a clear error", function () {
    it("on the tokenizer, which holds every role (TokenizerHoldsEveryRole)", async function () {
      const { token, tokenizer } = await loadFixture(rolesFixture);
      for (const role of [ROLE.MINTER, ROLE.PAUSER, ROLE.RECOVERY]) {
        await expect(token.connect(tokenizer).revokeRole(role, tokenizer.address))
          .to.be.revertedWithCustomError(token, "TokenizerHoldsEveryRole")
          .withArgs(tokenizer.address);
        await expect(token.connect(tokenizer).renounceRole(role, tokenizer.address))
          .to.be.revertedWithCustomError(token, "TokenizerHoldsEveryRole")
          .withArgs(tokenizer.address);
        await expect(token.connect(tokenizer).grantRole(role, tokenizer.address))
          .to.be.revertedWithCustomError(token, "TokenizerHoldsEveryRole")
          .withArgs(tokenizer.address);
      }
      expect(await token.hasRole(ROLE.PAUSER, tokenizer.address)).to.equal(true);
    });

    it("DEFAULT_ADMIN_ROLE moves only by the two-step handover (AccessControlEnforcedDefaultAdminRules)", async function () {
      const { token, tokenizer, agent } = await loadFixture(rolesFixture);
      await expect(token.connect(tokenizer).grantRole(ROLE.ADMIN, agent.address)).to.be.revertedWithCustomError(
        token,
        "AccessControlEnforcedDefaultAdminRules",
      );
      await expect(token.connect(tokenizer).revokeRole(ROLE.ADMIN, tokenizer.address)).to.be.revertedWithCustomError(
        token,
        "AccessControlEnforcedDefaultAdminRules",
      );
      await expect(token.connect(tokenizer).revokeRole(ROLE.ADMIN, agent.address)).to.be.revertedWithCustomError(
        token,
        "AccessControlEnforcedDefaultAdminRules",
      );
      // Renouncing it needs a scheduled transfer to the zero address first.
      await expect(token.connect(tokenizer).renounceRole(ROLE.ADMIN, tokenizer.address))
        .to.be.revertedWithCustomError(token, "AccessControlEnforcedDefaultAdminDelay")
        .withArgs(0);
    });

    it("a role already held (RoleAlreadyHeld), or not held (RoleNotHeld)", async function () {
      const { token, tokenizer, agent, bob } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.FREEZER, agent.address);
      await expect(token.connect(tokenizer).grantRole(ROLE.FREEZER, agent.address))
        .to.be.revertedWithCustomError(token, "RoleAlreadyHeld")
        .withArgs(ROLE.FREEZER, agent.address);
      await expect(token.connect(tokenizer).revokeRole(ROLE.PAUSER, agent.address))
        .to.be.revertedWithCustomError(token, "RoleNotHeld")
        .withArgs(ROLE.PAUSER, agent.address);
      await expect(token.connect(bob).renounceRole(ROLE.FREEZER, bob.address))
        .to.be.revertedWithCustomError(token, "RoleNotHeld")
        .withArgs(ROLE.FREEZER, bob.address);
      await expect(token.connect(bob).renounceRole(ROLE.ADMIN, bob.address))
        .to.be.revertedWithCustomError(token, "RoleNotHeld")
        .withArgs(ROLE.ADMIN, bob.address);
    });

    it("renouncing for someone else (AccessControlBadConfirmation)", async function () {
      const { token, tokenizer, agent, bob } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.FREEZER, agent.address);
      await expect(token.connect(bob).renounceRole(ROLE.FREEZER, agent.address)).to.be.revertedWithCustomError(
        token,
        "AccessControlBadConfirmation",
      );
      expect(await token.hasRole(ROLE.FREEZER, agent.address)).to.equal(true);
    });
  });

  // Issue 48: the issuer's key was forever. It now hands over in two steps, after which the old key can do nothing.
  describe("tokenizer handover (AccessControlDefaultAdminRules)", function () {
    async function handedOverFixture() {
      const c = await rolesFixture();
      await c.token.connect(c.tokenizer).beginDefaultAdminTransfer(c.newKey.address);
      await c.token.connect(c.newKey).acceptDefaultAdminTransfer();
      return c;
    }

    it("propose then accept: the token and its escrow answer to the new key", async function () {
      const { token, escrow, tokenizer, newKey } = await loadFixture(rolesFixture);
      const at = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(at);
      await expect(token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address))
        .to.emit(token, "DefaultAdminTransferScheduled")
        .withArgs(newKey.address, at); // the default delay is 0: acceptable at once
      expect(await token.pendingDefaultAdmin()).to.deep.equal([newKey.address, BigInt(at)]);
      expect(await token.tokenizer()).to.equal(tokenizer.address);
      const tx = token.connect(newKey).acceptDefaultAdminTransfer();
      await expect(tx).to.emit(token, "RoleRevoked").withArgs(ROLE.ADMIN, tokenizer.address, newKey.address);
      await expect(tx).to.emit(token, "RoleGranted").withArgs(ROLE.ADMIN, newKey.address, newKey.address);
      expect(await token.tokenizer()).to.equal(newKey.address);
      expect(await token.defaultAdmin()).to.equal(newKey.address);
      expect(await token.pendingDefaultAdmin()).to.deep.equal([ethers.ZeroAddress, 0n]);
      for (const role of Object.values(ROLE)) {
        expect(await token.hasRole(role, newKey.address)).to.equal(true);
        expect(await token.hasRole(role, tokenizer.address)).to.equal(false);
      }
      expect(await escrow.token()).to.equal(token.target);
    });

    it("after the handover the old key can do nothing: mint, whitelist, grant, distribute, pause, schedule upgrades...", async function () {
      const c = await loadFixture(handedOverFixture);
      await expectRefusedEverywhere(c, c.tokenizer);
      await expect(c.token.connect(c.tokenizer).beginDefaultAdminTransfer(c.tokenizer.address))
        .to.be.revertedWithCustomError(c.token, "AccessControlUnauthorizedAccount")
        .withArgs(c.tokenizer.address, ROLE.ADMIN);
    });

    it("...and the new key can do everything", async function () {
      const c = await loadFixture(handedOverFixture);
      await expectAllowedEverywhere(c, c.newKey);
      const { token, newKey, carol, dave, agent } = c;
      await token.connect(newKey).mint(carol.address, TOKENS(1));
      await token.connect(newKey).whitelistInvestors([dave.address], [INVESTOR("dave")]);
      await token.connect(newKey).grantRole(ROLE.PAUSER, agent.address);
      await token.connect(newKey).distributeDividends(USDC(10));
      await token.connect(agent).pause();
      await expect(token.connect(newKey).unpause()).to.emit(token, "Unpaused").withArgs(newKey.address);
      await expect(token.connect(newKey).scheduleUpgrade(c.tokenV2.target)).to.emit(token, "UpgradeScheduled");
    });

    it("until accepted, the old key keeps every power and the proposed one has none; only the proposed key accepts", async function () {
      const c = await loadFixture(rolesFixture);
      const { token, tokenizer, newKey, agent } = c;
      await token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address);
      await expectAllowedEverywhere(c, tokenizer);
      await expectRefusedEverywhere(c, newKey);
      for (const caller of [agent, tokenizer]) {
        await expect(token.connect(caller).acceptDefaultAdminTransfer())
          .to.be.revertedWithCustomError(token, "AccessControlInvalidDefaultAdmin")
          .withArgs(caller.address);
      }
    });

    it("the tokenizer may cancel or replace a proposal before it is accepted", async function () {
      const { token, tokenizer, newKey, agent } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address);
      await expect(token.connect(agent).cancelDefaultAdminTransfer())
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
      await expect(token.connect(tokenizer).cancelDefaultAdminTransfer()).to.emit(token, "DefaultAdminTransferCanceled");
      await expect(token.connect(newKey).acceptDefaultAdminTransfer())
        .to.be.revertedWithCustomError(token, "AccessControlInvalidDefaultAdmin")
        .withArgs(newKey.address);
      await token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address);
      await token.connect(tokenizer).beginDefaultAdminTransfer(agent.address);
      await expect(token.connect(newKey).acceptDefaultAdminTransfer()).to.be.revertedWithCustomError(
        token,
        "AccessControlInvalidDefaultAdmin",
      );
      await token.connect(agent).acceptDefaultAdminTransfer();
      expect(await token.tokenizer()).to.equal(agent.address);
    });

    it("the tokenizer may require a delay on later handovers (changeDefaultAdminDelay)", async function () {
      const { token, tokenizer, newKey } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).changeDefaultAdminDelay(3600);
      // Raising the delay itself waits min(new delay, 5 days).
      await time.increase(3601);
      expect(await token.defaultAdminDelay()).to.equal(3600n);
      await token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address);
      const [, schedule] = await token.pendingDefaultAdmin();
      await expect(token.connect(newKey).acceptDefaultAdminTransfer())
        .to.be.revertedWithCustomError(token, "AccessControlEnforcedDefaultAdminDelay")
        .withArgs(schedule);
      await time.increaseTo(schedule + 1n);
      await token.connect(newKey).acceptDefaultAdminTransfer();
      expect(await token.tokenizer()).to.equal(newKey.address);
    });

    it("roles granted to agents survive the handover; the new key may revoke them", async function () {
      const { token, tokenizer, newKey, agent } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.FREEZER, agent.address);
      await token.connect(tokenizer).beginDefaultAdminTransfer(newKey.address);
      await token.connect(newKey).acceptDefaultAdminTransfer();
      expect(await token.hasRole(ROLE.FREEZER, agent.address)).to.equal(true);
      await token.connect(newKey).revokeRole(ROLE.FREEZER, agent.address);
      expect(await token.hasRole(ROLE.FREEZER, agent.address)).to.equal(false);
    });

    it("a key that held roles as an agent, became tokenizer and handed over again keeps nothing", async function () {
      const c = await loadFixture(rolesFixture);
      const { token, tokenizer, newKey, agent } = c;
      for (const role of [ROLE.PAUSER, ROLE.MINTER, ROLE.ENFORCER]) await token.connect(tokenizer).grantRole(role, agent.address);
      await token.connect(tokenizer).beginDefaultAdminTransfer(agent.address);
      await token.connect(agent).acceptDefaultAdminTransfer();
      await token.connect(agent).beginDefaultAdminTransfer(newKey.address);
      await token.connect(newKey).acceptDefaultAdminTransfer();
      await expectRefusedEverywhere(c, agent);
      await expectRefusedEverywhere(c, tokenizer);
    });

    it("accepting the tokenizer role revokes the roles the key held as an agent (RoleRevoked), which it could not shed as tokenizer", async function () {
      const { token, tokenizer, agent } = await loadFixture(rolesFixture);
      await token.connect(tokenizer).grantRole(ROLE.PAUSER, agent.address);
      await token.connect(tokenizer).grantRole(ROLE.RECOVERY, agent.address);
      await token.connect(tokenizer).beginDefaultAdminTransfer(agent.address);
      const tx = token.connect(agent).acceptDefaultAdminTransfer();
      await expect(tx).to.emit(token, "RoleRevoked").withArgs(ROLE.PAUSER, agent.address, agent.address);
      await expect(tx).to.emit(token, "RoleRevoked").withArgs(ROLE.RECOVERY, agent.address, agent.address);
      const receipt = await (await tx).wait();
      const revoked = receipt!.logs.map((l) => token.interface.parseLog(l)).filter((e) => e?.name === "RoleRevoked");
      expect(revoked.length).to.equal(3); // the two above and the old tokenizer's DEFAULT_ADMIN_ROLE
      // As tokenizer it still holds every role, implicitly.
      for (const role of Object.values(ROLE)) expect(await token.hasRole(role, agent.address)).to.equal(true);
    });
  });
});
