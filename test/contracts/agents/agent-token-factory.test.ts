import { expect } from "chai";
import hre from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractTransactionReceipt } from "ethers";
import type { AgentToken, AgentTokenFactory } from "../../../typechain-types";

const { ethers } = hre;
const PREMINT = 1_000_000n * 10n ** 18n;

async function factoryFixture() {
  const [deployer, agent, relayer, other] = await ethers.getSigners();
  const implementation = await ethers.deployContract("AgentToken");
  const factory = await ethers.deployContract("AgentTokenFactory", [implementation.target]);
  return { deployer, agent, relayer, other, implementation, factory };
}

/** Calls the factory as the default signer unless `factory` is already connected; returns the token from the event. */
async function create(
  factory: AgentTokenFactory,
  name: string,
  symbol: string,
  decimals: number,
  wallet: string,
  premint: bigint,
): Promise<{ token: AgentToken; receipt: ContractTransactionReceipt }> {
  const receipt = await (await factory.createAgentToken(name, symbol, decimals, wallet, premint)).wait();
  if (!receipt) throw new Error("no receipt");
  for (const log of receipt.logs) {
    const parsed = factory.interface.parseLog(log);
    if (parsed?.name === "AgentTokenCreated") {
      return { token: await ethers.getContractAt("AgentToken", parsed.args.token as string), receipt };
    }
  }
  throw new Error("AgentTokenCreated not emitted");
}

describe("AgentTokenFactory", function () {
  describe("constructor", function () {
    it("stores the implementation", async function () {
      const { factory, implementation } = await loadFixture(factoryFixture);
      expect(await factory.implementation()).to.equal(implementation.target);
    });

    it("rejects a zero implementation", async function () {
      const { factory } = await loadFixture(factoryFixture);
      await expect(ethers.deployContract("AgentTokenFactory", [ethers.ZeroAddress])).to.be.revertedWithCustomError(
        factory,
        "ZeroAddress",
      );
    });
  });

  describe("createAgentToken", function () {
    it("makes the agent wallet the owner even when a relayer sends the call", async function () {
      const { factory, agent, relayer } = await loadFixture(factoryFixture);
      const { token, receipt } = await create(factory.connect(relayer), "Relayed Agent", "RLY", 18, agent.address, 0n);
      expect(await token.owner()).to.equal(agent.address);
      expect(receipt.from).to.equal(relayer.address);
      await expect(token.connect(relayer).mint(relayer.address, 1n))
        .to.be.revertedWithCustomError(token, "OwnableUnauthorizedAccount")
        .withArgs(relayer.address);
    });

    it("emits AgentTokenCreated with every argument", async function () {
      const { factory, agent, relayer } = await loadFixture(factoryFixture);
      const predicted = await factory.connect(relayer).createAgentToken.staticCall("Agent", "AG1", 6, agent.address, 42n);
      await expect(factory.connect(relayer).createAgentToken("Agent", "AG1", 6, agent.address, 42n))
        .to.emit(factory, "AgentTokenCreated")
        .withArgs(predicted, agent.address, relayer.address, "Agent", "AG1", 6, 42n);
      const token = await ethers.getContractAt("AgentToken", predicted);
      expect(await token.name()).to.equal("Agent");
      expect(await token.symbol()).to.equal("AG1");
      expect(await token.decimals()).to.equal(6n);
    });

    it("premints to the agent wallet; the receipt holds a Transfer from 0 emitted by the new token", async function () {
      const { factory, agent, relayer } = await loadFixture(factoryFixture);
      const { token, receipt } = await create(factory.connect(relayer), "Agent", "AGT", 18, agent.address, PREMINT);
      expect(await token.balanceOf(agent.address)).to.equal(PREMINT);
      expect(await token.balanceOf(relayer.address)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(PREMINT);

      const transfers = receipt.logs
        .map((log) => ({ log, parsed: token.interface.parseLog(log) }))
        .filter(({ parsed }) => parsed?.name === "Transfer");
      expect(transfers).to.have.length(1);
      const [{ log, parsed }] = transfers;
      expect(log.address).to.equal(token.target);
      expect(parsed!.args.from).to.equal(ethers.ZeroAddress);
      expect(parsed!.args.to).to.equal(agent.address);
      expect(parsed!.args.value).to.equal(PREMINT);
      await expect(receipt.hash).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, agent.address, PREMINT);
    });

    it("emits a zero-value creation Transfer(0, agentWallet, 0) when the premint is 0", async function () {
      const { factory, agent } = await loadFixture(factoryFixture);
      const { token, receipt } = await create(factory, "Agent", "AGT", 18, agent.address, 0n);
      await expect(receipt.hash).to.emit(token, "Transfer").withArgs(ethers.ZeroAddress, agent.address, 0n);
      await expect(receipt.hash)
        .to.emit(token, "OwnershipTransferred")
        .withArgs(ethers.ZeroAddress, agent.address);
      const transfers = receipt.logs.filter((log) => token.interface.parseLog(log)?.name === "Transfer");
      expect(transfers).to.have.length(1);
      expect(await token.totalSupply()).to.equal(0n);
      expect(await token.balanceOf(agent.address)).to.equal(0n);
    });

    for (const premint of [0n, PREMINT]) {
      it(`the first zero-address Transfer log of the creation receipt is emitted by the new token (premint ${premint === 0n ? "0" : "> 0"})`, async function () {
        const { factory, agent, relayer } = await loadFixture(factoryFixture);
        const returned = await factory.connect(relayer).createAgentToken.staticCall("Agent", "AGT", 18, agent.address, premint);
        const { token, receipt } = await create(factory.connect(relayer), "Agent", "AGT", 18, agent.address, premint);
        expect(token.target).to.equal(returned);
        // What a client does without the factory's ABI: the ERC-20 Transfer topic with `from` = address(0).
        const transferTopic = ethers.id("Transfer(address,address,uint256)");
        const zeroTopic = ethers.zeroPadValue(ethers.ZeroAddress, 32);
        const first = receipt.logs.find((log) => log.topics[0] === transferTopic && log.topics[1] === zeroTopic);
        expect(first, "no zero-address Transfer log").to.not.equal(undefined);
        expect(first!.address).to.equal(returned);
        expect(first!.topics[2]).to.equal(ethers.zeroPadValue(agent.address, 32));
        expect(BigInt(first!.data)).to.equal(premint);
      });
    }

    it("creates a new, independent clone on every call, even with the same arguments", async function () {
      const { factory, agent, other } = await loadFixture(factoryFixture);
      const { token: a } = await create(factory, "Same", "SAME", 18, agent.address, 10n);
      const { token: b } = await create(factory, "Same", "SAME", 18, agent.address, 10n);
      expect(a.target).to.not.equal(b.target);
      await a.connect(agent).transfer(other.address, 3n);
      expect(await a.balanceOf(agent.address)).to.equal(7n);
      expect(await b.balanceOf(agent.address)).to.equal(10n);
    });

    it("produces clones that cannot be initialized again", async function () {
      const { factory, agent, other } = await loadFixture(factoryFixture);
      const { token } = await create(factory, "Agent", "AGT", 18, agent.address, 0n);
      await expect(
        token.connect(other).initialize("Evil", "EVIL", 18, other.address, 1n),
      ).to.be.revertedWithCustomError(token, "AlreadyInitialized");
    });

    it("bubbles up the token's ZeroAddress and InvalidDecimals errors", async function () {
      const { factory, implementation, agent } = await loadFixture(factoryFixture);
      await expect(
        factory.createAgentToken("Agent", "AGT", 18, ethers.ZeroAddress, 0n),
      ).to.be.revertedWithCustomError(implementation, "ZeroAddress");
      await expect(factory.createAgentToken("Agent", "AGT", 19, agent.address, 0n))
        .to.be.revertedWithCustomError(implementation, "InvalidDecimals")
        .withArgs(19);
    });

    it("rejects an empty name", async function () {
      const { factory, agent } = await loadFixture(factoryFixture);
      await expect(factory.createAgentToken("", "AGT", 18, agent.address, 0n)).to.be.revertedWithCustomError(
        factory,
        "EmptyName",
      );
    });
  });

  describe("symbol validation", function () {
    const invalid: [string, string][] = [
      ["empty", ""],
      ["lower case", "agt"],
      ["mixed case", "AgT"],
      ["too short (1)", "A"],
      ["too long (12)", "ABCDEFGHIJKL"],
      ["a space", "AG T"],
      ["a dash", "AG-T"],
      ["an underscore", "AG_T"],
      ["a dollar sign", "$AGT"],
      ["'@' (just below A)", "AG@"],
      ["'[' (just above Z)", "AG["],
      ["'/' (just below 0)", "AG/"],
      ["':' (just above 9)", "AG:"],
      ["a non-ASCII letter", "ÄGT"],
      ["a NUL byte", "AG\u0000"],
    ];
    for (const [label, symbol] of invalid) {
      it(`rejects ${label}`, async function () {
        const { factory, agent } = await loadFixture(factoryFixture);
        await expect(factory.createAgentToken("Agent", symbol, 18, agent.address, 0n))
          .to.be.revertedWithCustomError(factory, "InvalidSymbol")
          .withArgs(symbol);
      });
    }

    for (const symbol of ["AB", "09", "A1", "ABCDEFGHIJK", "Z0Y1X2W3V4U"]) {
      it(`accepts ${symbol} (${symbol.length} chars)`, async function () {
        const { factory, agent } = await loadFixture(factoryFixture);
        const { token } = await create(factory, "Agent", symbol, 18, agent.address, 0n);
        expect(await token.symbol()).to.equal(symbol);
      });
    }
  });

  describe("gas", function () {
    it("reports createAgentToken gas with and without premint", async function () {
      const { factory, agent } = await loadFixture(factoryFixture);
      // The factory keeps no state, so call order does not affect the figures; name/symbol match for a fair comparison.
      const { receipt: without } = await create(factory, "Agent Token", "AGT", 18, agent.address, 0n);
      const { receipt: withPremint } = await create(factory, "Agent Token", "AGT", 18, agent.address, PREMINT);
      console.log(`      createAgentToken gas: premint 0 = ${without.gasUsed}, premint > 0 = ${withPremint.gasUsed}`);
      expect(withPremint.gasUsed).to.be.gt(without.gasUsed);
    });
  });
});
