import { expect } from "chai";
import hre from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { USDT } from "../../../typechain-types";

const { ethers } = hre;
const ONE_USDT = 10n ** 6n;

describe("USDT", () => {
  async function deployFixture() {
    const [owner, alice, bob] = await ethers.getSigners();
    const usdt: USDT = await ethers.deployContract("USDT");
    return { usdt, owner, alice, bob };
  }

  it("has the Tether USD metadata, 6 decimals, no supply and the deployer as owner", async () => {
    const { usdt, owner } = await loadFixture(deployFixture);
    expect(await usdt.name()).to.equal("Tether USD");
    expect(await usdt.symbol()).to.equal("USDT");
    expect(await usdt.decimals()).to.equal(6n);
    expect(await usdt.totalSupply()).to.equal(0n);
    expect(await usdt.owner()).to.equal(owner.address);
  });

  describe("mint", () => {
    it("lets the owner mint, and the minted tokens transfer normally", async () => {
      const { usdt, alice, bob } = await loadFixture(deployFixture);
      const amount = 500n * ONE_USDT;
      const tx = usdt.mint(alice.address, amount);
      await expect(tx).to.emit(usdt, "Transfer").withArgs(ethers.ZeroAddress, alice.address, amount);
      await expect(tx).to.changeTokenBalance(usdt, alice, amount);
      expect(await usdt.totalSupply()).to.equal(amount);

      await expect(usdt.connect(alice).transfer(bob.address, ONE_USDT)).to.changeTokenBalances(
        usdt,
        [alice, bob],
        [-ONE_USDT, ONE_USDT],
      );
    });

    it("refuses a non-owner", async () => {
      const { usdt, alice } = await loadFixture(deployFixture);
      await expect(usdt.connect(alice).mint(alice.address, 1n))
        .to.be.revertedWithCustomError(usdt, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("refuses the zero address", async () => {
      const { usdt } = await loadFixture(deployFixture);
      await expect(usdt.mint(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(usdt, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });

    it("follows an ownership transfer", async () => {
      const { usdt, owner, alice } = await loadFixture(deployFixture);
      await expect(usdt.transferOwnership(alice.address))
        .to.emit(usdt, "OwnershipTransferred")
        .withArgs(owner.address, alice.address);
      await expect(usdt.connect(alice).mint(alice.address, ONE_USDT)).to.changeTokenBalance(usdt, alice, ONE_USDT);
      await expect(usdt.mint(owner.address, 1n))
        .to.be.revertedWithCustomError(usdt, "OwnableUnauthorizedAccount")
        .withArgs(owner.address);
    });
  });
});
