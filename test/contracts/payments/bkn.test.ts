import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { BKN } from "../../../typechain-types";

const { ethers } = hre;
const FAUCET_AMOUNT = ethers.parseEther("100");
const FAUCET_COOLDOWN = 24n * 60n * 60n;

describe("BKN", () => {
  async function deployFixture() {
    const [owner, alice, bob, relayer] = await ethers.getSigners();
    const bkn: BKN = await ethers.deployContract("BKN");
    return { bkn, owner, alice, bob, relayer };
  }

  /** Claims for `recipient` in a block mined at an exact timestamp, so event args can be asserted exactly. */
  async function claimAt(bkn: BKN, recipient: string, timestamp: bigint) {
    await time.setNextBlockTimestamp(timestamp);
    return bkn.faucet(recipient);
  }

  describe("deployment", () => {
    it("has the Brickken metadata, 18 decimals, the faucet constants and the deployer as owner", async () => {
      const { bkn, owner } = await loadFixture(deployFixture);
      expect(await bkn.name()).to.equal("Brickken");
      expect(await bkn.symbol()).to.equal("BKN");
      expect(await bkn.decimals()).to.equal(18n);
      expect(await bkn.totalSupply()).to.equal(0n);
      expect(await bkn.owner()).to.equal(owner.address);
      expect(await bkn.FAUCET_AMOUNT()).to.equal(FAUCET_AMOUNT);
      expect(await bkn.FAUCET_COOLDOWN()).to.equal(FAUCET_COOLDOWN);
    });
  });

  describe("mint", () => {
    it("lets the owner mint", async () => {
      const { bkn, alice } = await loadFixture(deployFixture);
      const amount = ethers.parseEther("1000");
      const tx = bkn.mint(alice.address, amount);
      await expect(tx).to.emit(bkn, "Transfer").withArgs(ethers.ZeroAddress, alice.address, amount);
      await expect(tx).to.changeTokenBalance(bkn, alice, amount);
    });

    it("refuses a non-owner", async () => {
      const { bkn, alice } = await loadFixture(deployFixture);
      await expect(bkn.connect(alice).mint(alice.address, 1n))
        .to.be.revertedWithCustomError(bkn, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("refuses the zero address", async () => {
      const { bkn } = await loadFixture(deployFixture);
      await expect(bkn.mint(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(bkn, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });
  });

  describe("faucet", () => {
    it("mints FAUCET_AMOUNT to the recipient on a relayer's call and starts the cooldown", async () => {
      const { bkn, alice, relayer } = await loadFixture(deployFixture);
      expect(await bkn.faucetAvailableAt(alice.address)).to.equal(0n);
      expect(await bkn.connect(relayer).faucet.staticCall(alice.address)).to.equal(FAUCET_AMOUNT);

      const t = BigInt(await time.latest()) + 10n;
      await time.setNextBlockTimestamp(t);
      const tx = bkn.connect(relayer).faucet(alice.address);
      await expect(tx).to.changeTokenBalances(bkn, [alice, relayer], [FAUCET_AMOUNT, 0n]);
      await expect(tx)
        .to.emit(bkn, "FaucetClaimed")
        .withArgs(alice.address, FAUCET_AMOUNT, t + FAUCET_COOLDOWN)
        .and.to.emit(bkn, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, FAUCET_AMOUNT);
      expect(await bkn.faucetAvailableAt(alice.address)).to.equal(t + FAUCET_COOLDOWN);
      expect(await bkn.totalSupply()).to.equal(FAUCET_AMOUNT);
    });

    it("refuses a second claim during the cooldown with the exact availableAt, whoever calls", async () => {
      const { bkn, alice } = await loadFixture(deployFixture);
      const t = BigInt(await time.latest()) + 10n;
      await claimAt(bkn, alice.address, t);

      await time.setNextBlockTimestamp(t + 1n);
      await expect(bkn.faucet(alice.address))
        .to.be.revertedWithCustomError(bkn, "FaucetCooldown")
        .withArgs(alice.address, t + FAUCET_COOLDOWN);

      await time.setNextBlockTimestamp(t + FAUCET_COOLDOWN - 1n);
      await expect(bkn.connect(alice).faucet(alice.address))
        .to.be.revertedWithCustomError(bkn, "FaucetCooldown")
        .withArgs(alice.address, t + FAUCET_COOLDOWN);
      expect(await bkn.balanceOf(alice.address)).to.equal(FAUCET_AMOUNT);
    });

    it("allows a new claim once 24 hours have passed since the last one", async () => {
      const { bkn, alice } = await loadFixture(deployFixture);
      const t = BigInt(await time.latest()) + 10n;
      await claimAt(bkn, alice.address, t);

      const next = t + FAUCET_COOLDOWN;
      await expect(claimAt(bkn, alice.address, next))
        .to.emit(bkn, "FaucetClaimed")
        .withArgs(alice.address, FAUCET_AMOUNT, next + FAUCET_COOLDOWN);
      expect(await bkn.balanceOf(alice.address)).to.equal(2n * FAUCET_AMOUNT);
      expect(await bkn.faucetAvailableAt(alice.address)).to.equal(next + FAUCET_COOLDOWN);
    });

    it("keeps independent cooldowns per recipient", async () => {
      const { bkn, alice, bob } = await loadFixture(deployFixture);
      const t = BigInt(await time.latest()) + 10n;
      await claimAt(bkn, alice.address, t);
      await expect(claimAt(bkn, bob.address, t + 3600n))
        .to.emit(bkn, "FaucetClaimed")
        .withArgs(bob.address, FAUCET_AMOUNT, t + 3600n + FAUCET_COOLDOWN);

      expect(await bkn.faucetAvailableAt(alice.address)).to.equal(t + FAUCET_COOLDOWN);
      expect(await bkn.faucetAvailableAt(bob.address)).to.equal(t + 3600n + FAUCET_COOLDOWN);

      // Alice's cooldown ends first; Bob is still cooling down at that moment.
      await claimAt(bkn, alice.address, t + FAUCET_COOLDOWN);
      await time.setNextBlockTimestamp(t + FAUCET_COOLDOWN + 1n);
      await expect(bkn.faucet(bob.address))
        .to.be.revertedWithCustomError(bkn, "FaucetCooldown")
        .withArgs(bob.address, t + 3600n + FAUCET_COOLDOWN);
      expect(await bkn.balanceOf(alice.address)).to.equal(2n * FAUCET_AMOUNT);
      expect(await bkn.balanceOf(bob.address)).to.equal(FAUCET_AMOUNT);
    });

    it("refuses the zero address", async () => {
      const { bkn } = await loadFixture(deployFixture);
      await expect(bkn.faucet(ethers.ZeroAddress)).to.be.revertedWithCustomError(bkn, "ZeroAddress");
    });
  });
});
