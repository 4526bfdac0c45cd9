/**
 * StoEscrow: the offerings findings of issue 48, each with what happened before and what happens now, and the
 * settlement paths (claims, redirects, refunds, proceeds) with payment tokens that take a fee or blacklist.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { BlacklistingERC20, StoEscrow } from "../../../typechain-types";
import { CODE, INVESTOR, USDC, createTokenization, deployFactoryFixture, tokenizationParams } from "./helpers";

const WEEK = 7 * 24 * 3600;

interface OfferingArgs {
  tokenAmount: bigint;
  softCap: bigint;
  hardCap: bigint;
  minInvestment: bigint;
  maxInvestment: bigint;
}

async function openOffering(escrow: StoEscrow, tokenizer: HardhatEthersSigner, a: OfferingArgs) {
  const start = (await time.latest()) + 10;
  await escrow
    .connect(tokenizer)
    .newOffering(a.tokenAmount, 0n, a.softCap, a.hardCap, a.minInvestment, a.maxInvestment, start, start + WEEK);
  await time.increaseTo(start);
}

/**
 * A token paid in `paymentToken` (TestERC20 by default) whose investors are alice (with a second wallet, aliceSpare),
 * bob and carol, each bound to an investor of its own; the tokenizer's own wallet `mallory` is whitelisted and bound
 * to no investor. Everyone funded and approved on the escrow.
 */
async function settlementFixtureWith(paymentTokenName: "TestERC20" | "FeeOnTransferERC20" | "BlacklistingERC20") {
  const base = await deployFactoryFixture();
  const { factory, tokenizer, alice, bob, carol } = base;
  const [aliceSpare, mallory] = (await ethers.getSigners()).slice(7, 9);
  const pay =
    paymentTokenName === "TestERC20"
      ? await ethers.deployContract("TestERC20", ["USD Coin", "USDC", 6])
      : paymentTokenName === "FeeOnTransferERC20"
        ? await ethers.deployContract("FeeOnTransferERC20", [100]) // 1 %
        : await ethers.deployContract("BlacklistingERC20");
  const { token, escrow } = await createTokenization(
    factory,
    tokenizer,
    tokenizationParams(await pay.getAddress(), {
      decimals: 0,
      initialHolders: [alice.address, aliceSpare.address, bob.address, carol.address, mallory.address],
      initialInvestorIds: [INVESTOR("alice"), INVESTOR("alice"), INVESTOR("bob"), INVESTOR("carol"), ethers.ZeroHash],
    }),
  );
  for (const who of [tokenizer, alice, aliceSpare, bob, carol, mallory]) {
    await pay.mint(who.address, USDC(100_000));
    await pay.connect(who).approve(escrow.target, ethers.MaxUint256);
  }
  return { ...base, pay, token, escrow, aliceSpare, mallory };
}
const settlementFixture = () => settlementFixtureWith("TestERC20");
const feeOnTransferFixture = () => settlementFixtureWith("FeeOnTransferERC20");
const blacklistingFixture = async () => {
  const base = await settlementFixtureWith("BlacklistingERC20");
  return { ...base, pay: base.pay as unknown as BlacklistingERC20 };
};

/** 0-decimal token: `tokenAmount` whole shares for `hardCap`. */
const shares = (tokenAmount: bigint, hardCap: bigint): OfferingArgs => ({
  tokenAmount,
  softCap: 0n,
  hardCap,
  minInvestment: 0n,
  maxInvestment: hardCap,
});

describe("StoEscrow settlement (issue 48: offerings that keep the investor's money the investor's)", function () {
  describe("redirectClaim: only to a wallet of the same investor", function () {
    /** 1000 shares for 10,000 USDC; alice paid 4000 (400 shares); closed successfully; alice then left the whitelist. */
    async function refusedAliceFixture() {
      const base = await settlementFixture();
      const { escrow, token, tokenizer, alice, bob } = base;
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(alice).invest(USDC(4000));
      await escrow.connect(bob).invest(USDC(1000));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      return base;
    }

    // Before: the tokenizer de-whitelisted a paid-up investor and redirected its tokens to any address, its own
    // included. Now the recipient must be bound to the same investor.
    it("refuses the tokenizer's own wallet, another investor's and the zero address (NotSameInvestor)", async function () {
      const { escrow, token, tokenizer, alice, bob, mallory } = await loadFixture(refusedAliceFixture);
      for (const recipient of [mallory.address, bob.address, tokenizer.address, ethers.ZeroAddress]) {
        await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, recipient))
          .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
          .withArgs(alice.address, recipient);
      }
      expect(await token.balanceOf(mallory.address)).to.equal(0n);
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
    });

    it("delivers to the investor's other bound wallet, with what it paid above the tokens' price", async function () {
      const { escrow, token, tokenizer, alice, aliceSpare } = await loadFixture(refusedAliceFixture);
      const tx = escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      await expect(tx).to.emit(escrow, "ClaimResolved").withArgs(1n, alice.address, aliceSpare.address, 400n, 0n);
      expect(await token.balanceOf(aliceSpare.address)).to.equal(400n);
    });

    it("refuses a bound wallet that may not receive, with the token's error", async function () {
      const { escrow, token, tokenizer, alice, aliceSpare } = await loadFixture(refusedAliceFixture);
      await token.connect(tokenizer).setAddressFrozen(aliceSpare.address, true);
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(aliceSpare.address);
    });

    it("follows the investor that took the position: rebinding the emptied wallet to another investor afterwards does not open it to that investor's wallets", async function () {
      const { escrow, token, tokenizer, alice, aliceSpare, mallory } = await loadFixture(refusedAliceFixture);
      // alice's wallet holds no token (it only has an offering position): the token lets it move to another investor.
      await token.connect(tokenizer).setWhitelisted(alice.address, true);
      await token.connect(tokenizer).whitelistInvestors([alice.address, mallory.address], [INVESTOR("eve"), INVESTOR("eve")]);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      expect(await token.investorOf(alice.address)).to.equal(INVESTOR("eve"));
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, mallory.address))
        .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
        .withArgs(alice.address, mallory.address);
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, mallory.address))
        .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
        .withArgs(alice.address, mallory.address);
      // alice's other wallet, bound to alice when the position was taken, still receives it.
      await escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      expect(await token.balanceOf(aliceSpare.address)).to.equal(400n);
    });

    it("an investor bound to no investor id can be redirected nowhere, only refunded to itself", async function () {
      const { escrow, token, pay, tokenizer, mallory, aliceSpare } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(mallory).invest(USDC(500));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(mallory.address, false);
      await expect(escrow.connect(tokenizer).redirectClaim(1, mallory.address, aliceSpare.address))
        .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
        .withArgs(mallory.address, aliceSpare.address);
      await expect(escrow.connect(tokenizer).refundClaim(1, mallory.address, aliceSpare.address))
        .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
        .withArgs(mallory.address, aliceSpare.address);
      await expect(escrow.connect(tokenizer).refundClaim(1, mallory.address, mallory.address)).to.changeTokenBalance(
        pay,
        mallory,
        USDC(500),
      );
    });
  });

  describe("refundClaim: to the investor or one of its bound wallets", function () {
    // Before: the refund always went to the original wallet, even a lost one. Now the tokenizer may send it to
    // another wallet of the same investor, and to no one else.
    it("pays the investment back to a bound wallet: its tokens' price from the tokenizer, the rest from the escrow", async function () {
      const { escrow, token, pay, tokenizer, alice, aliceSpare } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300))); // 1.30 USDC a share
      await escrow.connect(alice).invest(1_990_000n); // 1 share (1.30), 0.69 above
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setAddressFrozen(alice.address, true); // alice's wallet is compromised
      const reserved = await token.reservedSupply();
      const tx = escrow.connect(tokenizer).refundClaim(1, alice.address, aliceSpare.address);
      await expect(tx).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 0n, 1_990_000n);
      await expect(tx).to.emit(escrow, "ClaimResolved").withArgs(1n, alice.address, aliceSpare.address, 0n, 1_990_000n);
      await expect(tx).to.changeTokenBalances(
        pay,
        [tokenizer, escrow, aliceSpare, alice],
        [-1_300_000n, -690_000n, 1_990_000n, 0n],
      );
      expect(await token.reservedSupply()).to.equal(reserved - 1n);
    });

    it("refuses another investor's wallet and the tokenizer's own (NotSameInvestor)", async function () {
      const { escrow, token, tokenizer, alice, bob, mallory } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      for (const recipient of [bob.address, mallory.address, tokenizer.address, ethers.ZeroAddress]) {
        await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, recipient))
          .to.be.revertedWithCustomError(escrow, "NotSameInvestor")
          .withArgs(alice.address, recipient);
      }
    });
  });

  describe("whole-position pricing: the rounding remainder is paid back", function () {
    // Before: tokens were floored per ticket and the remainder kept, so two tickets of 1.99 USDC at 1.99 USDC for
    // 1.5 shares bought 2 shares, not 3. Now the position is priced whole.
    it("two tickets of 1.99 USDC, each worth 1.5 shares of a 0-decimal token, buy 3 shares", async function () {
      const { escrow, token, pay, tokenizer, alice } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(300n, USDC(398))); // 1.99 USDC buys exactly 1.5 shares
      await expect(escrow.connect(alice).invest(1_990_000n))
        .to.emit(escrow, "Invested")
        .withArgs(1n, alice.address, 1_990_000n, 1n, 0n);
      await expect(escrow.connect(alice).invest(1_990_000n))
        .to.emit(escrow, "Invested")
        .withArgs(1n, alice.address, 1_990_000n, 2n, 0n);
      expect(await escrow.tokensOwed(1, alice.address)).to.equal(3n);
      expect(await escrow.remainderOf(1, alice.address)).to.equal(0n);
      await escrow.connect(tokenizer).close();
      await expect(escrow.claim(1, alice.address)).to.changeTokenBalance(token, alice, 3n);
      expect((await escrow.offering(1)).proceeds).to.equal(3_980_000n);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalance(pay, tokenizer, 3_980_000n);
      expect(await pay.balanceOf(escrow.target)).to.equal(0n);
    });

    it("at 1.30 USDC a share, two tickets of 1.99 buy 3 shares and the 0.08 USDC left is paid back at claim", async function () {
      const { escrow, token, pay, tokenizer, alice } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300)));
      await escrow.connect(alice).invest(1_990_000n); // 1.53 shares: 1
      await escrow.connect(alice).invest(1_990_000n); // 3.06 shares on the whole position: 3
      expect(await escrow.tokensOwed(1, alice.address)).to.equal(3n);
      expect(await escrow.remainderOf(1, alice.address)).to.equal(80_000n); // 3.98 - ceil(3 x 1.30)
      const o = await escrow.offering(1);
      expect([o.raised, o.tokensSold, o.proceeds]).to.deep.equal([3_980_000n, 3n, 3_900_000n]);
      await escrow.connect(tokenizer).close();
      const claim = escrow.claim(1, alice.address);
      await expect(claim).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 3n, 80_000n);
      await expect(claim).to.changeTokenBalances(pay, [escrow, alice], [-80_000n, 80_000n]);
      expect(await token.balanceOf(alice.address)).to.equal(3n);
      await escrow.connect(tokenizer).withdrawProceeds(1);
      expect(await pay.balanceOf(escrow.target)).to.equal(0n);
    });

    it("a position that buys no share is refused; with a later ticket it does", async function () {
      const { escrow, tokenizer, bob } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300)));
      await expect(escrow.connect(bob).invest(1_000_000n))
        .to.be.revertedWithCustomError(escrow, "InvestmentBuysNoTokens")
        .withArgs(1_000_000n);
      await escrow.connect(bob).invest(1_300_000n);
      await expect(escrow.connect(bob).invest(1_000_000n))
        .to.emit(escrow, "Invested")
        .withArgs(1n, bob.address, 1_000_000n, 0n, 0n); // 2.30 USDC: still 1 share, 1.00 to pay back
      expect(await escrow.remainderOf(1, bob.address)).to.equal(1_000_000n);
    });
  });

  describe("a fee-on-transfer payment token", function () {
    // Before: the escrow credited what the investor sent, more than arrived, and close() reverted until someone
    // donated the difference. Now it credits what arrived, and every payment out is covered.
    it("credits what arrived; close, claims, remainders and proceeds leave the escrow at exactly 0", async function () {
      const { escrow, token, pay, tokenizer, alice, bob } = await loadFixture(feeOnTransferFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000))); // 10 USDC a share
      const tx = escrow.connect(alice).invest(USDC(1000)); // 990 arrive: 99 shares
      await expect(tx).to.emit(escrow, "Invested").withArgs(1n, alice.address, USDC(990), 99n, 0n);
      await expect(tx).to.changeTokenBalances(pay, [alice, escrow], [-USDC(1000), USDC(990)]);
      await escrow.connect(bob).invest(USDC(3100)); // 3069 arrive: 306 shares, 9 USDC above
      expect(await escrow.invested(1, alice.address)).to.equal(USDC(990));
      const o = await escrow.offering(1);
      expect([o.raised, o.tokensSold, o.proceeds]).to.deep.equal([USDC(4059), 405n, USDC(4050)]);
      expect(await pay.balanceOf(escrow.target)).to.equal(o.raised);

      await expect(escrow.connect(tokenizer).close()).to.emit(escrow, "OfferingClosed").withArgs(1n, true, USDC(4059), 405n);
      await escrow.claim(1, alice.address);
      await expect(escrow.claim(1, bob.address)).to.changeTokenBalances(pay, [escrow, bob], [-USDC(9), 8_910_000n]);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalances(
        pay,
        [escrow, tokenizer],
        [-USDC(4050), USDC(4050) - USDC(4050) / 100n],
      );
      expect(await pay.balanceOf(escrow.target)).to.equal(0n);
      expect([await token.balanceOf(alice.address), await token.balanceOf(bob.address)]).to.deep.equal([99n, 306n]);
    });

    it("after a failure every investor is refunded what arrived, and the escrow ends at exactly 0", async function () {
      const { escrow, pay, tokenizer, alice, bob } = await loadFixture(feeOnTransferFixture);
      await openOffering(escrow, tokenizer, { ...shares(1000n, USDC(10_000)), softCap: USDC(5000) });
      await escrow.connect(alice).invest(USDC(2000)); // 1980 arrive
      await escrow.connect(bob).invest(USDC(700)); // 693 arrive
      await escrow.connect(tokenizer).close();
      expect((await escrow.offering(1)).succeeded).to.equal(false);
      await expect(escrow.claim(1, alice.address)).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 0n, USDC(1980));
      await expect(escrow.claim(1, bob.address)).to.emit(escrow, "Claimed").withArgs(1n, bob.address, 0n, USDC(693));
      expect(await pay.balanceOf(escrow.target)).to.equal(0n);
    });
  });

  describe("a payment token that blacklists the tokenizer", function () {
    // Before: close() pushed the proceeds to the tokenizer, so a payment token that refused the tokenizer (USDC's
    // blacklist) made close() revert and held every investor's claim. Now close pushes nothing and the tokenizer
    // pulls the proceeds.
    it("cannot block close or the claims; the proceeds wait until the tokenizer may receive them", async function () {
      const { escrow, token, pay, tokenizer, alice, bob } = await loadFixture(blacklistingFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300)));
      await escrow.connect(alice).invest(USDC(400)); // 307 shares, 0.90 above
      await escrow.connect(bob).invest(USDC(300)); // 230 shares, 1.00 above
      await pay.setBlacklisted(tokenizer.address, true);
      await expect(escrow.close()).to.be.revertedWithCustomError(escrow, "NotAllowedToClose"); // not ended yet
      await time.increase(WEEK);
      await escrow.close();
      await expect(escrow.claim(1, alice.address)).to.changeTokenBalance(pay, alice, 900_000n);
      await expect(escrow.claim(1, bob.address)).to.changeTokenBalance(pay, bob, 1_000_000n);
      expect([await token.balanceOf(alice.address), await token.balanceOf(bob.address)]).to.deep.equal([307n, 230n]);
      const proceeds = (await escrow.offering(1)).proceeds;
      await expect(escrow.connect(tokenizer).withdrawProceeds(1))
        .to.be.revertedWithCustomError(pay, "Blacklisted")
        .withArgs(tokenizer.address);
      expect((await escrow.offering(1)).proceedsWithdrawn).to.equal(false);
      await pay.setBlacklisted(tokenizer.address, false);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalance(pay, tokenizer, proceeds);
      expect(await pay.balanceOf(escrow.target)).to.equal(0n);
    });

    it("a blacklisted investor holds up only its own claim", async function () {
      const { escrow, pay, tokenizer, alice, bob } = await loadFixture(blacklistingFixture);
      await openOffering(escrow, tokenizer, { ...shares(1000n, USDC(10_000)), softCap: USDC(5000) });
      await escrow.connect(alice).invest(USDC(400));
      await escrow.connect(bob).invest(USDC(300));
      await escrow.connect(tokenizer).close(); // failed: refunds
      await pay.setBlacklisted(alice.address, true);
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(pay, "Blacklisted").withArgs(alice.address);
      await expect(escrow.claim(1, bob.address)).to.changeTokenBalance(pay, bob, USDC(300));
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
    });
  });

  describe("a payment token that returns false instead of reverting", function () {
    it("a refused payment out fails the whole call (SafeERC20FailedOperation), which changes nothing", async function () {
      const { escrow, pay, tokenizer, alice } = await loadFixture(blacklistingFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300)));
      await escrow.connect(alice).invest(USDC(400)); // 307 shares, 0.90 USDC to pay back
      await escrow.connect(tokenizer).close();
      await pay.setFailSilently(true);
      await pay.setBlacklisted(alice.address, true);
      await pay.setBlacklisted(tokenizer.address, true);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
        .withArgs(pay.target);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1))
        .to.be.revertedWithCustomError(escrow, "SafeERC20FailedOperation")
        .withArgs(pay.target);
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
      expect((await escrow.offering(1)).proceedsWithdrawn).to.equal(false);
      await pay.setBlacklisted(alice.address, false);
      await expect(escrow.claim(1, alice.address)).to.changeTokenBalance(pay, alice, 900_000n);
    });
  });

  describe("withdrawProceeds", function () {
    it("is the tokenizer's only, for a closed successful offering with proceeds, once", async function () {
      const { escrow, pay, tokenizer, alice, bob } = await loadFixture(settlementFixture);
      await expect(escrow.connect(tokenizer).withdrawProceeds(0)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(0n);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await expect(escrow.connect(tokenizer).withdrawProceeds(2)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(2n);
      await escrow.connect(alice).invest(USDC(100));
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.be.revertedWithCustomError(escrow, "OfferingNotClosed").withArgs(1n);
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(alice).withdrawProceeds(1)).to.be.revertedWithCustomError(escrow, "NotTokenizer").withArgs(alice.address);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1))
        .to.emit(escrow, "ProceedsWithdrawn")
        .withArgs(1n, tokenizer.address, USDC(100));
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.be.revertedWithCustomError(escrow, "NothingToWithdraw").withArgs(1n);
      // A failed offering has no proceeds.
      const start = (await time.latest()) + 10;
      await escrow.connect(tokenizer).newOffering(1000n, 0n, USDC(5000), USDC(10_000), 0n, USDC(10_000), start, start + WEEK);
      await time.increaseTo(start);
      await escrow.connect(bob).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(tokenizer).withdrawProceeds(2)).to.be.revertedWithCustomError(escrow, "OfferingNotSucceeded").withArgs(2n);
      expect(await pay.balanceOf(escrow.target)).to.equal(USDC(100)); // bob's refund
    });

    it("the proceeds follow the tokenizer: after a handover the new key withdraws them", async function () {
      const { escrow, token, pay, tokenizer, alice, outsider } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).beginDefaultAdminTransfer(outsider.address);
      await token.connect(outsider).acceptDefaultAdminTransfer();
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.be.revertedWithCustomError(escrow, "NotTokenizer");
      await expect(escrow.connect(outsider).withdrawProceeds(1)).to.changeTokenBalance(pay, outsider, USDC(100));
    });
  });

  describe("a paused token", function () {
    it("holds deliveries after a success (EnforcedPause) and lets refunds after a failure through", async function () {
      const { escrow, token, pay, tokenizer, alice, bob } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).pause();
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(token, "EnforcedPause");
      await token.connect(tokenizer).unpause();
      await escrow.claim(1, alice.address);

      const start = (await time.latest()) + 10;
      await escrow.connect(tokenizer).newOffering(1000n, 0n, USDC(5000), USDC(10_000), 0n, USDC(10_000), start, start + WEEK);
      await time.increaseTo(start);
      await escrow.connect(bob).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).pause();
      await expect(escrow.claim(2, bob.address)).to.changeTokenBalance(pay, bob, USDC(100));
    });

    it("an investor frozen after a success is answered with its restriction code until unfrozen", async function () {
      const { escrow, token, tokenizer, alice } = await loadFixture(settlementFixture);
      await openOffering(escrow, tokenizer, shares(1000n, USDC(10_000)));
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, alice.address, CODE.RECEIVER_FROZEN);
      await token.connect(tokenizer).setAddressFrozen(alice.address, false);
      await escrow.claim(1, alice.address);
    });
  });

  describe("reentrancy through the payment token", function () {
    it("redirectClaim and refundClaim cannot be re-entered", async function () {
      const base = await deployFactoryFixture();
      const { factory, tokenizer, alice } = base;
      const [aliceSpare] = (await ethers.getSigners()).slice(7, 8);
      const hostile = await ethers.deployContract("ReentrantERC20");
      const { token, escrow } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await hostile.getAddress(), {
          decimals: 0,
          initialHolders: [alice.address, aliceSpare.address],
          initialInvestorIds: [INVESTOR("alice"), INVESTOR("alice")],
        }),
      );
      for (const who of [alice, tokenizer]) {
        await hostile.mint(who.address, USDC(10_000));
        await hostile.connect(who).approve(escrow.target, ethers.MaxUint256);
      }
      await openOffering(escrow, tokenizer, shares(1000n, USDC(1300)));
      await escrow.connect(alice).invest(USDC(400)); // 307 shares and a remainder: both paths move the payment token
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await hostile.arm(escrow.target, escrow.interface.encodeFunctionData("refundClaim", [1n, alice.address, aliceSpare.address]));
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, aliceSpare.address)).to.be.revertedWithCustomError(
        escrow,
        "ReentrancyGuardReentrantCall",
      );
      await hostile.arm(escrow.target, escrow.interface.encodeFunctionData("redirectClaim", [1n, alice.address, aliceSpare.address]));
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address)).to.be.revertedWithCustomError(
        escrow,
        "ReentrancyGuardReentrantCall",
      );
      await hostile.arm(ethers.ZeroAddress, "0x");
      await escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      expect(await token.balanceOf(aliceSpare.address)).to.equal(307n);
    });
  });
});
