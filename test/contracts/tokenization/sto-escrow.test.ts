import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { StoEscrow } from "../../../typechain-types";
import { CODE, TOKENS, USDC, createTokenization, deployFactoryFixture, investorIdOf, tokenizationParams } from "./helpers";

const Status = { NONE: 0n, PENDING: 1n, ACTIVE: 2n, PAUSED: 3n, ENDED: 4n, COMPLETED: 5n, FAILED: 6n };
const WEEK = 7 * 24 * 3600;

/** 1000 tokens for a 10,000 USDC hard cap: 10 USDC per token, 0.1 token (1e17 units) per USDC. */
const DEFAULT = {
  tokenAmount: TOKENS(1000),
  price: 0n,
  softCap: USDC(4000),
  hardCap: USDC(10_000),
  minInvestment: USDC(100),
  maxInvestment: USDC(6000),
};
const PRICE = USDC(10);
const tokensFor = (usdc: bigint) => (usdc * DEFAULT.tokenAmount) / DEFAULT.hardCap;

type OfferingArgs = typeof DEFAULT & { startTime: number; endTime: number };

function newOffering(escrow: StoEscrow, signer: HardhatEthersSigner, a: OfferingArgs) {
  return escrow
    .connect(signer)
    .newOffering(a.tokenAmount, a.price, a.softCap, a.hardCap, a.minInvestment, a.maxInvestment, a.startTime, a.endTime);
}

/** Token capped at 1500 with alice, bob, carol whitelisted (no balance); dave is not. Everyone has USDC approved. */
async function escrowFixture() {
  const base = await deployFactoryFixture();
  const { factory, tokenizer, alice, bob, carol, dave, usdc } = base;
  const { token, escrow } = await createTokenization(
    factory,
    tokenizer,
    tokenizationParams(await usdc.getAddress(), {
      supplyCap: TOKENS(1500),
      initialHolders: [alice.address, bob.address, carol.address],
      preMints: [0n, 0n, 0n],
    }),
  );
  for (const investor of [alice, bob, carol, dave]) {
    await usdc.mint(investor.address, USDC(100_000));
    await usdc.connect(investor).approve(escrow.target, ethers.MaxUint256);
  }
  const startTime = (await time.latest()) + 100;
  const args: OfferingArgs = { ...DEFAULT, startTime, endTime: startTime + WEEK };
  return { ...base, token, escrow, args };
}

/** escrowFixture with the default offering created (PENDING). */
async function pendingFixture() {
  const base = await escrowFixture();
  await newOffering(base.escrow, base.tokenizer, base.args);
  return base;
}

/** pendingFixture moved to the start time (ACTIVE). */
async function activeFixture() {
  const base = await pendingFixture();
  await time.increaseTo(base.args.startTime);
  return base;
}

describe("StoEscrow", function () {
  describe("views before any offering", function () {
    it("has no offering", async function () {
      const { escrow, token, alice } = await loadFixture(escrowFixture);
      expect(await escrow.token()).to.equal(token.target);
      expect(await escrow.currentOfferingId()).to.equal(0n);
      expect(await escrow.status(0)).to.equal(Status.NONE);
      expect(await escrow.status(1)).to.equal(Status.NONE);
      const o = await escrow.offering(1);
      expect(o.tokenAmount).to.equal(0n);
      expect(o.hardCap).to.equal(0n);
      expect(o.closed).to.equal(false);
      expect(await escrow.invested(1, alice.address)).to.equal(0n);
      expect(await escrow.tokensOwed(1, alice.address)).to.equal(0n);
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
    });
  });

  describe("newOffering", function () {
    it("creates offering 1, derives the price and reserves the tokens", async function () {
      const { escrow, token, tokenizer, args } = await loadFixture(escrowFixture);
      expect(
        await escrow
          .connect(tokenizer)
          .newOffering.staticCall(
            args.tokenAmount,
            0n,
            args.softCap,
            args.hardCap,
            args.minInvestment,
            args.maxInvestment,
            args.startTime,
            args.endTime,
          ),
      ).to.equal(1n);
      const tx = newOffering(escrow, tokenizer, args);
      await expect(tx)
        .to.emit(escrow, "OfferingCreated")
        .withArgs(
          1n,
          args.tokenAmount,
          PRICE,
          args.softCap,
          args.hardCap,
          args.minInvestment,
          args.maxInvestment,
          args.startTime,
          args.endTime,
        );
      await expect(tx).to.emit(token, "SupplyReserved").withArgs(args.tokenAmount, args.tokenAmount);

      expect(await escrow.currentOfferingId()).to.equal(1n);
      expect(await escrow.status(1)).to.equal(Status.PENDING);
      expect(await token.reservedSupply()).to.equal(args.tokenAmount);
      const o = await escrow.offering(1);
      expect(o.tokenAmount).to.equal(args.tokenAmount);
      expect(o.price).to.equal(PRICE);
      expect(o.softCap).to.equal(args.softCap);
      expect(o.hardCap).to.equal(args.hardCap);
      expect(o.minInvestment).to.equal(args.minInvestment);
      expect(o.maxInvestment).to.equal(args.maxInvestment);
      expect(o.startTime).to.equal(args.startTime);
      expect(o.endTime).to.equal(args.endTime);
      expect(o.raised).to.equal(0n);
      expect(o.tokensSold).to.equal(0n);
      expect([o.closed, o.succeeded, o.paused]).to.deep.equal([false, false, false]);
    });

    it("accepts the exact price and rejects any other non-zero price", async function () {
      const { escrow, tokenizer, args } = await loadFixture(escrowFixture);
      await expect(newOffering(escrow, tokenizer, { ...args, price: PRICE + 1n }))
        .to.be.revertedWithCustomError(escrow, "PriceMismatch")
        .withArgs(PRICE + 1n, PRICE);
      await expect(newOffering(escrow, tokenizer, { ...args, price: PRICE })).to.emit(escrow, "OfferingCreated");
    });

    it("floors the derived price", async function () {
      const { escrow, tokenizer, args } = await loadFixture(escrowFixture);
      // 10 USDC for 3 tokens: 3.333333 USDC per token.
      await newOffering(escrow, tokenizer, { ...args, tokenAmount: TOKENS(3), hardCap: USDC(10), softCap: 0n, minInvestment: 0n });
      expect((await escrow.offering(1)).price).to.equal(3_333_333n);
    });

    it("accepts a start at the current block time", async function () {
      const { escrow, tokenizer, args } = await loadFixture(escrowFixture);
      const now = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(now);
      await expect(newOffering(escrow, tokenizer, { ...args, startTime: now, endTime: now + 1 })).to.emit(
        escrow,
        "OfferingCreated",
      );
    });

    it("is tokenizer only", async function () {
      const { escrow, alice, args } = await loadFixture(escrowFixture);
      await expect(newOffering(escrow, alice, args))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(alice.address);
    });

    it("validates amount, caps, limits and window", async function () {
      const { escrow, tokenizer, args } = await loadFixture(escrowFixture);
      await expect(newOffering(escrow, tokenizer, { ...args, tokenAmount: 0n })).to.be.revertedWithCustomError(
        escrow,
        "InvalidTokenAmount",
      );
      await expect(newOffering(escrow, tokenizer, { ...args, softCap: 0n, hardCap: 0n }))
        .to.be.revertedWithCustomError(escrow, "InvalidCaps")
        .withArgs(0n, 0n);
      await expect(newOffering(escrow, tokenizer, { ...args, softCap: args.hardCap + 1n }))
        .to.be.revertedWithCustomError(escrow, "InvalidCaps")
        .withArgs(args.hardCap + 1n, args.hardCap);
      await expect(newOffering(escrow, tokenizer, { ...args, minInvestment: 0n, maxInvestment: 0n }))
        .to.be.revertedWithCustomError(escrow, "InvalidInvestmentLimits")
        .withArgs(0n, 0n);
      await expect(newOffering(escrow, tokenizer, { ...args, minInvestment: USDC(7000) }))
        .to.be.revertedWithCustomError(escrow, "InvalidInvestmentLimits")
        .withArgs(USDC(7000), args.maxInvestment);
      const past = (await time.latest()) - 1;
      await expect(newOffering(escrow, tokenizer, { ...args, startTime: past }))
        .to.be.revertedWithCustomError(escrow, "InvalidWindow")
        .withArgs(past, args.endTime);
      await expect(newOffering(escrow, tokenizer, { ...args, endTime: args.startTime }))
        .to.be.revertedWithCustomError(escrow, "InvalidWindow")
        .withArgs(args.startTime, args.startTime);
      await expect(newOffering(escrow, tokenizer, { ...args, endTime: args.startTime - 1 }))
        .to.be.revertedWithCustomError(escrow, "InvalidWindow")
        .withArgs(args.startTime, args.startTime - 1);
    });

    it("fails with the token's SupplyCapExceeded when the cap has no room", async function () {
      const { escrow, token, tokenizer, args } = await loadFixture(escrowFixture);
      await expect(newOffering(escrow, tokenizer, { ...args, tokenAmount: TOKENS(1501) }))
        .to.be.revertedWithCustomError(token, "SupplyCapExceeded")
        .withArgs(TOKENS(1500), TOKENS(1501));
    });

    it("allows one open offering at a time (pending, paused or ended but not closed)", async function () {
      const { escrow, tokenizer, args } = await loadFixture(pendingFixture);
      await expect(newOffering(escrow, tokenizer, args))
        .to.be.revertedWithCustomError(escrow, "OfferingInProgress")
        .withArgs(1n);
      await time.increaseTo(args.startTime);
      await escrow.connect(tokenizer).setPaused(true);
      await expect(newOffering(escrow, tokenizer, args))
        .to.be.revertedWithCustomError(escrow, "OfferingInProgress")
        .withArgs(1n);
      await time.increaseTo(args.endTime);
      await expect(newOffering(escrow, tokenizer, args))
        .to.be.revertedWithCustomError(escrow, "OfferingInProgress")
        .withArgs(1n);
    });
  });

  describe("invest", function () {
    it("takes the payment, records the position and the tokens owed", async function () {
      const { escrow, usdc, alice, bob } = await loadFixture(activeFixture);
      const tx = escrow.connect(alice).invest(USDC(1000));
      await expect(tx).to.emit(escrow, "Invested").withArgs(1n, alice.address, USDC(1000), TOKENS(100), 0n);
      await expect(tx).to.changeTokenBalances(usdc, [alice, escrow], [-USDC(1000), USDC(1000)]);
      await escrow.connect(alice).invest(USDC(500));
      await escrow.connect(bob).invest(USDC(250));
      expect(await escrow.invested(1, alice.address)).to.equal(USDC(1500));
      expect(await escrow.tokensOwed(1, alice.address)).to.equal(TOKENS(150));
      expect(await escrow.tokensOwed(1, bob.address)).to.equal(TOKENS(25));
      const o = await escrow.offering(1);
      expect(o.raised).to.equal(USDC(1750));
      expect(o.tokensSold).to.equal(TOKENS(175));
      expect(await escrow.status(1)).to.equal(Status.ACTIVE);
    });

    it("accepts only up to the hard cap and never takes the excess", async function () {
      const { escrow, usdc, alice, bob, carol } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(6000));
      await escrow.connect(bob).invest(USDC(3000));
      const tx = escrow.connect(carol).invest(USDC(2500));
      await expect(tx).to.emit(escrow, "Invested").withArgs(1n, carol.address, USDC(1000), TOKENS(100), USDC(1500));
      await expect(tx).to.changeTokenBalances(usdc, [carol, escrow], [-USDC(1000), USDC(1000)]);
      expect(await escrow.invested(1, carol.address)).to.equal(USDC(1000));
      expect((await escrow.offering(1)).tokensSold).to.equal(DEFAULT.tokenAmount);
      expect(await escrow.status(1)).to.equal(Status.ENDED);
      await expect(escrow.connect(carol).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "HardCapReached")
        .withArgs(DEFAULT.hardCap);
    });

    it("waives the minimum when less than it remains", async function () {
      const { escrow, alice, bob, carol } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(6000));
      await escrow.connect(bob).invest(USDC(3950)); // 50 left, below the 100 minimum
      await expect(escrow.connect(carol).invest(USDC(30)))
        .to.emit(escrow, "Invested")
        .withArgs(1n, carol.address, USDC(30), tokensFor(USDC(30)), 0n);
      await expect(escrow.connect(carol).invest(USDC(20)))
        .to.emit(escrow, "Invested")
        .withArgs(1n, carol.address, USDC(20), tokensFor(USDC(20)), 0n);
      expect(await escrow.status(1)).to.equal(Status.ENDED);
    });

    it("enforces the minimum ticket while enough remains", async function () {
      const { escrow, alice } = await loadFixture(activeFixture);
      await expect(escrow.connect(alice).invest(USDC(99)))
        .to.be.revertedWithCustomError(escrow, "BelowMinimumInvestment")
        .withArgs(USDC(99), USDC(100));
    });

    it("enforces the maximum cumulatively per investor", async function () {
      const { escrow, alice } = await loadFixture(activeFixture);
      await expect(escrow.connect(alice).invest(USDC(6001)))
        .to.be.revertedWithCustomError(escrow, "AboveMaximumInvestment")
        .withArgs(USDC(6001), USDC(6000));
      await escrow.connect(alice).invest(USDC(5000));
      await expect(escrow.connect(alice).invest(USDC(1001)))
        .to.be.revertedWithCustomError(escrow, "AboveMaximumInvestment")
        .withArgs(USDC(6001), USDC(6000));
      await escrow.connect(alice).invest(USDC(1000));
    });

    it("rejects 0 and investing without an offering", async function () {
      const { escrow, alice } = await loadFixture(escrowFixture);
      await expect(escrow.connect(alice).invest(0n)).to.be.revertedWithCustomError(escrow, "ZeroAmount");
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "UnknownOffering")
        .withArgs(0n);
    });

    it("only inside the window: before start and from the end time on it is refused", async function () {
      const { escrow, alice, args } = await loadFixture(pendingFixture);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "OfferingNotStarted")
        .withArgs(args.startTime);
      await time.setNextBlockTimestamp(args.startTime);
      await escrow.connect(alice).invest(USDC(100));
      await time.setNextBlockTimestamp(args.endTime - 1);
      await escrow.connect(alice).invest(USDC(100));
      await time.setNextBlockTimestamp(args.endTime);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "OfferingEnded")
        .withArgs(args.endTime);
    });

    it("is refused while paused and after close", async function () {
      const { escrow, tokenizer, alice } = await loadFixture(activeFixture);
      await escrow.connect(tokenizer).setPaused(true);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "OfferingIsPaused")
        .withArgs(1n);
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "OfferingAlreadyClosed")
        .withArgs(1n);
    });

    it("requires an investor the token would deliver to (canReceive), answering the token's restriction code", async function () {
      const { escrow, token, usdc, tokenizer, alice, bob, dave } = await loadFixture(activeFixture);
      await expect(escrow.connect(dave).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, dave.address, CODE.RECEIVER_NOT_WHITELISTED);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, alice.address, CODE.RECEIVER_NOT_WHITELISTED);
      // Issue 48: an address-frozen investor (whitelisted) used to pay, then be refused at claim. Now it cannot pay.
      await token.connect(tokenizer).setAddressFrozen(bob.address, true);
      const refused = escrow.connect(bob).invest(USDC(100));
      await expect(refused)
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, bob.address, CODE.RECEIVER_FROZEN);
      expect(await usdc.balanceOf(escrow.target)).to.equal(0n);
      await token.connect(tokenizer).setAddressFrozen(bob.address, false);
      await escrow.connect(bob).invest(USDC(100));
    });

    it("is refused while the token is paused (TokenPaused)", async function () {
      const { escrow, token, tokenizer, alice } = await loadFixture(activeFixture);
      await token.connect(tokenizer).pause();
      await expect(escrow.connect(alice).invest(USDC(100))).to.be.revertedWithCustomError(escrow, "TokenPaused");
      await token.connect(tokenizer).unpause();
      await escrow.connect(alice).invest(USDC(100));
    });

    it("fails with the payment token's error without an allowance", async function () {
      const { escrow, usdc, alice } = await loadFixture(activeFixture);
      await usdc.connect(alice).approve(escrow.target, 0n);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientAllowance")
        .withArgs(escrow.target, 0n, USDC(100));
    });
  });

  describe("setPaused", function () {
    it("pauses and unpauses the current offering", async function () {
      const { escrow, tokenizer, alice } = await loadFixture(activeFixture);
      await expect(escrow.connect(tokenizer).setPaused(true)).to.emit(escrow, "OfferingPaused").withArgs(1n, true);
      expect(await escrow.status(1)).to.equal(Status.PAUSED);
      expect((await escrow.offering(1)).paused).to.equal(true);
      await expect(escrow.connect(tokenizer).setPaused(false)).to.emit(escrow, "OfferingPaused").withArgs(1n, false);
      expect(await escrow.status(1)).to.equal(Status.ACTIVE);
      await escrow.connect(alice).invest(USDC(100));
    });

    it("refuses redundant changes", async function () {
      const { escrow, tokenizer } = await loadFixture(activeFixture);
      await expect(escrow.connect(tokenizer).setPaused(false))
        .to.be.revertedWithCustomError(escrow, "OfferingNotPaused")
        .withArgs(1n);
      await escrow.connect(tokenizer).setPaused(true);
      await expect(escrow.connect(tokenizer).setPaused(true))
        .to.be.revertedWithCustomError(escrow, "OfferingIsPaused")
        .withArgs(1n);
    });

    it("is tokenizer only, needs an offering and refuses a closed one", async function () {
      const { escrow, tokenizer, alice, args } = await loadFixture(escrowFixture);
      await expect(escrow.connect(tokenizer).setPaused(true))
        .to.be.revertedWithCustomError(escrow, "UnknownOffering")
        .withArgs(0n);
      await newOffering(escrow, tokenizer, args);
      await expect(escrow.connect(alice).setPaused(true))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(alice.address);
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(tokenizer).setPaused(true))
        .to.be.revertedWithCustomError(escrow, "OfferingAlreadyClosed")
        .withArgs(1n);
    });
  });

  describe("close", function () {
    it("successful offering: unsold reservation released, tokens claimable, proceeds withdrawn by the tokenizer", async function () {
      const { escrow, token, usdc, tokenizer, alice, bob, outsider, args } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(3000));
      await escrow.connect(bob).invest(USDC(2000));
      await time.increaseTo(args.endTime);
      expect(await escrow.status(1)).to.equal(Status.ENDED);

      const tx = escrow.connect(outsider).close();
      await expect(tx).to.emit(escrow, "OfferingClosed").withArgs(1n, true, USDC(5000), TOKENS(500));
      await expect(tx).to.emit(token, "ReservationReleased").withArgs(TOKENS(500), TOKENS(500));
      // Close pushes nothing: the proceeds wait in the escrow for the tokenizer to withdraw them.
      await expect(tx).to.changeTokenBalances(usdc, [escrow, tokenizer], [0n, 0n]);
      expect(await escrow.status(1)).to.equal(Status.COMPLETED);
      expect((await escrow.offering(1)).proceeds).to.equal(USDC(5000));
      const withdraw = escrow.connect(tokenizer).withdrawProceeds(1);
      await expect(withdraw).to.emit(escrow, "ProceedsWithdrawn").withArgs(1n, tokenizer.address, USDC(5000));
      await expect(withdraw).to.changeTokenBalances(usdc, [escrow, tokenizer], [-USDC(5000), USDC(5000)]);
      expect((await escrow.offering(1)).proceedsWithdrawn).to.equal(true);
      expect(await token.reservedSupply()).to.equal(TOKENS(500));
      const o = await escrow.offering(1);
      expect([o.closed, o.succeeded]).to.deep.equal([true, true]);

      // Anyone may trigger the claim; the investor receives.
      const claim = escrow.connect(outsider).claim(1, alice.address);
      await expect(claim).to.emit(escrow, "Claimed").withArgs(1n, alice.address, TOKENS(300), 0n);
      await expect(claim).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, alice.address, TOKENS(300));
      await escrow.connect(bob).claim(1, bob.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(300));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(200));
      expect(await token.totalSupply()).to.equal(TOKENS(500));
      expect(await token.reservedSupply()).to.equal(0n);
      expect(await escrow.claimed(1, alice.address)).to.equal(true);
      expect(await usdc.balanceOf(escrow.target)).to.equal(0n);
    });

    it("sold-out offering: anyone may close at the hard cap before the end; nothing left to release", async function () {
      const { escrow, token, usdc, tokenizer, alice, bob, carol, outsider } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(6000));
      await escrow.connect(bob).invest(USDC(3000));
      await escrow.connect(carol).invest(USDC(5000)); // 1000 accepted, 4000 never taken
      const tx = escrow.connect(outsider).close();
      await expect(tx).to.emit(escrow, "OfferingClosed").withArgs(1n, true, USDC(10_000), TOKENS(1000));
      await expect(tx).to.not.emit(token, "ReservationReleased");
      await expect(tx).to.changeTokenBalance(usdc, tokenizer, 0n);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalance(usdc, tokenizer, USDC(10_000));
      for (const investor of [alice, bob, carol]) await escrow.claim(1, investor.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(600));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(300));
      expect(await token.balanceOf(carol.address)).to.equal(TOKENS(100));
      expect(await token.totalSupply()).to.equal(TOKENS(1000));
      expect(await token.reservedSupply()).to.equal(0n);
    });

    it("failed offering: whole reservation released, payments claimable back", async function () {
      const { escrow, token, usdc, tokenizer, alice, bob, args } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(2000));
      await escrow.connect(bob).invest(USDC(1000));
      await time.setNextBlockTimestamp(args.endTime);
      const tx = escrow.connect(alice).close();
      await expect(tx).to.emit(escrow, "OfferingClosed").withArgs(1n, false, USDC(3000), TOKENS(300));
      await expect(tx).to.emit(token, "ReservationReleased").withArgs(TOKENS(1000), 0n);
      await expect(tx).to.changeTokenBalance(usdc, tokenizer, 0n);
      expect(await escrow.status(1)).to.equal(Status.FAILED);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1))
        .to.be.revertedWithCustomError(escrow, "OfferingNotSucceeded")
        .withArgs(1n);
      expect(await token.reservedSupply()).to.equal(0n);

      const claim = escrow.claim(1, alice.address);
      await expect(claim).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 0n, USDC(2000));
      await expect(claim).to.changeTokenBalances(usdc, [escrow, alice], [-USDC(2000), USDC(2000)]);
      await escrow.claim(1, bob.address);
      expect(await usdc.balanceOf(escrow.target)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(0n);
    });

    it("the tokenizer may close early, even before the start", async function () {
      const { escrow, token, tokenizer } = await loadFixture(pendingFixture);
      await expect(escrow.connect(tokenizer).close()).to.emit(escrow, "OfferingClosed").withArgs(1n, false, 0n, 0n);
      expect(await escrow.status(1)).to.equal(Status.FAILED);
      expect(await token.reservedSupply()).to.equal(0n);
    });

    it("tokenizer early close of a running offering above the soft cap succeeds", async function () {
      const { escrow, usdc, tokenizer, alice } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(4000));
      const tx = escrow.connect(tokenizer).close();
      await expect(tx).to.emit(escrow, "OfferingClosed").withArgs(1n, true, USDC(4000), TOKENS(400));
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalance(usdc, tokenizer, USDC(4000));
    });

    it("a zero soft cap succeeds with nothing raised", async function () {
      const { escrow, token, usdc, tokenizer, args } = await loadFixture(escrowFixture);
      await newOffering(escrow, tokenizer, { ...args, softCap: 0n });
      const tx = escrow.connect(tokenizer).close();
      await expect(tx).to.emit(escrow, "OfferingClosed").withArgs(1n, true, 0n, 0n);
      await expect(tx).to.emit(token, "ReservationReleased").withArgs(TOKENS(1000), 0n);
      await expect(tx).to.not.emit(usdc, "Transfer");
      expect(await escrow.status(1)).to.equal(Status.COMPLETED);
      await expect(escrow.connect(tokenizer).withdrawProceeds(1))
        .to.be.revertedWithCustomError(escrow, "NothingToWithdraw")
        .withArgs(1n);
    });

    it("others may not close a running offering; anyone may once it ended, even paused", async function () {
      const { escrow, tokenizer, outsider, args } = await loadFixture(pendingFixture);
      await expect(escrow.connect(outsider).close())
        .to.be.revertedWithCustomError(escrow, "NotAllowedToClose")
        .withArgs(outsider.address);
      await time.increaseTo(args.startTime);
      await escrow.connect(tokenizer).setPaused(true);
      await expect(escrow.connect(outsider).close())
        .to.be.revertedWithCustomError(escrow, "NotAllowedToClose")
        .withArgs(outsider.address);
      await time.setNextBlockTimestamp(args.endTime);
      expect(await escrow.status(1)).to.equal(Status.PAUSED);
      await expect(escrow.connect(outsider).close()).to.emit(escrow, "OfferingClosed");
    });

    it("needs an offering and closes only once", async function () {
      const { escrow, tokenizer, args } = await loadFixture(escrowFixture);
      await expect(escrow.connect(tokenizer).close())
        .to.be.revertedWithCustomError(escrow, "UnknownOffering")
        .withArgs(0n);
      await newOffering(escrow, tokenizer, args);
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(tokenizer).close())
        .to.be.revertedWithCustomError(escrow, "OfferingAlreadyClosed")
        .withArgs(1n);
    });
  });

  describe("claim", function () {
    it("refuses unknown and open offerings, non-investors and second claims", async function () {
      const { escrow, tokenizer, alice, dave, args } = await loadFixture(escrowFixture);
      await expect(escrow.claim(0, alice.address)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(0n);
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(1n);
      await newOffering(escrow, tokenizer, args);
      await time.increaseTo(args.startTime);
      await escrow.connect(alice).invest(USDC(5000));
      await expect(escrow.claim(2, alice.address)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(2n);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "OfferingNotClosed")
        .withArgs(1n);
      await escrow.connect(tokenizer).close();
      await expect(escrow.claim(1, dave.address))
        .to.be.revertedWithCustomError(escrow, "NothingToClaim")
        .withArgs(dave.address);
      await escrow.claim(1, alice.address);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "AlreadyClaimed")
        .withArgs(alice.address);
    });

    it("a refund is paid only once", async function () {
      const { escrow, tokenizer, alice } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close(); // below the soft cap: failed
      await escrow.claim(1, alice.address);
      await expect(escrow.connect(alice).claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "AlreadyClaimed")
        .withArgs(alice.address);
    });

    it("refuses a ticket that buys 0 token units, with the accepted amount", async function () {
      const { escrow, tokenizer, alice, bob, carol, args } = await loadFixture(escrowFixture);
      // 3 token units for 10,000 USDC: one unit costs 3333.333334 USDC (rounded up); a 100 USDC ticket owes 0.03 units.
      await newOffering(escrow, tokenizer, { ...args, tokenAmount: 3n, softCap: 0n });
      await time.increaseTo(args.startTime);
      await expect(escrow.connect(alice).invest(USDC(100)))
        .to.be.revertedWithCustomError(escrow, "InvestmentBuysNoTokens")
        .withArgs(USDC(100));
      // One payment unit short of a token unit.
      await expect(escrow.connect(alice).invest(3_333_333_333n))
        .to.be.revertedWithCustomError(escrow, "InvestmentBuysNoTokens")
        .withArgs(3_333_333_333n);
      // The argument is the accepted part: above the remaining 600 USDC only 600 USDC would be taken (0.18 units).
      await escrow.connect(alice).invest(USDC(6000)); // 1.8 -> 1 unit
      await escrow.connect(bob).invest(USDC(3400)); // 1.02 -> 1 unit
      await expect(escrow.connect(carol).invest(USDC(1000)))
        .to.be.revertedWithCustomError(escrow, "InvestmentBuysNoTokens")
        .withArgs(USDC(600));
      // Nothing was recorded or pulled for the refused tickets.
      const o = await escrow.offering(1);
      expect([o.raised, o.tokensSold]).to.deep.equal([USDC(9400), 2n]);
      expect(await escrow.invested(1, carol.address)).to.equal(0n);
      expect(await escrow.tokensOwed(1, carol.address)).to.equal(0n);
    });

    it("the smallest ticket buying exactly 1 token unit is accepted and delivers it", async function () {
      const { escrow, token, usdc, tokenizer, alice, args } = await loadFixture(escrowFixture);
      await newOffering(escrow, tokenizer, { ...args, tokenAmount: 3n, softCap: 0n });
      await time.increaseTo(args.startTime);
      const ticket = 3_333_333_334n; // ceil(10,000 USDC / 3): 3_333_333_334 * 3 / 10_000_000_000 = 1
      const before = await usdc.balanceOf(alice.address);
      await expect(escrow.connect(alice).invest(ticket))
        .to.emit(escrow, "Invested")
        .withArgs(1n, alice.address, ticket, 1n, 0n);
      expect(await escrow.tokensOwed(1, alice.address)).to.equal(1n);
      await escrow.connect(tokenizer).close();
      const claim = escrow.claim(1, alice.address);
      await expect(claim).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 1n, 0n);
      await expect(claim).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, alice.address, 1n);
      expect(await token.balanceOf(alice.address)).to.equal(1n);
      expect(await usdc.balanceOf(alice.address)).to.equal(before - ticket);
      expect(await escrow.claimed(1, alice.address)).to.equal(true);
    });

    it("token delivery waits while the investor is off the whitelist, answering the token's restriction code", async function () {
      const { escrow, token, tokenizer, alice } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(4000));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, alice.address, 3n);
      await token.connect(tokenizer).setWhitelisted(alice.address, true);
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await expect(escrow.claim(1, alice.address))
        .to.be.revertedWithCustomError(escrow, "InvestorCannotReceive")
        .withArgs(1n, alice.address, 5n);
      await token.connect(tokenizer).setAddressFrozen(alice.address, false);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
      await token.connect(tokenizer).setWhitelisted(alice.address, true);
      await escrow.claim(1, alice.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(400));
    });
  });

  describe("investors the token refuses after a success", function () {
    /**
     * alice invested 4000 (400 tokens), bob 2000 (200); closed successfully; alice then left the whitelist. `outsider`
     * is alice's second wallet (bound to her investor id, whitelisted); carol is another investor.
     */
    async function removedInvestorFixture() {
      const base = await activeFixture();
      const { escrow, token, usdc, tokenizer, alice, bob, outsider } = base;
      await escrow.connect(alice).invest(USDC(4000));
      await escrow.connect(bob).invest(USDC(2000));
      await escrow.connect(tokenizer).close();
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await token.connect(tokenizer).whitelistInvestors([outsider.address], [investorIdOf(alice.address)]);
      await usdc.mint(tokenizer.address, USDC(10_000));
      return { ...base, aliceSpare: outsider };
    }

    it("redirectClaim delivers the tokens owed to another wallet of the same investor", async function () {
      const { escrow, token, tokenizer, alice, aliceSpare } = await loadFixture(removedInvestorFixture);
      const reserved = await token.reservedSupply();
      const tx = escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      await expect(tx).to.emit(escrow, "Claimed").withArgs(1n, alice.address, TOKENS(400), 0n);
      await expect(tx).to.emit(escrow, "ClaimResolved").withArgs(1n, alice.address, aliceSpare.address, TOKENS(400), 0n);
      await expect(tx).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, aliceSpare.address, TOKENS(400));
      expect(await token.balanceOf(aliceSpare.address)).to.equal(TOKENS(400));
      expect(await token.reservedSupply()).to.equal(reserved - TOKENS(400));
      expect(await escrow.claimed(1, alice.address)).to.equal(true);
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(escrow, "AlreadyClaimed").withArgs(alice.address);
    });

    it("refundClaim pays the investment back (its tokens' price from the tokenizer) and releases the reservation", async function () {
      const { escrow, token, usdc, tokenizer, alice } = await loadFixture(removedInvestorFixture);
      const reserved = await token.reservedSupply();
      await usdc.connect(tokenizer).approve(escrow.target, USDC(4000));
      const tx = escrow.connect(tokenizer).refundClaim(1, alice.address, alice.address);
      await expect(tx).to.emit(escrow, "Claimed").withArgs(1n, alice.address, 0n, USDC(4000));
      await expect(tx).to.emit(escrow, "ClaimResolved").withArgs(1n, alice.address, alice.address, 0n, USDC(4000));
      await expect(tx).to.emit(token, "ReservationReleased").withArgs(TOKENS(400), reserved - TOKENS(400));
      await expect(tx).to.changeTokenBalances(usdc, [tokenizer, alice, escrow], [-USDC(4000), USDC(4000), 0n]);
      expect(await token.reservedSupply()).to.equal(reserved - TOKENS(400));
      expect(await escrow.claimed(1, alice.address)).to.equal(true);
    });

    it("refundClaim needs the tokenizer's allowance", async function () {
      const { escrow, usdc, tokenizer, alice } = await loadFixture(removedInvestorFixture);
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, alice.address))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientAllowance")
        .withArgs(escrow.target, 0n, USDC(4000));
      expect(await escrow.claimed(1, alice.address)).to.equal(false);
    });

    it("both are refused for an investor the token accepts, and after the position is settled", async function () {
      const { escrow, usdc, tokenizer, alice, bob, aliceSpare } = await loadFixture(removedInvestorFixture);
      await expect(escrow.connect(tokenizer).redirectClaim(1, bob.address, bob.address))
        .to.be.revertedWithCustomError(escrow, "InvestorCanClaim")
        .withArgs(bob.address);
      await expect(escrow.connect(tokenizer).refundClaim(1, bob.address, bob.address))
        .to.be.revertedWithCustomError(escrow, "InvestorCanClaim")
        .withArgs(bob.address);
      await escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address);
      await usdc.connect(tokenizer).approve(escrow.target, USDC(4000));
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, alice.address))
        .to.be.revertedWithCustomError(escrow, "AlreadyClaimed")
        .withArgs(alice.address);
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(escrow, "AlreadyClaimed")
        .withArgs(alice.address);
    });

    it("both are tokenizer only", async function () {
      const { escrow, bob, alice, aliceSpare } = await loadFixture(removedInvestorFixture);
      await expect(escrow.connect(bob).redirectClaim(1, alice.address, aliceSpare.address))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(bob.address);
      await expect(escrow.connect(aliceSpare).refundClaim(1, alice.address, alice.address))
        .to.be.revertedWithCustomError(escrow, "NotTokenizer")
        .withArgs(aliceSpare.address);
    });

    it("both are refused for unknown, open and failed offerings and for non-investors", async function () {
      const { escrow, token, tokenizer, alice, bob, carol, dave, args } = await loadFixture(escrowFixture);
      await expect(escrow.connect(tokenizer).redirectClaim(0, alice.address, bob.address)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(0n);
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, alice.address)).to.be.revertedWithCustomError(escrow, "UnknownOffering").withArgs(1n);
      await newOffering(escrow, tokenizer, args);
      await time.increaseTo(args.startTime);
      await escrow.connect(alice).invest(USDC(1000));
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, bob.address)).to.be.revertedWithCustomError(escrow, "OfferingNotClosed").withArgs(1n);
      await escrow.connect(tokenizer).close(); // below the soft cap: failed
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(escrow.connect(tokenizer).refundClaim(1, alice.address, alice.address)).to.be.revertedWithCustomError(escrow, "OfferingNotSucceeded").withArgs(1n);
      await expect(escrow.connect(tokenizer).redirectClaim(1, alice.address, alice.address)).to.be.revertedWithCustomError(escrow, "OfferingNotSucceeded").withArgs(1n);
      // The investor claims its own refund after a failure, whitelisted or not.
      await escrow.claim(1, alice.address);

      await newOffering(escrow, tokenizer, { ...args, startTime: (await time.latest()) + 10, endTime: (await time.latest()) + WEEK });
      await time.increase(20);
      await escrow.connect(bob).invest(USDC(5000));
      await escrow.connect(tokenizer).close();
      await expect(escrow.connect(tokenizer).redirectClaim(2, dave.address, carol.address)).to.be.revertedWithCustomError(escrow, "NothingToClaim").withArgs(dave.address);
      await expect(escrow.connect(tokenizer).refundClaim(2, dave.address, dave.address)).to.be.revertedWithCustomError(escrow, "NothingToClaim").withArgs(dave.address);
    });
  });

  describe("lifecycle", function () {
    it("walks the status machine: NONE, PENDING, ACTIVE, PAUSED, ACTIVE, ENDED, COMPLETED", async function () {
      const { escrow, tokenizer, alice, args } = await loadFixture(escrowFixture);
      expect(await escrow.status(1)).to.equal(Status.NONE);
      await newOffering(escrow, tokenizer, args);
      expect(await escrow.status(1)).to.equal(Status.PENDING);
      await time.increaseTo(args.startTime);
      expect(await escrow.status(1)).to.equal(Status.ACTIVE);
      await escrow.connect(tokenizer).setPaused(true);
      expect(await escrow.status(1)).to.equal(Status.PAUSED);
      await escrow.connect(tokenizer).setPaused(false);
      await escrow.connect(alice).invest(USDC(5000));
      expect(await escrow.status(1)).to.equal(Status.ACTIVE);
      await time.increaseTo(args.endTime);
      expect(await escrow.status(1)).to.equal(Status.ENDED);
      await escrow.close();
      expect(await escrow.status(1)).to.equal(Status.COMPLETED);
      expect(await escrow.status(2)).to.equal(Status.NONE);
    });

    it("runs a second offering after the first closed; the first stays claimable", async function () {
      const { escrow, token, tokenizer, alice, bob } = await loadFixture(activeFixture);
      await escrow.connect(alice).invest(USDC(4000));
      await escrow.connect(tokenizer).close(); // 400 sold, 600 released

      const startTime = (await time.latest()) + 10;
      const second = { ...DEFAULT, tokenAmount: TOKENS(500), hardCap: USDC(1000), softCap: 0n, minInvestment: 0n, startTime, endTime: startTime + WEEK };
      await expect(newOffering(escrow, tokenizer, second))
        .to.emit(escrow, "OfferingCreated")
        .withArgs(2n, TOKENS(500), USDC(2), 0n, USDC(1000), 0n, DEFAULT.maxInvestment, startTime, startTime + WEEK);
      expect(await escrow.currentOfferingId()).to.equal(2n);
      expect(await token.reservedSupply()).to.equal(TOKENS(900)); // 400 still owed by offering 1 + 500
      await time.increaseTo(startTime);
      await expect(escrow.connect(bob).invest(USDC(100)))
        .to.emit(escrow, "Invested")
        .withArgs(2n, bob.address, USDC(100), TOKENS(50), 0n);
      expect(await escrow.invested(1, bob.address)).to.equal(0n);
      expect(await escrow.invested(2, bob.address)).to.equal(USDC(100));

      await escrow.claim(1, alice.address);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(400));
      expect(await escrow.status(1)).to.equal(Status.COMPLETED);
      expect(await escrow.status(2)).to.equal(Status.ACTIVE);
    });

    it("the reservation protects the offering from tokenizer mints exhausting the cap", async function () {
      const { escrow, token, tokenizer, alice, bob, carol } = await loadFixture(activeFixture);
      // cap 1500, 1000 reserved: only 500 left for the tokenizer.
      await expect(token.connect(tokenizer).mint(carol.address, TOKENS(501)))
        .to.be.revertedWithCustomError(token, "SupplyCapExceeded")
        .withArgs(TOKENS(1500), TOKENS(1501));
      await token.connect(tokenizer).mint(carol.address, TOKENS(500));
      await escrow.connect(alice).invest(USDC(6000));
      await escrow.connect(bob).invest(USDC(4000));
      await escrow.close();
      await escrow.claim(1, alice.address);
      await escrow.claim(1, bob.address);
      expect(await token.totalSupply()).to.equal(TOKENS(1500));
      expect(await token.reservedSupply()).to.equal(0n);
    });
  });

  describe("reentrancy", function () {
    async function hostileFixture() {
      const base = await deployFactoryFixture();
      const { factory, tokenizer, alice } = base;
      const hostile = await ethers.deployContract("ReentrantERC20");
      const { token, escrow } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await hostile.getAddress(), { initialHolders: [alice.address], preMints: [0n] }),
      );
      await hostile.mint(alice.address, USDC(10_000));
      await hostile.connect(alice).approve(escrow.target, ethers.MaxUint256);
      const startTime = (await time.latest()) + 10;
      await newOffering(escrow, tokenizer, { ...DEFAULT, startTime, endTime: startTime + WEEK });
      await time.increaseTo(startTime);
      return { ...base, hostile, token, escrow };
    }

    it("invest and claim cannot be re-entered through the payment token", async function () {
      const { escrow, hostile, tokenizer, alice } = await loadFixture(hostileFixture);
      await hostile.arm(escrow.target, escrow.interface.encodeFunctionData("invest", [USDC(100)]));
      await expect(escrow.connect(alice).invest(USDC(100))).to.be.revertedWithCustomError(
        escrow,
        "ReentrancyGuardReentrantCall",
      );
      await hostile.arm(ethers.ZeroAddress, "0x");
      await escrow.connect(alice).invest(USDC(100));
      await escrow.connect(tokenizer).close(); // failed: refund due
      await hostile.arm(escrow.target, escrow.interface.encodeFunctionData("claim", [1n, alice.address]));
      await expect(escrow.claim(1, alice.address)).to.be.revertedWithCustomError(
        escrow,
        "ReentrancyGuardReentrantCall",
      );
    });

    it("withdrawProceeds cannot be re-entered through the payment token", async function () {
      const { escrow, hostile, tokenizer, alice } = await loadFixture(hostileFixture);
      await escrow.connect(alice).invest(USDC(4000)); // soft cap reached
      await escrow.connect(tokenizer).close();
      await hostile.arm(escrow.target, escrow.interface.encodeFunctionData("withdrawProceeds", [1n]));
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.be.revertedWithCustomError(
        escrow,
        "ReentrancyGuardReentrantCall",
      );
      await hostile.arm(ethers.ZeroAddress, "0x");
      await expect(escrow.connect(tokenizer).withdrawProceeds(1)).to.changeTokenBalance(hostile, tokenizer, USDC(4000));
    });
  });
});
