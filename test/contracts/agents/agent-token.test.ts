import { expect } from "chai";
import hre from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { AgentToken, AgentTokenFactory } from "../../../typechain-types";

const { ethers } = hre;
const UNITS = (n: number | bigint, decimals = 18n) => BigInt(n) * 10n ** decimals;

/** Implementation, factory and one clone ("Agent Alpha" / AGA, 18 decimals) owned by `agent` with 1000 preminted. */
async function agentTokenFixture() {
  const [deployer, agent, alice, bob, stranger] = await ethers.getSigners();
  const implementation = await ethers.deployContract("AgentToken");
  const factory = await ethers.deployContract("AgentTokenFactory", [implementation.target]);
  const token = await createToken(factory, "Agent Alpha", "AGA", 18, agent.address, UNITS(1000));
  return { deployer, agent, alice, bob, stranger, implementation, factory, token };
}

async function createToken(
  factory: AgentTokenFactory,
  name: string,
  symbol: string,
  decimals: number,
  wallet: string,
  premint: bigint,
): Promise<AgentToken> {
  const address = await factory.createAgentToken.staticCall(name, symbol, decimals, wallet, premint);
  await (await factory.createAgentToken(name, symbol, decimals, wallet, premint)).wait();
  return ethers.getContractAt("AgentToken", address);
}

describe("AgentToken", function () {
  describe("implementation", function () {
    it("is locked and owned by address(1)", async function () {
      const { implementation, agent } = await loadFixture(agentTokenFixture);
      await expect(
        implementation.initialize("X", "XX", 18, agent.address, 0n),
      ).to.be.revertedWithCustomError(implementation, "AlreadyInitialized");
      expect(await implementation.owner()).to.equal("0x0000000000000000000000000000000000000001");
      expect(await implementation.name()).to.equal("");
      expect(await implementation.symbol()).to.equal("");
      expect(await implementation.decimals()).to.equal(0n);
      await expect(implementation.connect(agent).mint(agent.address, 1n))
        .to.be.revertedWithCustomError(implementation, "OwnableUnauthorizedAccount")
        .withArgs(agent.address);
    });
  });

  describe("initialize", function () {
    it("sets metadata, owner and premint on a clone", async function () {
      const { token, agent } = await loadFixture(agentTokenFixture);
      expect(await token.name()).to.equal("Agent Alpha");
      expect(await token.symbol()).to.equal("AGA");
      expect(await token.decimals()).to.equal(18n);
      expect(await token.owner()).to.equal(agent.address);
      expect(await token.balanceOf(agent.address)).to.equal(UNITS(1000));
      expect(await token.totalSupply()).to.equal(UNITS(1000));
    });

    it("emits OwnershipTransferred then the creation Transfer(0, owner, premint), also for a zero premint", async function () {
      const { factory, agent } = await loadFixture(agentTokenFixture);
      for (const premint of [0n, UNITS(3)]) {
        const address = await factory.createAgentToken.staticCall("Agent", "AGT", 18, agent.address, premint);
        const receipt = await (await factory.createAgentToken("Agent", "AGT", 18, agent.address, premint)).wait();
        const token = await ethers.getContractAt("AgentToken", address);
        const tokenEvents = receipt!.logs
          .filter((log) => log.address === address)
          .map((log) => token.interface.parseLog(log)!);
        expect(tokenEvents.map((e) => e.name)).to.deep.equal(["OwnershipTransferred", "Transfer"]);
        expect([...tokenEvents[1].args]).to.deep.equal([ethers.ZeroAddress, agent.address, premint]);
        expect(await token.totalSupply()).to.equal(premint);
      }
    });

    it("cannot be called again on a clone", async function () {
      const { token, stranger } = await loadFixture(agentTokenFixture);
      await expect(
        token.connect(stranger).initialize("Evil", "EVL", 18, stranger.address, UNITS(1)),
      ).to.be.revertedWithCustomError(token, "AlreadyInitialized");
      await expect(token.connect(stranger).mint(stranger.address, 1n))
        .to.be.revertedWithCustomError(token, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("cannot be called again after the owner renounced ownership", async function () {
      const { token, agent, stranger } = await loadFixture(agentTokenFixture);
      await token.connect(agent).renounceOwnership();
      expect(await token.owner()).to.equal(ethers.ZeroAddress);
      await expect(
        token.connect(stranger).initialize("Evil", "EVL", 18, stranger.address, 0n),
      ).to.be.revertedWithCustomError(token, "AlreadyInitialized");
    });

    it("rejects a zero owner and more than 18 decimals (via the factory)", async function () {
      const { factory, token, agent } = await loadFixture(agentTokenFixture);
      await expect(
        factory.createAgentToken("Agent", "AG", 18, ethers.ZeroAddress, 0n),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      await expect(factory.createAgentToken("Agent", "AG", 19, agent.address, 0n))
        .to.be.revertedWithCustomError(token, "InvalidDecimals")
        .withArgs(19);
      await expect(factory.createAgentToken("Agent", "AG", 255, agent.address, 0n))
        .to.be.revertedWithCustomError(token, "InvalidDecimals")
        .withArgs(255);
    });

    it("accepts 0 and 18 decimals", async function () {
      const { factory, agent } = await loadFixture(agentTokenFixture);
      const zero = await createToken(factory, "Zero", "ZERO", 0, agent.address, 5n);
      const max = await createToken(factory, "Max", "MAX", 18, agent.address, 0n);
      expect(await zero.decimals()).to.equal(0n);
      expect(await zero.balanceOf(agent.address)).to.equal(5n);
      expect(await max.decimals()).to.equal(18n);
      expect(await max.totalSupply()).to.equal(0n);
    });
  });

  describe("mint", function () {
    it("lets the owner mint to anyone", async function () {
      const { token, agent, alice } = await loadFixture(agentTokenFixture);
      const tx = token.connect(agent).mint(alice.address, UNITS(5));
      await expect(tx).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, alice.address, UNITS(5));
      await expect(tx).to.changeTokenBalance(token, alice, UNITS(5));
      expect(await token.totalSupply()).to.equal(UNITS(1005));
    });

    it("rejects a stranger and the zero receiver", async function () {
      const { token, agent, stranger } = await loadFixture(agentTokenFixture);
      await expect(token.connect(stranger).mint(stranger.address, 1n))
        .to.be.revertedWithCustomError(token, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
      await expect(token.connect(agent).mint(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });
  });

  describe("burn", function () {
    it("burns the caller's own balance, for any holder", async function () {
      const { token, agent, alice } = await loadFixture(agentTokenFixture);
      await token.connect(agent).transfer(alice.address, UNITS(10));
      const tx = token.connect(alice).burn(UNITS(4));
      await expect(tx).to.emit(token, "Transfer").withArgs(alice.address, ethers.ZeroAddress, UNITS(4));
      await expect(tx).to.changeTokenBalance(token, alice, -UNITS(4));
      await token.connect(agent).burn(UNITS(990));
      expect(await token.balanceOf(agent.address)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(UNITS(6));
    });

    it("rejects burning more than the balance", async function () {
      const { token, stranger } = await loadFixture(agentTokenFixture);
      await expect(token.connect(stranger).burn(1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(stranger.address, 0n, 1n);
    });
  });

  describe("ERC-20", function () {
    it("transfers, approves and transfers from", async function () {
      const { token, agent, alice, bob } = await loadFixture(agentTokenFixture);
      await expect(token.connect(agent).transfer(alice.address, UNITS(100)))
        .to.emit(token, "Transfer")
        .withArgs(agent.address, alice.address, UNITS(100));
      await expect(token.connect(alice).approve(bob.address, UNITS(30)))
        .to.emit(token, "Approval")
        .withArgs(alice.address, bob.address, UNITS(30));
      await expect(token.connect(bob).transferFrom(alice.address, bob.address, UNITS(20))).to.changeTokenBalances(
        token,
        [alice, bob],
        [-UNITS(20), UNITS(20)],
      );
      expect(await token.allowance(alice.address, bob.address)).to.equal(UNITS(10));
      await expect(token.connect(bob).transferFrom(alice.address, bob.address, UNITS(11)))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientAllowance")
        .withArgs(bob.address, UNITS(10), UNITS(11));
    });
  });

  describe("ownership", function () {
    it("transfers to a new owner, who alone can mint", async function () {
      const { token, agent, alice } = await loadFixture(agentTokenFixture);
      await expect(token.connect(agent).transferOwnership(alice.address))
        .to.emit(token, "OwnershipTransferred")
        .withArgs(agent.address, alice.address);
      expect(await token.owner()).to.equal(alice.address);
      await expect(token.connect(agent).mint(agent.address, 1n))
        .to.be.revertedWithCustomError(token, "OwnableUnauthorizedAccount")
        .withArgs(agent.address);
      await expect(token.connect(alice).mint(alice.address, 1n)).to.changeTokenBalance(token, alice, 1n);
    });

    it("rejects transfers by a stranger and to the zero address", async function () {
      const { token, agent, stranger } = await loadFixture(agentTokenFixture);
      await expect(token.connect(stranger).transferOwnership(stranger.address))
        .to.be.revertedWithCustomError(token, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
      await expect(token.connect(agent).transferOwnership(ethers.ZeroAddress))
        .to.be.revertedWithCustomError(token, "OwnableInvalidOwner")
        .withArgs(ethers.ZeroAddress);
    });
  });

  describe("clones", function () {
    it("are independent: own metadata, owner, balances and supply", async function () {
      const { factory, token, agent, alice } = await loadFixture(agentTokenFixture);
      const other = await createToken(factory, "Agent Beta", "AGB2", 6, alice.address, UNITS(7, 6n));
      expect(other.target).to.not.equal(token.target);
      expect(await other.name()).to.equal("Agent Beta");
      expect(await other.symbol()).to.equal("AGB2");
      expect(await other.decimals()).to.equal(6n);
      expect(await other.owner()).to.equal(alice.address);
      expect(await other.balanceOf(agent.address)).to.equal(0n);
      expect(await other.totalSupply()).to.equal(UNITS(7, 6n));

      await token.connect(agent).mint(agent.address, UNITS(1));
      await other.connect(alice).burn(UNITS(2, 6n));
      expect(await token.totalSupply()).to.equal(UNITS(1001));
      expect(await other.totalSupply()).to.equal(UNITS(5, 6n));
      expect(await token.name()).to.equal("Agent Alpha");
      expect(await token.decimals()).to.equal(18n);
      await expect(other.connect(agent).mint(agent.address, 1n))
        .to.be.revertedWithCustomError(other, "OwnableUnauthorizedAccount")
        .withArgs(agent.address);
    });
  });
});
