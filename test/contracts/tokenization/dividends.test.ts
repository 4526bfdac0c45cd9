import { anyValue } from "@nomicfoundation/hardhat-chai-matchers/withArgs";
import { expect } from "chai";
import { ethers } from "hardhat";
import fc from "fast-check";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { MAGNITUDE, ROLE, TOKENS, USDC, createTokenization, deployFactoryFixture, tokenFixture, tokenizationParams } from "./helpers";

/** The share paid by the magnified-dividend pattern: floored, so at most 1 unit below the exact share, never above. */
function expectShare(actual: bigint, exact: bigint): void {
  expect(actual).to.be.lte(exact);
  expect(actual).to.be.gte(exact - 1n);
}

/** tokenFixture (alice 1000, bob 500, carol 0) with 1M USDC minted to the tokenizer and approved to the token. */
async function dividendFixture() {
  const base = await tokenFixture();
  const { usdc, token, tokenizer } = base;
  await usdc.mint(tokenizer.address, USDC(1_000_000));
  await usdc.connect(tokenizer).approve(token.target, ethers.MaxUint256);
  return base;
}

describe("SecurityToken dividends", function () {
  describe("distributeDividends", function () {
    it("pulls the payment token and raises the dividend per share", async function () {
      const { token, usdc, tokenizer } = await loadFixture(dividendFixture);
      const amount = USDC(300);
      const pps = (amount * MAGNITUDE) / TOKENS(1500);
      const tx = token.connect(tokenizer).distributeDividends(amount);
      await expect(tx).to.emit(token, "DividendsDistributed").withArgs(tokenizer.address, amount, pps);
      await expect(tx).to.changeTokenBalances(usdc, [tokenizer, token], [-amount, amount]);
      expect(await token.totalDividendsDistributed()).to.equal(amount);
    });

    it("is the tokenizer's only (no role opens it), rejects 0 and an empty supply", async function () {
      const { token, tokenizer, alice, factory, usdc } = await loadFixture(dividendFixture);
      await expect(token.connect(alice).distributeDividends(1n))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.ADMIN);
      await expect(token.connect(tokenizer).distributeDividends(0n)).to.be.revertedWithCustomError(
        token,
        "ZeroAmount",
      );
      const { token: empty } = await createTokenization(factory, tokenizer, tokenizationParams(await usdc.getAddress()));
      await usdc.connect(tokenizer).approve(empty.target, USDC(1));
      await expect(empty.connect(tokenizer).distributeDividends(USDC(1))).to.be.revertedWithCustomError(
        empty,
        "NoSupply",
      );
    });

    it("reverts with the payment token's error when the token was not approved", async function () {
      const { token, usdc, tokenizer } = await loadFixture(dividendFixture);
      await usdc.connect(tokenizer).approve(token.target, 0n);
      await expect(token.connect(tokenizer).distributeDividends(USDC(1)))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientAllowance")
        .withArgs(token.target, 0n, USDC(1));
      expect(await token.totalDividendsDistributed()).to.equal(0n);
    });
    it("a payment token that is not a contract is refused at creation (InvalidPaymentToken), before any dividend", async function () {
      const { factory, tokenizer, alice, outsider, tokenImpl } = await loadFixture(deployFactoryFixture);
      await expect(
        factory
          .connect(tokenizer)
          .newTokenization(
            tokenizationParams(outsider.address, { initialHolders: [alice.address], preMints: [TOKENS(1)] }),
          ),
      )
        .to.be.revertedWithCustomError(tokenImpl, "InvalidPaymentToken")
        .withArgs(outsider.address);
    });
  });

  describe("a payment token that takes a fee on transfer", function () {
    it("distributes what arrived, never what was asked (DividendsDistributed and the total say so); the token stays solvent", async function () {
      const { factory, tokenizer, alice, bob } = await loadFixture(deployFactoryFixture);
      const fot = await ethers.deployContract("FeeOnTransferERC20", [100]); // 1 %
      const { token } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await fot.getAddress(), {
          initialHolders: [alice.address, bob.address],
          preMints: [TOKENS(3), TOKENS(1)],
        }),
      );
      await fot.mint(tokenizer.address, USDC(1000));
      await fot.connect(tokenizer).approve(token.target, USDC(1000));
      const arrived = USDC(1000) - USDC(10);
      await expect(token.connect(tokenizer).distributeDividends(USDC(1000)))
        .to.emit(token, "DividendsDistributed")
        .withArgs(tokenizer.address, arrived, anyValue);
      expect(await token.totalDividendsDistributed()).to.equal(arrived);
      const owed = (await token.withdrawableDividendOf(alice.address)) + (await token.withdrawableDividendOf(bob.address));
      expect(owed <= (await fot.balanceOf(token.target))).to.equal(true);
    });

    it("refuses a distribution of which nothing arrives (ZeroAmount)", async function () {
      const { factory, tokenizer, alice } = await loadFixture(deployFactoryFixture);
      const fot = await ethers.deployContract("FeeOnTransferERC20", [10_000]); // takes it all
      const { token } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await fot.getAddress(), { initialHolders: [alice.address], preMints: [TOKENS(1)] }),
      );
      await fot.mint(tokenizer.address, USDC(10));
      await fot.connect(tokenizer).approve(token.target, USDC(10));
      await expect(token.connect(tokenizer).distributeDividends(USDC(10))).to.be.revertedWithCustomError(
        token,
        "ZeroAmount",
      );
    });
  });

  describe("accounting", function () {
    it("splits pro rata between holders of different balances; claims pay out once", async function () {
      const { token, usdc, tokenizer, alice, bob, carol } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300));
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(200));
      expectShare(await token.withdrawableDividendOf(bob.address), USDC(100));
      expect(await token.withdrawableDividendOf(carol.address)).to.equal(0n);

      const owed = await token.withdrawableDividendOf(alice.address);
      expect(await token.connect(alice).claimDividends.staticCall()).to.equal(owed);
      const claim = token.connect(alice).claimDividends();
      await expect(claim).to.emit(token, "DividendClaimed").withArgs(alice.address, owed);
      await expect(claim).to.changeTokenBalances(usdc, [token, alice], [-owed, owed]);
      expect(await token.withdrawnDividendOf(alice.address)).to.equal(owed);
      expect(await token.withdrawableDividendOf(alice.address)).to.equal(0n);
      expect(await token.accumulativeDividendOf(alice.address)).to.equal(owed);

      await expect(token.connect(alice).claimDividends())
        .to.be.revertedWithCustomError(token, "NothingToClaim")
        .withArgs(alice.address);
      await expect(token.connect(carol).claimDividends())
        .to.be.revertedWithCustomError(token, "NothingToClaim")
        .withArgs(carol.address);

      // A later distribution is claimable on top of what was withdrawn.
      await token.connect(tokenizer).distributeDividends(USDC(150));
      expectShare(await token.withdrawableDividendOf(alice.address), USDC(100));
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(300));
      expectShare(await token.withdrawableDividendOf(bob.address), USDC(150));
      await expect(token.connect(bob).claimDividends())
        .to.emit(token, "DividendClaimed")
        .withArgs(bob.address, await token.withdrawableDividendOf(bob.address));
    });

    it("a transfer leaves past dividends with the sender; the receiver earns only afterwards", async function () {
      const { token, tokenizer, alice, bob, carol } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300)); // alice 200, bob 100
      await token.connect(alice).transfer(carol.address, TOKENS(500)); // alice 500, bob 500, carol 500
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(200));
      expect(await token.accumulativeDividendOf(carol.address)).to.equal(0n);
      await token.connect(tokenizer).distributeDividends(USDC(300)); // 100 each
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(300));
      expectShare(await token.accumulativeDividendOf(bob.address), USDC(200));
      expectShare(await token.accumulativeDividendOf(carol.address), USDC(100));

      // transferFrom follows the same rule.
      await token.connect(bob).approve(alice.address, TOKENS(500));
      await token.connect(alice).transferFrom(bob.address, carol.address, TOKENS(500)); // alice 500, carol 1000
      await token.connect(tokenizer).distributeDividends(USDC(150)); // alice 50, carol 100
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(350));
      expectShare(await token.accumulativeDividendOf(bob.address), USDC(200));
      expectShare(await token.accumulativeDividendOf(carol.address), USDC(200));
    });

    it("mint and burn between distributions", async function () {
      const { token, tokenizer, alice, bob, carol } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300)); // alice 200, bob 100
      await token.connect(tokenizer).mint(carol.address, TOKENS(1500)); // supply 3000
      expect(await token.accumulativeDividendOf(carol.address)).to.equal(0n);
      await token.connect(bob).burn(TOKENS(500)); // bob leaves; supply 2500
      expectShare(await token.accumulativeDividendOf(bob.address), USDC(100));
      await token.connect(tokenizer).distributeDividends(USDC(250)); // alice 100, carol 150
      expectShare(await token.accumulativeDividendOf(alice.address), USDC(300));
      expectShare(await token.accumulativeDividendOf(bob.address), USDC(100));
      expectShare(await token.accumulativeDividendOf(carol.address), USDC(150));
      await expect(token.connect(bob).claimDividends())
        .to.emit(token, "DividendClaimed")
        .withArgs(bob.address, await token.withdrawableDividendOf(bob.address));
    });

    it("a holder removed from the whitelist (not frozen) may still claim what it earned", async function () {
      const { token, tokenizer, bob } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300));
      await token.connect(tokenizer).setWhitelisted(bob.address, false);
      await expect(token.connect(bob).claimDividends())
        .to.emit(token, "DividendClaimed")
        .withArgs(bob.address, await token.withdrawableDividendOf(bob.address));
    });

    // Issue 48, "frozen does not stop cash": before, an address-frozen holder, and anyone on a paused token, withdrew
    // its dividends. Now the claim is refused and the entitlement held, then paid in full after the unfreeze / unpause.
    it("an address-frozen holder cannot claim (DividendsHeld); after the unfreeze it claims the same amount", async function () {
      const { token, usdc, tokenizer, alice, bob } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300));
      const owed = await token.withdrawableDividendOf(alice.address);
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await expect(token.connect(alice).claimDividends()).to.be.revertedWithCustomError(token, "DividendsHeld").withArgs(alice.address);
      // Held, not forfeited: the entitlement keeps growing with later distributions while frozen.
      expect(await token.withdrawableDividendOf(alice.address)).to.equal(owed);
      await token.connect(tokenizer).distributeDividends(USDC(150));
      const owedLater = await token.withdrawableDividendOf(alice.address);
      expectShare(owedLater, USDC(300));
      // A partial (amount) freeze does not hold dividends, and other holders claim as usual.
      await token.connect(tokenizer).setFrozenTokens(bob.address, TOKENS(500));
      await token.connect(bob).claimDividends();
      await token.connect(tokenizer).setAddressFrozen(alice.address, false);
      const claim = token.connect(alice).claimDividends();
      await expect(claim).to.emit(token, "DividendClaimed").withArgs(alice.address, owedLater);
      await expect(claim).to.changeTokenBalances(usdc, [token, alice], [-owedLater, owedLater]);
    });

    it("a frozen holder with nothing to claim is answered DividendsHeld first", async function () {
      const { token, tokenizer, carol } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).setAddressFrozen(carol.address, true);
      await expect(token.connect(carol).claimDividends()).to.be.revertedWithCustomError(token, "DividendsHeld").withArgs(carol.address);
    });

    it("nobody claims while the token is paused; after the unpause each claims the same amount", async function () {
      const { token, usdc, tokenizer, alice, bob } = await loadFixture(dividendFixture);
      await token.connect(tokenizer).distributeDividends(USDC(300));
      const owed = [await token.withdrawableDividendOf(alice.address), await token.withdrawableDividendOf(bob.address)];
      await token.connect(tokenizer).pause();
      for (const holder of [alice, bob]) {
        await expect(token.connect(holder).claimDividends()).to.be.revertedWithCustomError(token, "EnforcedPause");
      }
      // Distributions go on while paused.
      await token.connect(tokenizer).distributeDividends(USDC(3));
      const owedLater = [await token.withdrawableDividendOf(alice.address), await token.withdrawableDividendOf(bob.address)];
      expectShare(owedLater[0] - owed[0], USDC(2));
      await token.connect(tokenizer).unpause();
      await expect(token.connect(alice).claimDividends()).to.changeTokenBalance(usdc, alice, owedLater[0]);
      await expect(token.connect(bob).claimDividends()).to.changeTokenBalance(usdc, bob, owedLater[1]);
    });

    it("carries the rounding remainder into the next distribution", async function () {
      const { factory, tokenizer, alice, bob, carol, usdc } = await loadFixture(deployFactoryFixture);
      const { token } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), {
          decimals: 0,
          initialHolders: [alice.address, bob.address, carol.address],
          preMints: [1n, 1n, 1n],
        }),
      );
      await usdc.mint(tokenizer.address, 3n);
      await usdc.connect(tokenizer).approve(token.target, 3n);
      // 1 unit over 3 holders, three times: each distribution alone rounds to 0 per holder, the carry makes it exact.
      for (let i = 0; i < 3; i++) await token.connect(tokenizer).distributeDividends(1n);
      for (const holder of [alice, bob, carol]) {
        expect(await token.accumulativeDividendOf(holder.address)).to.equal(1n);
      }
      for (const holder of [alice, bob, carol]) await token.connect(holder).claimDividends();
      expect(await usdc.balanceOf(token.target)).to.equal(0n);
    });

    it("claimDividends is guarded against reentrancy through the payment token", async function () {
      const { factory, tokenizer, alice } = await loadFixture(deployFactoryFixture);
      const hostile = await ethers.deployContract("ReentrantERC20");
      const { token } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await hostile.getAddress(), { initialHolders: [alice.address], preMints: [TOKENS(1)] }),
      );
      await hostile.mint(tokenizer.address, 1000n);
      await hostile.connect(tokenizer).approve(token.target, 1000n);
      await token.connect(tokenizer).distributeDividends(1000n);
      await hostile.arm(token.target, token.interface.encodeFunctionData("claimDividends"));
      await expect(token.connect(alice).claimDividends()).to.be.revertedWithCustomError(
        token,
        "ReentrancyGuardReentrantCall",
      );
      await hostile.mint(tokenizer.address, 1n);
      await hostile.connect(tokenizer).approve(token.target, 1n);
      await hostile.arm(token.target, token.interface.encodeFunctionData("distributeDividends", [1n]));
      await expect(token.connect(tokenizer).distributeDividends(1n)).to.be.revertedWithCustomError(
        token,
        "ReentrancyGuardReentrantCall",
      );
    });
  });

  describe("property: random mints, transfers, burns, distributions and claims", function () {
    type Command =
      | { kind: "mint"; to: number; amount: bigint }
      | { kind: "transfer"; from: number; to: number; permille: number }
      | { kind: "burn"; from: number; permille: number }
      | { kind: "distribute"; amount: bigint }
      | { kind: "claim"; holder: number };

    const holderIndex = fc.nat({ max: 4 });
    const command: fc.Arbitrary<Command> = fc.oneof(
      fc.record({ kind: fc.constant("mint" as const), to: holderIndex, amount: fc.bigInt({ min: 1n, max: 10n ** 6n }) }),
      fc.record({
        kind: fc.constant("transfer" as const),
        from: holderIndex,
        to: holderIndex,
        permille: fc.integer({ min: 0, max: 1000 }),
      }),
      fc.record({ kind: fc.constant("burn" as const), from: holderIndex, permille: fc.integer({ min: 1, max: 1000 }) }),
      fc.record({ kind: fc.constant("distribute" as const), amount: fc.bigInt({ min: 1n, max: 10n ** 9n }) }),
      fc.record({ kind: fc.constant("claim" as const), holder: holderIndex }),
    );

    /** Exact rational, to model each holder's pro-rata share without rounding. */
    class Fraction {
      constructor(
        readonly num: bigint,
        readonly den: bigint,
      ) {}
      add(num: bigint, den: bigint): Fraction {
        const n = this.num * den + num * this.den;
        const d = this.den * den;
        const g = gcd(n, d);
        return new Fraction(n / g, d / g);
      }
      floor(): bigint {
        return this.num / this.den;
      }
      ceil(): bigint {
        return (this.num + this.den - 1n) / this.den;
      }
    }
    const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));

    /** Five whitelisted accounts with small raw balances (decimals 0) so that rounding matters. */
    async function propertyFixture() {
      const base = await deployFactoryFixture();
      const { factory, tokenizer, usdc } = base;
      const signers = (await ethers.getSigners()).slice(10, 15);
      const { token } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), {
          decimals: 0,
          initialHolders: signers.map((s) => s.address),
          preMints: [100n, 37n, 1n, 0n, 0n],
        }),
      );
      await usdc.mint(tokenizer.address, 10n ** 15n);
      await usdc.connect(tokenizer).approve(token.target, ethers.MaxUint256);
      return { ...base, token, signers };
    }

    it("never owes more than was distributed, stays funded and keeps the dust tiny", async function () {
      this.timeout(600_000);
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 3, max: 5 }),
          fc.array(command, { minLength: 1, maxLength: 20 }),
          async (holderCount, commands) => {
            const { token, usdc, tokenizer, signers } = await loadFixture(propertyFixture);
            const holders = signers.slice(0, holderCount);
            const pick = (i: number) => holders[i % holderCount];
            const expected = holders.map(() => new Fraction(0n, 1n));
            let distributed = 0n;
            let distributions = 0n;

            for (const cmd of commands) {
              switch (cmd.kind) {
                case "mint":
                  await token.connect(tokenizer).mint(pick(cmd.to).address, cmd.amount);
                  break;
                case "transfer": {
                  const from = pick(cmd.from);
                  const amount = ((await token.balanceOf(from.address)) * BigInt(cmd.permille)) / 1000n;
                  await token.connect(from).transfer(pick(cmd.to).address, amount);
                  break;
                }
                case "burn": {
                  const from = pick(cmd.from);
                  const amount = ((await token.balanceOf(from.address)) * BigInt(cmd.permille)) / 1000n;
                  if (amount === 0n) {
                    await expect(token.connect(from).burn(0n)).to.be.revertedWithCustomError(token, "ZeroAmount");
                  } else {
                    await token.connect(from).burn(amount);
                  }
                  break;
                }
                case "distribute": {
                  const supply = await token.totalSupply();
                  if (supply === 0n) {
                    await expect(token.connect(tokenizer).distributeDividends(cmd.amount)).to.be.revertedWithCustomError(
                      token,
                      "NoSupply",
                    );
                    break;
                  }
                  for (let i = 0; i < holderCount; i++) {
                    const balance = await token.balanceOf(holders[i].address);
                    expected[i] = expected[i].add(cmd.amount * balance, supply);
                  }
                  await token.connect(tokenizer).distributeDividends(cmd.amount);
                  distributed += cmd.amount;
                  distributions += 1n;
                  break;
                }
                case "claim": {
                  const holder = pick(cmd.holder);
                  const withdrawable = await token.withdrawableDividendOf(holder.address);
                  if (withdrawable === 0n) {
                    await expect(token.connect(holder).claimDividends()).to.be.revertedWithCustomError(
                      token,
                      "NothingToClaim",
                    );
                  } else {
                    await expect(token.connect(holder).claimDividends()).to.changeTokenBalance(
                      usdc,
                      holder,
                      withdrawable,
                    );
                  }
                  break;
                }
              }

              // Invariants after every step.
              let sumWithdrawable = 0n;
              let sumWithdrawn = 0n;
              let sumAccumulative = 0n;
              for (let i = 0; i < holderCount; i++) {
                const address = holders[i].address;
                const accumulative = await token.accumulativeDividendOf(address);
                const withdrawn = await token.withdrawnDividendOf(address);
                const withdrawable = await token.withdrawableDividendOf(address);
                expect(withdrawable).to.equal(accumulative - withdrawn);
                // Each holder gets its exact pro-rata share of every distribution, within one unit of rounding.
                expect(accumulative).to.be.gte(expected[i].ceil() - 1n);
                expect(accumulative).to.be.lte(expected[i].floor() + 1n);
                sumWithdrawable += withdrawable;
                sumWithdrawn += withdrawn;
                sumAccumulative += accumulative;
              }
              expect(await token.totalDividendsDistributed()).to.equal(distributed);
              expect(sumWithdrawable + sumWithdrawn).to.be.lte(distributed);
              expect(await usdc.balanceOf(token.target)).to.be.gte(sumWithdrawable);
              const dust = distributed - sumAccumulative;
              expect(dust).to.be.gte(0n);
              if (distributed > 0n) expect(dust).to.be.lt(BigInt(holderCount) + distributions);
            }
          },
        ),
        { numRuns: 100 },
      );
    });
  });
});
