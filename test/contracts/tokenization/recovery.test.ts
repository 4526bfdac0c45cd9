import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractTransactionResponse } from "ethers";
import type { SecurityToken } from "../../../typechain-types";
import {
  DAY,
  RECOVERY_DELAY,
  ROLE,
  TOKENS,
  USDC,
  investorIdOf,
  magnifiedEntitlementOf,
  tokenFixture,
} from "./helpers";

/**
 * tokenFixture (alice 1000, bob 500, carol 0; each its own investor) plus: `aliceSpare`, a second wallet of alice's
 * investor (whitelisted, empty); `agent`, holding RECOVERY_ROLE; `mallory`, the agent's own whitelisted wallet (bound
 * to no investor); a funded, approved payment token for dividends.
 */
async function recoveryFixture() {
  const base = await tokenFixture();
  const { token, tokenizer, usdc, alice } = base;
  const [aliceSpare, agent, mallory] = (await ethers.getSigners()).slice(7, 10);
  await token.connect(tokenizer).whitelistInvestors([aliceSpare.address, mallory.address], [investorIdOf(alice.address), ethers.ZeroHash]);
  await token.connect(tokenizer).grantRole(ROLE.RECOVERY, agent.address);
  await usdc.mint(tokenizer.address, USDC(1_000_000));
  await usdc.connect(tokenizer).approve(token.target, ethers.MaxUint256);
  return { ...base, aliceSpare, agent, mallory };
}

/** The names of the events a transaction emitted from the token, in log order. */
async function eventOrder(token: SecurityToken, tx: Promise<ContractTransactionResponse>): Promise<string[]> {
  const receipt = await (await tx).wait();
  return receipt!.logs.filter((l) => l.address === token.target).map((l) => token.interface.parseLog(l)!.name);
}

/** What recovery moves, read for one wallet: balance, frozen amount, magnified entitlement, withdrawn total. */
async function holdings(token: SecurityToken, wallet: string) {
  return {
    balance: await token.balanceOf(wallet),
    frozen: await token.getFrozenTokens(wallet),
    magnified: await magnifiedEntitlementOf(token, wallet),
    withdrawable: await token.withdrawableDividendOf(wallet),
    withdrawn: await token.withdrawnDividendOf(wallet),
  };
}

describe("SecurityToken wallet recovery (two steps, same investor, cancellable)", function () {
  describe("issue 48: a recovery agent can no longer seize any investor", function () {
    // Before: `recoveryAddress(victim, agentsOwnWallet)` moved the victim's balance, frozen amount and dividends at
    // once, to any whitelisted wallet. Now the two wallets must be bound to the same investor.
    it("refuses a new wallet of another investor, or of none (NotSameInvestor)", async function () {
      const { token, agent, alice, carol, mallory } = await loadFixture(recoveryFixture);
      await expect(token.connect(agent).requestRecovery(alice.address, mallory.address))
        .to.be.revertedWithCustomError(token, "NotSameInvestor")
        .withArgs(alice.address, mallory.address);
      await expect(token.connect(agent).requestRecovery(alice.address, carol.address))
        .to.be.revertedWithCustomError(token, "NotSameInvestor")
        .withArgs(alice.address, carol.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
    });

    it("refuses a lost wallet bound to no investor, even towards another unbound wallet", async function () {
      const { token, tokenizer, agent, mallory, dave } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setWhitelisted(dave.address, true); // unbound too
      await token.connect(tokenizer).mint(mallory.address, TOKENS(1));
      await expect(token.connect(agent).requestRecovery(mallory.address, dave.address))
        .to.be.revertedWithCustomError(token, "NotSameInvestor")
        .withArgs(mallory.address, dave.address);
    });

    it("the agent cannot rebind the victim to its own investor first: a wallet that holds tokens keeps its binding", async function () {
      const { token, tokenizer, alice, mallory } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).grantRole(ROLE.WHITELISTER, mallory.address);
      await expect(token.connect(mallory).whitelistInvestors([alice.address], [ethers.id("mallory")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(alice.address, investorIdOf(alice.address));
    });
  });

  describe("request, delay, execute", function () {
    it("a request records the new wallet and when it may execute, and emits RecoveryRequested", async function () {
      const { token, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      const at = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(at);
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.emit(token, "RecoveryRequested")
        .withArgs(alice.address, aliceSpare.address, at + RECOVERY_DELAY, agent.address);
      const pending = await token.pendingRecovery(alice.address);
      expect([pending.newWallet, pending.executableAt]).to.deep.equal([aliceSpare.address, BigInt(at + RECOVERY_DELAY)]);
      expect(await token.recoveryDelay()).to.equal(BigInt(RECOVERY_DELAY));
      // Nothing moved yet.
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
    });

    it("executeRecovery before the delay is refused (RecoveryNotReady); from the second it ends, it runs", async function () {
      const { token, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      const { executableAt } = await token.pendingRecovery(alice.address);
      await time.setNextBlockTimestamp(executableAt - 1n);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "RecoveryNotReady")
        .withArgs(alice.address, executableAt);
      await time.setNextBlockTimestamp(executableAt);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.emit(token, "RecoverySuccess")
        .withArgs(alice.address, aliceSpare.address, agent.address);
      const pending = await token.pendingRecovery(alice.address);
      expect([pending.newWallet, pending.executableAt]).to.deep.equal([ethers.ZeroAddress, 0n]);
    });

    it("the new wallet may execute its own recovery; anyone else needs RECOVERY_ROLE", async function () {
      const { token, agent, alice, aliceSpare, outsider } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      await expect(token.connect(outsider).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, ROLE.RECOVERY);
      await expect(token.connect(alice).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.RECOVERY);
      await expect(token.connect(aliceSpare).executeRecovery(alice.address))
        .to.emit(token, "RecoverySuccess")
        .withArgs(alice.address, aliceSpare.address, aliceSpare.address);
    });

    it("moves balance (ForcedTransfer), frozen amount, exact magnified entitlement and withdrawn total; the lost wallet leaves the whitelist", async function () {
      const { token, tokenizer, agent, alice, bob, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).distributeDividends(777_777n); // entitlements with remainders below one unit
      await token.connect(alice).claimDividends();
      await token.connect(tokenizer).distributeDividends(USDC(3000) + 1n);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(250));
      // The spare wallet already holds tokens and a small entitlement of its own.
      await token.connect(bob).transfer(aliceSpare.address, TOKENS(100));
      await token.connect(tokenizer).distributeDividends(333_333n);
      await token.connect(tokenizer).setFrozenTokens(aliceSpare.address, TOKENS(10));
      const [lost, heir, bobBefore] = [
        await holdings(token, alice.address),
        await holdings(token, aliceSpare.address),
        await holdings(token, bob.address),
      ];
      expect(lost.withdrawn).to.be.greaterThan(0n);
      expect(lost.magnified % 2n ** 128n).to.not.equal(0n); // a fraction of a unit that must move too

      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      const tx = token.connect(agent).executeRecovery(alice.address);
      await expect(tx).to.emit(token, "ForcedTransfer").withArgs(alice.address, aliceSpare.address, TOKENS(1000));
      await expect(tx).to.emit(token, "Transfer").withArgs(alice.address, aliceSpare.address, TOKENS(1000));
      await expect(tx).to.emit(token, "Frozen").withArgs(alice.address, 0n);
      await expect(tx).to.emit(token, "Frozen").withArgs(aliceSpare.address, TOKENS(260));
      await expect(tx).to.emit(token, "WhitelistUpdated").withArgs(alice.address, false);
      await expect(tx).to.emit(token, "RecoverySuccess").withArgs(alice.address, aliceSpare.address, agent.address);
      await expect(tx).to.not.emit(token, "AddressFrozen");

      const [lostAfter, heirAfter] = [await holdings(token, alice.address), await holdings(token, aliceSpare.address)];
      expect(lostAfter).to.deep.equal({ balance: 0n, frozen: 0n, magnified: 0n, withdrawable: 0n, withdrawn: 0n });
      expect(heirAfter.balance).to.equal(heir.balance + lost.balance);
      expect(heirAfter.frozen).to.equal(heir.frozen + lost.frozen);
      expect(heirAfter.magnified).to.equal(heir.magnified + lost.magnified);
      expect(heirAfter.withdrawn).to.equal(heir.withdrawn + lost.withdrawn);
      // Floors of the parts may add up one unit short of the floor of the sum.
      expect(heirAfter.withdrawable - (heir.withdrawable + lost.withdrawable)).to.be.oneOf([0n, 1n]);
      expect(await holdings(token, bob.address)).to.deep.equal(bobBefore);
      expect(await token.isWhitelisted(alice.address)).to.equal(false);
      expect(await token.totalSupply()).to.equal(TOKENS(1500));

      // The heir claims what the lost wallet had not; the lost wallet has nothing left to claim.
      await expect(token.connect(aliceSpare).claimDividends())
        .to.emit(token, "DividendClaimed")
        .withArgs(aliceSpare.address, heirAfter.withdrawable);
      await expect(token.connect(alice).claimDividends()).to.be.revertedWithCustomError(token, "NothingToClaim");
      // And earns on the recovered balance from now on.
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      expect(USDC(1100) - (await token.withdrawableDividendOf(aliceSpare.address)) <= 1n).to.equal(true);
    });

    it("emits the frozen amounts before the Transfer, and works while paused", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, 1n);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      await token.connect(tokenizer).pause();
      expect(await eventOrder(token, token.connect(agent).executeRecovery(alice.address))).to.deep.equal([
        "Frozen",
        "Transfer",
        "ForcedTransfer",
        "Frozen",
        "WhitelistUpdated",
        "RecoverySuccess",
      ]);
      expect(await token.balanceOf(aliceSpare.address)).to.equal(TOKENS(1000));
    });

    it("the lost wallet keeps transacting during the delay; execution moves what it holds then", async function () {
      const { token, agent, alice, bob, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await token.connect(alice).transfer(bob.address, TOKENS(400));
      await time.increase(RECOVERY_DELAY);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.emit(token, "ForcedTransfer")
        .withArgs(alice.address, aliceSpare.address, TOKENS(600));
    });

    it("recovers a wallet that holds only unclaimed dividends", async function () {
      const { token, tokenizer, agent, alice, carol, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      await token.connect(alice).transfer(carol.address, TOKENS(1000));
      const unclaimed = await token.withdrawableDividendOf(alice.address);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      const tx = token.connect(agent).executeRecovery(alice.address);
      await expect(tx).to.not.emit(token, "ForcedTransfer");
      await expect(tx).to.emit(token, "RecoverySuccess");
      expect(await token.withdrawableDividendOf(aliceSpare.address)).to.equal(unclaimed);
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "NothingToRecover")
        .withArgs(alice.address);
    });

    it("recovers a frozen amount above the balance (it withholds what arrives later) as it is", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(5000));
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      await token.connect(agent).executeRecovery(alice.address);
      expect(await token.getFrozenTokens(aliceSpare.address)).to.equal(TOKENS(5000));
      expect(await token.getFrozenTokens(alice.address)).to.equal(0n);
    });
  });

  describe("an address freeze on the lost wallet", function () {
    async function frozenLostWalletFixture() {
      const base = await recoveryFixture();
      const { token, tokenizer, agent, alice, aliceSpare } = base;
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(250));
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      return base;
    }

    it("spreads to an empty new wallet, with the frozen amount", async function () {
      const { token, agent, alice, aliceSpare } = await loadFixture(frozenLostWalletFixture);
      const tx = token.connect(agent).executeRecovery(alice.address);
      await expect(tx).to.emit(token, "AddressFrozen").withArgs(alice.address, false, agent.address);
      await expect(tx).to.emit(token, "AddressFrozen").withArgs(aliceSpare.address, true, agent.address);
      await expect(tx).to.emit(token, "Frozen").withArgs(aliceSpare.address, TOKENS(250));
      expect(await token.isFrozen(aliceSpare.address)).to.equal(true);
      expect(await token.isFrozen(alice.address)).to.equal(false);
      expect(await token.getFrozenTokens(aliceSpare.address)).to.equal(TOKENS(250));
      expect(await token.balanceOf(aliceSpare.address)).to.equal(TOKENS(1000));
    });

    it("never spreads to a new wallet that holds tokens: such a recovery is refused at execution (FrozenWalletIntoHolder), its held dividends stay held", async function () {
      const { token, tokenizer, agent, alice, bob, aliceSpare, usdc } = await loadFixture(frozenLostWalletFixture);
      await usdc.mint(tokenizer.address, USDC(100));
      await usdc.connect(tokenizer).approve(token.target, USDC(100));
      await token.connect(tokenizer).distributeDividends(USDC(100));
      await token.connect(bob).transfer(aliceSpare.address, TOKENS(500));
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "FrozenWalletIntoHolder")
        .withArgs(alice.address, aliceSpare.address);
      expect(await token.isFrozen(aliceSpare.address)).to.equal(false);
      expect(await token.isFrozen(alice.address)).to.equal(true);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
      await expect(token.connect(alice).claimDividends()).to.be.revertedWithCustomError(token, "DividendsHeld");
    });

    it("a frozen wallet's recovery into a wallet holding tokens is refused at the request too (FrozenWalletIntoHolder)", async function () {
      const { token, tokenizer, agent, alice, bob, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(1200));
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await token.connect(bob).transfer(aliceSpare.address, TOKENS(500));
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "FrozenWalletIntoHolder")
        .withArgs(alice.address, aliceSpare.address);
    });

    it("a frozen amount above the recovered balance moves whole onto the heir", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(1200));
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);
      await token.connect(agent).executeRecovery(alice.address);
      expect(await token.getFrozenTokens(aliceSpare.address)).to.equal(TOKENS(1200));
      expect(await token.getFrozenTokens(alice.address)).to.equal(0n);
    });
  });

  describe("cancellation", function () {
    it("the lost wallet cancels with one transaction during the delay (RecoveryCancelled); nothing moves", async function () {
      const { token, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY - 60);
      await expect(token.connect(alice).cancelRecovery(alice.address))
        .to.emit(token, "RecoveryCancelled")
        .withArgs(alice.address, aliceSpare.address, alice.address);
      const pending = await token.pendingRecovery(alice.address);
      expect(pending.newWallet).to.equal(ethers.ZeroAddress);
      await time.increase(3600);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "NoRecoveryPending")
        .withArgs(alice.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
      // A new request starts a new delay.
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await expect(token.connect(agent).executeRecovery(alice.address)).to.be.revertedWithCustomError(token, "RecoveryNotReady");
    });

    it("a holder of RECOVERY_ROLE may cancel; the new wallet and others may not (NotAllowedToCancel)", async function () {
      const { token, tokenizer, agent, alice, aliceSpare, outsider } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      for (const caller of [aliceSpare, outsider]) {
        await expect(token.connect(caller).cancelRecovery(alice.address))
          .to.be.revertedWithCustomError(token, "NotAllowedToCancel")
          .withArgs(caller.address);
      }
      await expect(token.connect(tokenizer).cancelRecovery(alice.address))
        .to.emit(token, "RecoveryCancelled")
        .withArgs(alice.address, aliceSpare.address, tokenizer.address);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await expect(token.connect(agent).cancelRecovery(alice.address)).to.emit(token, "RecoveryCancelled");
    });

    it("cancelling when nothing is pending is refused (NoRecoveryPending)", async function () {
      const { token, alice } = await loadFixture(recoveryFixture);
      await expect(token.connect(alice).cancelRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "NoRecoveryPending")
        .withArgs(alice.address);
    });
  });

  describe("refusals", function () {
    it("requestRecovery needs RECOVERY_ROLE", async function () {
      const { token, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await expect(token.connect(aliceSpare).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(aliceSpare.address, ROLE.RECOVERY);
    });

    it("refuses the same wallet twice or a zero address (InvalidRecovery)", async function () {
      const { token, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await expect(token.connect(agent).requestRecovery(alice.address, alice.address))
        .to.be.revertedWithCustomError(token, "InvalidRecovery")
        .withArgs(alice.address, alice.address);
      await expect(token.connect(agent).requestRecovery(ethers.ZeroAddress, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "InvalidRecovery")
        .withArgs(ethers.ZeroAddress, aliceSpare.address);
      await expect(token.connect(agent).requestRecovery(alice.address, ethers.ZeroAddress))
        .to.be.revertedWithCustomError(token, "InvalidRecovery")
        .withArgs(alice.address, ethers.ZeroAddress);
    });

    it("refuses a new wallet that may not receive (off the whitelist, or frozen)", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(tokenizer).setAddressFrozen(aliceSpare.address, true);
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(aliceSpare.address);
      await token.connect(tokenizer).setAddressFrozen(aliceSpare.address, false);
      await token.connect(tokenizer).setWhitelisted(aliceSpare.address, false);
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(aliceSpare.address);
    });

    it("refuses a wallet with nothing to recover (NothingToRecover)", async function () {
      const { token, tokenizer, agent, carol } = await loadFixture(recoveryFixture);
      const [carolSpare] = (await ethers.getSigners()).slice(10, 11);
      await token.connect(tokenizer).whitelistInvestors([carolSpare.address], [investorIdOf(carol.address)]);
      await expect(token.connect(agent).requestRecovery(carol.address, carolSpare.address))
        .to.be.revertedWithCustomError(token, "NothingToRecover")
        .withArgs(carol.address);
    });

    it("refuses a second request while one is pending (RecoveryPending); a pending recovery keeps the wallet bound", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await expect(token.connect(agent).requestRecovery(alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "RecoveryPending")
        .withArgs(alice.address, aliceSpare.address);
      // Emptied during the delay, the lost wallet is still in use while its recovery is pending.
      await token.connect(tokenizer).forcedTransfer(alice.address, aliceSpare.address, TOKENS(1000));
      await expect(token.connect(tokenizer).whitelistInvestors([alice.address], [ethers.id("other")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(alice.address, investorIdOf(alice.address));
    });

    it("checks again at execution: the new wallet rebound, frozen, or the lost wallet emptied meanwhile", async function () {
      const { token, tokenizer, agent, alice, bob, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      await time.increase(RECOVERY_DELAY);

      await token.connect(tokenizer).whitelistInvestors([aliceSpare.address], [investorIdOf(bob.address)]);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "NotSameInvestor")
        .withArgs(alice.address, aliceSpare.address);
      await token.connect(tokenizer).whitelistInvestors([aliceSpare.address], [investorIdOf(alice.address)]);

      await token.connect(tokenizer).setAddressFrozen(aliceSpare.address, true);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(aliceSpare.address);
      await token.connect(tokenizer).setAddressFrozen(aliceSpare.address, false);

      await token.connect(alice).transfer(bob.address, TOKENS(1000));
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "NothingToRecover")
        .withArgs(alice.address);
      // Each refusal left the request pending.
      expect((await token.pendingRecovery(alice.address)).newWallet).to.equal(aliceSpare.address);
    });

    it("executeRecovery without a pending recovery is refused (NoRecoveryPending)", async function () {
      const { token, agent, alice } = await loadFixture(recoveryFixture);
      await expect(token.connect(agent).executeRecovery(alice.address))
        .to.be.revertedWithCustomError(token, "NoRecoveryPending")
        .withArgs(alice.address);
    });
  });

  describe("recovery delay", function () {
    it("the tokenizer sets it within [1 day, 30 days]; later requests use it, pending ones keep theirs", async function () {
      const { token, tokenizer, agent, alice, aliceSpare } = await loadFixture(recoveryFixture);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      const before = (await token.pendingRecovery(alice.address)).executableAt;
      await expect(token.connect(tokenizer).setRecoveryDelay(DAY)).to.emit(token, "RecoveryDelaySet").withArgs(DAY);
      expect(await token.recoveryDelay()).to.equal(BigInt(DAY));
      expect((await token.pendingRecovery(alice.address)).executableAt).to.equal(before);
      await token.connect(tokenizer).setRecoveryDelay(30 * DAY);
      await token.connect(alice).cancelRecovery(alice.address);
      const at = (await time.latest()) + 5;
      await time.setNextBlockTimestamp(at);
      await token.connect(agent).requestRecovery(alice.address, aliceSpare.address);
      expect((await token.pendingRecovery(alice.address)).executableAt).to.equal(BigInt(at + 30 * DAY));
      expect(await token.MIN_RECOVERY_DELAY()).to.equal(BigInt(DAY));
      expect(await token.MAX_RECOVERY_DELAY()).to.equal(BigInt(30 * DAY));
    });

    it("refuses a delay out of bounds (InvalidRecoveryDelay), and anyone but the tokenizer, a recovery agent included", async function () {
      const { token, tokenizer, agent } = await loadFixture(recoveryFixture);
      await expect(token.connect(tokenizer).setRecoveryDelay(DAY - 1))
        .to.be.revertedWithCustomError(token, "InvalidRecoveryDelay")
        .withArgs(DAY - 1);
      await expect(token.connect(tokenizer).setRecoveryDelay(30 * DAY + 1))
        .to.be.revertedWithCustomError(token, "InvalidRecoveryDelay")
        .withArgs(30 * DAY + 1);
      await expect(token.connect(agent).setRecoveryDelay(DAY))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(agent.address, ROLE.ADMIN);
    });
  });
});
