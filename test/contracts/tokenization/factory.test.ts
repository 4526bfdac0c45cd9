import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import {
  TOKENS,
  createTokenization,
  deployFactoryFixture,
  deployRawClone,
  tokenizationParams,
} from "./helpers";

describe("TokenFactory", function () {
  describe("constructor", function () {
    it("stores both implementations", async function () {
      const { factory, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      expect(await factory.tokenImplementation()).to.equal(tokenImpl.target);
      expect(await factory.escrowImplementation()).to.equal(escrowImpl.target);
    });

    it("rejects a zero implementation", async function () {
      const { factory, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const Factory = await ethers.getContractFactory("TokenFactory");
      await expect(Factory.deploy(ethers.ZeroAddress, escrowImpl.target)).to.be.revertedWithCustomError(
        factory,
        "ZeroAddress",
      );
      await expect(Factory.deploy(tokenImpl.target, ethers.ZeroAddress)).to.be.revertedWithCustomError(
        factory,
        "ZeroAddress",
      );
    });
  });

  describe("newTokenization", function () {
    it("creates a token and an escrow wired together, the caller being the tokenizer", async function () {
      const { factory, tokenizer, usdc, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(1_000_000), decimals: 8 });
      const [predictedToken, predictedEscrow] = await factory.connect(tokenizer).newTokenization.staticCall(params);

      await expect(factory.connect(tokenizer).newTokenization(params))
        .to.emit(factory, "TokenCreated")
        .withArgs(predictedToken, tokenizer.address, predictedEscrow, "HOB");

      const token = await ethers.getContractAt("SecurityToken", predictedToken);
      const escrow = await ethers.getContractAt("StoEscrow", predictedEscrow);
      expect(await token.name()).to.equal("Harbour Office Building");
      expect(await token.symbol()).to.equal("HOB");
      expect(await token.decimals()).to.equal(8);
      expect(await token.supplyCap()).to.equal(TOKENS(1_000_000));
      expect(await token.paymentToken()).to.equal(usdc.target);
      expect(await token.tokenizer()).to.equal(tokenizer.address);
      expect(await token.escrow()).to.equal(predictedEscrow);
      expect(await token.totalSupply()).to.equal(0n);
      expect(await token.reservedSupply()).to.equal(0n);
      expect(await token.totalDividendsDistributed()).to.equal(0n);
      expect(await escrow.token()).to.equal(predictedToken);
      expect(await escrow.currentOfferingId()).to.equal(0n);

      // Both are EIP-1167 minimal proxies of the implementations.
      const proxyCode = (impl: unknown) =>
        "0x363d3d373d3d3d363d73" + String(impl).slice(2).toLowerCase() + "5af43d82803e903d91602b57fd5bf3";
      expect(await ethers.provider.getCode(predictedToken)).to.equal(proxyCode(tokenImpl.target));
      expect(await ethers.provider.getCode(predictedEscrow)).to.equal(proxyCode(escrowImpl.target));
    });

    it("lets anyone create a tokenization; every call gets fresh clones", async function () {
      const { factory, tokenizer, outsider, usdc } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress());
      const first = await createTokenization(factory, tokenizer, params);
      const second = await createTokenization(factory, outsider, params);
      expect(second.token.target).to.not.equal(first.token.target);
      expect(second.escrow.target).to.not.equal(first.escrow.target);
      expect(await second.token.tokenizer()).to.equal(outsider.address);
      expect(await first.token.tokenizer()).to.equal(tokenizer.address);
    });

    it("costs at most 350,000 gas without premints", async function () {
      const { factory, tokenizer, usdc } = await loadFixture(deployFactoryFixture);
      const { receipt } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(1_000_000) }),
      );
      expect(receipt.gasUsed).to.be.lte(350_000n);
    });

    it("premints whitelist every initial holder and mint its amount (zero only whitelists)", async function () {
      const { factory, tokenizer, alice, bob, carol, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        supplyCap: TOKENS(1500),
        initialHolders: [alice.address, bob.address, carol.address],
        preMints: [TOKENS(1000), TOKENS(500), 0n],
      });
      const [tokenAddress] = await factory.connect(tokenizer).newTokenization.staticCall(params);
      const tx = factory.connect(tokenizer).newTokenization(params);
      await expect(tx).to.emit(tokenImpl.attach(tokenAddress), "WhitelistUpdated").withArgs(alice.address, true);
      await expect(tx).to.emit(tokenImpl.attach(tokenAddress), "WhitelistUpdated").withArgs(carol.address, true);
      await expect(tx)
        .to.emit(tokenImpl.attach(tokenAddress), "Transfer")
        .withArgs(ethers.ZeroAddress, bob.address, TOKENS(500));

      const token = await ethers.getContractAt("SecurityToken", tokenAddress);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(500));
      expect(await token.balanceOf(carol.address)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(TOKENS(1500)); // exactly the cap is allowed
      for (const holder of [alice, bob, carol]) expect(await token.isWhitelisted(holder.address)).to.equal(true);
    });

    it("rejects premint arrays of different lengths", async function () {
      const { factory, tokenizer, alice, bob, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        initialHolders: [alice.address, bob.address],
        preMints: [TOKENS(1)],
      });
      await expect(factory.connect(tokenizer).newTokenization(params))
        .to.be.revertedWithCustomError(tokenImpl, "LengthMismatch")
        .withArgs(2, 1);
    });

    it("rejects premints above the supply cap", async function () {
      const { factory, tokenizer, alice, bob, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        supplyCap: TOKENS(1000),
        initialHolders: [alice.address, bob.address],
        preMints: [TOKENS(600), TOKENS(500)],
      });
      await expect(factory.connect(tokenizer).newTokenization(params))
        .to.be.revertedWithCustomError(tokenImpl, "SupplyCapExceeded")
        .withArgs(TOKENS(1000), TOKENS(1100));
    });

    it("rejects a zero payment token", async function () {
      const { factory, tokenizer, tokenImpl } = await loadFixture(deployFactoryFixture);
      await expect(
        factory.connect(tokenizer).newTokenization(tokenizationParams(ethers.ZeroAddress)),
      ).to.be.revertedWithCustomError(tokenImpl, "ZeroAddress");
    });

    it("rejects a zero initial holder", async function () {
      const { factory, tokenizer, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        initialHolders: [ethers.ZeroAddress],
        preMints: [0n],
      });
      await expect(factory.connect(tokenizer).newTokenization(params)).to.be.revertedWithCustomError(
        tokenImpl,
        "ZeroAddress",
      );
    });

    it("rejects more than 18 decimals and accepts 0 and 18", async function () {
      const { factory, tokenizer, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const paymentToken = await usdc.getAddress();
      await expect(factory.connect(tokenizer).newTokenization(tokenizationParams(paymentToken, { decimals: 19 })))
        .to.be.revertedWithCustomError(tokenImpl, "InvalidDecimals")
        .withArgs(19);
      for (const decimals of [0, 18]) {
        const { token } = await createTokenization(factory, tokenizer, tokenizationParams(paymentToken, { decimals }));
        expect(await token.decimals()).to.equal(decimals);
      }
    });
  });

  describe("initialization guards", function () {
    it("the implementations are locked", async function () {
      const { tokenizer, usdc, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const config = { name: "X", symbol: "X", decimals: 18, supplyCap: 0n, paymentToken: usdc.target };
      await expect(
        tokenImpl.initialize(config, tokenizer.address, tokenizer.address, [], []),
      ).to.be.revertedWithCustomError(tokenImpl, "AlreadyInitialized");
      await expect(escrowImpl.initialize(tokenImpl.target)).to.be.revertedWithCustomError(
        escrowImpl,
        "AlreadyInitialized",
      );
      expect(await tokenImpl.tokenizer()).to.equal(ethers.ZeroAddress);
      expect(await escrowImpl.token()).to.equal(ethers.ZeroAddress);
    });

    it("a clone cannot be initialized twice", async function () {
      const { factory, tokenizer, outsider, usdc } = await loadFixture(deployFactoryFixture);
      const { token, escrow } = await createTokenization(factory, tokenizer, tokenizationParams(await usdc.getAddress()));
      const config = { name: "X", symbol: "X", decimals: 18, supplyCap: 0n, paymentToken: usdc.target };
      await expect(
        token.connect(outsider).initialize(config, outsider.address, outsider.address, [], []),
      ).to.be.revertedWithCustomError(token, "AlreadyInitialized");
      await expect(escrow.connect(outsider).initialize(outsider.address)).to.be.revertedWithCustomError(
        escrow,
        "AlreadyInitialized",
      );
      expect(await token.tokenizer()).to.equal(tokenizer.address);
      expect(await escrow.token()).to.equal(token.target);
    });

    it("a bare token clone rejects a zero tokenizer or escrow, then initializes once", async function () {
      const { deployer, tokenizer, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const token = tokenImpl.attach(await deployRawClone(deployer, await tokenImpl.getAddress())) as typeof tokenImpl;
      const config = { name: "Raw", symbol: "RAW", decimals: 6, supplyCap: 0n, paymentToken: usdc.target };
      await expect(
        token.initialize(config, ethers.ZeroAddress, tokenizer.address, [], []),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      await expect(
        token.initialize(config, tokenizer.address, ethers.ZeroAddress, [], []),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      await token.initialize(config, tokenizer.address, tokenizer.address, [], []);
      expect(await token.symbol()).to.equal("RAW");
      await expect(
        token.initialize(config, tokenizer.address, tokenizer.address, [], []),
      ).to.be.revertedWithCustomError(token, "AlreadyInitialized");
    });

    it("a bare escrow clone rejects a zero token, then initializes once", async function () {
      const { deployer, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const escrow = escrowImpl.attach(
        await deployRawClone(deployer, await escrowImpl.getAddress()),
      ) as typeof escrowImpl;
      await expect(escrow.initialize(ethers.ZeroAddress)).to.be.revertedWithCustomError(escrow, "ZeroAddress");
      await escrow.initialize(tokenImpl.target);
      expect(await escrow.token()).to.equal(tokenImpl.target);
      await expect(escrow.initialize(tokenImpl.target)).to.be.revertedWithCustomError(escrow, "AlreadyInitialized");
    });
  });
});
