import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import {
  INVESTOR,
  TOKENS,
  createTokenization,
  deployFactoryFixture,
  deployRawProxy,
  investorIdOf,
  tokenizationParams,
} from "./helpers";

/** ERC-1967's implementation slot: bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1). */
const IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
const implementationOf = async (proxy: string) =>
  ethers.getAddress(ethers.dataSlice(await ethers.provider.getStorage(proxy, IMPLEMENTATION_SLOT), 12));

describe("TokenFactory", function () {
  describe("constructor", function () {
    it("stores and publishes both implementations, and its owner", async function () {
      const { factory, deployer, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      expect(await factory.tokenImplementation()).to.equal(tokenImpl.target);
      expect(await factory.escrowImplementation()).to.equal(escrowImpl.target);
      expect(await factory.isPublished(tokenImpl.target)).to.equal(true);
      expect(await factory.isPublished(escrowImpl.target)).to.equal(true);
      expect(await factory.isPublished(deployer.address)).to.equal(false);
      expect(await factory.owner()).to.equal(deployer.address);
      await expect(factory.deploymentTransaction())
        .to.emit(factory, "ImplementationsPublished")
        .withArgs(tokenImpl.target, escrowImpl.target);
    });

    it("rejects an implementation that is not a contract (zero or a wallet) and a zero owner", async function () {
      const { factory, deployer, outsider, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const Factory = await ethers.getContractFactory("TokenFactory");
      await expect(Factory.deploy(ethers.ZeroAddress, escrowImpl.target, deployer.address))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(ethers.ZeroAddress);
      await expect(Factory.deploy(tokenImpl.target, outsider.address, deployer.address))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(outsider.address);
      await expect(Factory.deploy(tokenImpl.target, escrowImpl.target, ethers.ZeroAddress))
        .to.be.revertedWithCustomError(factory, "OwnableInvalidOwner")
        .withArgs(ethers.ZeroAddress);
    });
  });

  describe("newTokenization", function () {
    it("creates a token and an escrow behind ERC-1967 proxies, wired together, the caller being the tokenizer", async function () {
      const { factory, tokenizer, usdc, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(1_000_000), decimals: 8 });
      const [predictedToken, predictedEscrow] = await factory.connect(tokenizer).newTokenization.staticCall(params);

      const tx = factory.connect(tokenizer).newTokenization(params);
      await expect(tx).to.emit(factory, "TokenCreated").withArgs(predictedToken, tokenizer.address, predictedEscrow, "HOB");
      // Both proxies are initialized in their creation transaction: nobody can initialize them first.
      const tokenAt = await ethers.getContractAt("SecurityToken", predictedToken);
      const escrowAt = await ethers.getContractAt("StoEscrow", predictedEscrow);
      await expect(tx).to.emit(tokenAt, "Initialized").withArgs(1n);
      await expect(tx).to.emit(escrowAt, "Initialized").withArgs(1n);

      const token = await ethers.getContractAt("SecurityToken", predictedToken);
      const escrow = await ethers.getContractAt("StoEscrow", predictedEscrow);
      expect(await token.name()).to.equal("Harbour Office Building");
      expect(await token.symbol()).to.equal("HOB");
      expect(await token.decimals()).to.equal(8);
      expect(await token.supplyCap()).to.equal(TOKENS(1_000_000));
      expect(await token.paymentToken()).to.equal(usdc.target);
      expect(await token.tokenizer()).to.equal(tokenizer.address);
      expect(await token.defaultAdmin()).to.equal(tokenizer.address);
      expect(await token.defaultAdminDelay()).to.equal(0n);
      expect(await token.escrow()).to.equal(predictedEscrow);
      expect(await token.totalSupply()).to.equal(0n);
      expect(await token.reservedSupply()).to.equal(0n);
      expect(await token.totalDividendsDistributed()).to.equal(0n);
      expect(await token.recoveryDelay()).to.equal(2n * 24n * 3600n);
      expect(await token.paused()).to.equal(false);
      expect(await escrow.token()).to.equal(predictedToken);
      expect(await escrow.currentOfferingId()).to.equal(0n);

      // Both are ERC-1967 proxies of the published implementations, upgradeable only to what the factory publishes.
      expect(await implementationOf(predictedToken)).to.equal(tokenImpl.target);
      expect(await implementationOf(predictedEscrow)).to.equal(escrowImpl.target);
      expect(await token.implementation()).to.equal(tokenImpl.target);
      expect(await escrow.implementation()).to.equal(escrowImpl.target);
      expect(await token.implementationRegistry()).to.equal(factory.target);
      expect(await escrow.implementationRegistry()).to.equal(factory.target);
      expect(await token.scheduledUpgrade()).to.deep.equal([ethers.ZeroAddress, 0n]);
    });

    it("lets anyone create a tokenization; every call gets fresh proxies", async function () {
      const { factory, tokenizer, outsider, usdc } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress());
      const first = await createTokenization(factory, tokenizer, params);
      const second = await createTokenization(factory, outsider, params);
      expect(second.token.target).to.not.equal(first.token.target);
      expect(second.escrow.target).to.not.equal(first.escrow.target);
      expect(await second.token.tokenizer()).to.equal(outsider.address);
      expect(await first.token.tokenizer()).to.equal(tokenizer.address);
    });

    it("costs at most 550,000 gas without premints (ERC-1967 proxies: 503k measured)", async function () {
      const { factory, tokenizer, usdc } = await loadFixture(deployFactoryFixture);
      const { receipt } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(1_000_000) }),
      );
      expect(receipt.gasUsed).to.be.lte(550_000n);
    });

    it("whitelists every initial holder, binds it to its investor and mints its premint (zero only whitelists)", async function () {
      const { factory, tokenizer, alice, bob, carol, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        supplyCap: TOKENS(1500),
        initialHolders: [alice.address, bob.address, carol.address],
        initialInvestorIds: [INVESTOR("alice"), INVESTOR("alice"), ethers.ZeroHash],
        preMints: [TOKENS(1000), TOKENS(500), 0n],
      });
      const [tokenAddress] = await factory.connect(tokenizer).newTokenization.staticCall(params);
      const tx = factory.connect(tokenizer).newTokenization(params);
      const at = tokenImpl.attach(tokenAddress);
      await expect(tx).to.emit(at, "WhitelistUpdated").withArgs(alice.address, true);
      await expect(tx).to.emit(at, "WhitelistUpdated").withArgs(carol.address, true);
      await expect(tx).to.emit(at, "InvestorBound").withArgs(bob.address, INVESTOR("alice"), factory.target);
      await expect(tx).to.emit(at, "Transfer").withArgs(ethers.ZeroAddress, bob.address, TOKENS(500));

      const token = await ethers.getContractAt("SecurityToken", tokenAddress);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(500));
      expect(await token.balanceOf(carol.address)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(TOKENS(1500)); // exactly the cap is allowed
      for (const holder of [alice, bob, carol]) expect(await token.isWhitelisted(holder.address)).to.equal(true);
      expect(await token.investorOf(alice.address)).to.equal(INVESTOR("alice"));
      expect(await token.investorOf(bob.address)).to.equal(INVESTOR("alice"));
      expect(await token.investorOf(carol.address)).to.equal(ethers.ZeroHash);
    });

    it("rejects premint and investor-id arrays of another length than the holders", async function () {
      const { factory, tokenizer, alice, bob, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const holders = [alice.address, bob.address];
      await expect(
        factory
          .connect(tokenizer)
          .newTokenization(tokenizationParams(await usdc.getAddress(), { initialHolders: holders, preMints: [TOKENS(1)] })),
      )
        .to.be.revertedWithCustomError(tokenImpl, "LengthMismatch")
        .withArgs(2, 1);
      await expect(
        factory
          .connect(tokenizer)
          .newTokenization(
            tokenizationParams(await usdc.getAddress(), { initialHolders: holders, initialInvestorIds: [INVESTOR("a")] }),
          ),
      )
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

    it("rejects one holder listed twice for two investors once it holds tokens (WalletInUse)", async function () {
      const { factory, tokenizer, alice, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), {
        initialHolders: [alice.address, alice.address],
        initialInvestorIds: [INVESTOR("a"), INVESTOR("b")],
        preMints: [TOKENS(1), 0n],
      });
      await expect(factory.connect(tokenizer).newTokenization(params))
        .to.be.revertedWithCustomError(tokenImpl, "WalletInUse")
        .withArgs(alice.address, INVESTOR("a"));
    });

    it("rejects a zero payment token", async function () {
      const { factory, tokenizer, tokenImpl } = await loadFixture(deployFactoryFixture);
      await expect(
        factory.connect(tokenizer).newTokenization(tokenizationParams(ethers.ZeroAddress)),
      ).to.be.revertedWithCustomError(tokenImpl, "ZeroAddress");
    });

    it("rejects a zero initial holder", async function () {
      const { factory, tokenizer, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const params = tokenizationParams(await usdc.getAddress(), { initialHolders: [ethers.ZeroAddress] });
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

  describe("published implementations (owner only)", function () {
    it("the owner publishes a new version: new tokenizations use it, the old one stays published", async function () {
      const { factory, deployer, tokenizer, usdc, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const tokenV2 = await ethers.deployContract("SecurityTokenV2Mock");
      const escrowV2 = await ethers.deployContract("StoEscrowV2Mock");
      await expect(factory.connect(deployer).publishImplementations(tokenV2.target, escrowV2.target))
        .to.emit(factory, "ImplementationsPublished")
        .withArgs(tokenV2.target, escrowV2.target);
      expect(await factory.tokenImplementation()).to.equal(tokenV2.target);
      expect(await factory.escrowImplementation()).to.equal(escrowV2.target);
      for (const impl of [tokenImpl, escrowImpl, tokenV2, escrowV2]) expect(await factory.isPublished(impl.target)).to.equal(true);
      const { token, escrow } = await createTokenization(factory, tokenizer, tokenizationParams(await usdc.getAddress()));
      expect(await token.implementation()).to.equal(tokenV2.target);
      expect(await (await ethers.getContractAt("SecurityTokenV2Mock", token.target)).version()).to.equal("2");
      expect(await escrow.implementation()).to.equal(escrowV2.target);
    });

    it("publishing is the owner's only and needs contracts", async function () {
      const { factory, deployer, tokenizer, outsider, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      await expect(factory.connect(tokenizer).publishImplementations(tokenImpl.target, escrowImpl.target))
        .to.be.revertedWithCustomError(factory, "OwnableUnauthorizedAccount")
        .withArgs(tokenizer.address);
      await expect(factory.connect(deployer).publishImplementations(outsider.address, escrowImpl.target))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(outsider.address);
      await expect(factory.connect(deployer).publishImplementations(tokenImpl.target, ethers.ZeroAddress))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(ethers.ZeroAddress);
    });

    it("the owner withdraws an implementation that is no longer current; never a current one", async function () {
      const { factory, deployer, tokenizer, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      await expect(factory.connect(deployer).withdrawImplementation(tokenImpl.target))
        .to.be.revertedWithCustomError(factory, "ImplementationInUse")
        .withArgs(tokenImpl.target);
      await expect(factory.connect(deployer).withdrawImplementation(escrowImpl.target))
        .to.be.revertedWithCustomError(factory, "ImplementationInUse")
        .withArgs(escrowImpl.target);
      const tokenV2 = await ethers.deployContract("SecurityTokenV2Mock");
      await factory.connect(deployer).publishImplementations(tokenV2.target, escrowImpl.target);
      await expect(factory.connect(tokenizer).withdrawImplementation(tokenImpl.target))
        .to.be.revertedWithCustomError(factory, "OwnableUnauthorizedAccount")
        .withArgs(tokenizer.address);
      await expect(factory.connect(deployer).withdrawImplementation(tokenImpl.target))
        .to.emit(factory, "ImplementationWithdrawn")
        .withArgs(tokenImpl.target);
      expect(await factory.isPublished(tokenImpl.target)).to.equal(false);
      // Never published, or withdrawn already.
      await expect(factory.connect(deployer).withdrawImplementation(tokenImpl.target))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(tokenImpl.target);
      await expect(factory.connect(deployer).withdrawImplementation(tokenizer.address))
        .to.be.revertedWithCustomError(factory, "InvalidImplementation")
        .withArgs(tokenizer.address);
    });

    it("ownership moves in two steps (Ownable2Step); the old owner then publishes nothing", async function () {
      const { factory, deployer, tokenizer, outsider, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      await expect(factory.connect(outsider).transferOwnership(outsider.address))
        .to.be.revertedWithCustomError(factory, "OwnableUnauthorizedAccount")
        .withArgs(outsider.address);
      await expect(factory.connect(deployer).transferOwnership(outsider.address))
        .to.emit(factory, "OwnershipTransferStarted")
        .withArgs(deployer.address, outsider.address);
      expect(await factory.owner()).to.equal(deployer.address);
      expect(await factory.pendingOwner()).to.equal(outsider.address);
      await expect(factory.connect(tokenizer).acceptOwnership())
        .to.be.revertedWithCustomError(factory, "OwnableUnauthorizedAccount")
        .withArgs(tokenizer.address);
      await expect(factory.connect(outsider).acceptOwnership())
        .to.emit(factory, "OwnershipTransferred")
        .withArgs(deployer.address, outsider.address);
      await expect(factory.connect(deployer).publishImplementations(tokenImpl.target, escrowImpl.target))
        .to.be.revertedWithCustomError(factory, "OwnableUnauthorizedAccount")
        .withArgs(deployer.address);
      await factory.connect(outsider).publishImplementations(tokenImpl.target, escrowImpl.target);
    });
  });

  describe("initialization guards", function () {
    it("the implementations are locked", async function () {
      const { tokenizer, usdc, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const config = { name: "X", symbol: "X", decimals: 18, supplyCap: 0n, paymentToken: usdc.target };
      await expect(
        tokenImpl.initialize(config, tokenizer.address, tokenizer.address, [], [], []),
      ).to.be.revertedWithCustomError(tokenImpl, "InvalidInitialization");
      await expect(escrowImpl.initialize()).to.be.revertedWithCustomError(escrowImpl, "InvalidInitialization");
      expect(await tokenImpl.tokenizer()).to.equal(ethers.ZeroAddress);
      expect(await escrowImpl.token()).to.equal(ethers.ZeroAddress);
      expect(await tokenImpl.implementationRegistry()).to.equal(ethers.ZeroAddress);
    });

    it("a proxy cannot be initialized twice, and its escrow is bound to its token by the factory only", async function () {
      const { factory, tokenizer, outsider, usdc } = await loadFixture(deployFactoryFixture);
      const { token, escrow } = await createTokenization(factory, tokenizer, tokenizationParams(await usdc.getAddress()));
      const config = { name: "X", symbol: "X", decimals: 18, supplyCap: 0n, paymentToken: usdc.target };
      await expect(
        token.connect(outsider).initialize(config, outsider.address, outsider.address, [], [], []),
      ).to.be.revertedWithCustomError(token, "InvalidInitialization");
      await expect(escrow.connect(outsider).initialize()).to.be.revertedWithCustomError(escrow, "InvalidInitialization");
      await expect(escrow.connect(outsider).bindToken(outsider.address))
        .to.be.revertedWithCustomError(escrow, "NotFactory")
        .withArgs(outsider.address);
      expect(await token.tokenizer()).to.equal(tokenizer.address);
      expect(await escrow.token()).to.equal(token.target);
    });

    it("a bare token proxy rejects zero addresses, bad decimals and lengths, then initializes once", async function () {
      const { deployer, tokenizer, alice, usdc, tokenImpl } = await loadFixture(deployFactoryFixture);
      const token = tokenImpl.attach(await deployRawProxy(tokenImpl.target)) as typeof tokenImpl;
      const config = { name: "Raw", symbol: "RAW", decimals: 6, supplyCap: 0n, paymentToken: usdc.target };
      const init = (c: typeof config, t: string, e: string, holders: string[] = [], ids: string[] = [], mints: bigint[] = []) =>
        token.initialize(c, t, e, holders, ids, mints);
      await expect(init(config, ethers.ZeroAddress, tokenizer.address)).to.be.revertedWithCustomError(token, "ZeroAddress");
      await expect(init(config, tokenizer.address, ethers.ZeroAddress)).to.be.revertedWithCustomError(token, "ZeroAddress");
      await expect(
        init({ ...config, paymentToken: ethers.ZeroAddress }, tokenizer.address, tokenizer.address),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      await expect(init({ ...config, decimals: 19 }, tokenizer.address, tokenizer.address))
        .to.be.revertedWithCustomError(token, "InvalidDecimals")
        .withArgs(19);
      await expect(init(config, tokenizer.address, tokenizer.address, [alice.address], [investorIdOf(alice.address)], []))
        .to.be.revertedWithCustomError(token, "LengthMismatch")
        .withArgs(1, 0);
      await expect(init(config, tokenizer.address, tokenizer.address, [alice.address], [], [1n]))
        .to.be.revertedWithCustomError(token, "LengthMismatch")
        .withArgs(1, 0);
      await token.connect(deployer).initialize(config, tokenizer.address, tokenizer.address, [], [], []);
      expect(await token.symbol()).to.equal("RAW");
      // Whoever initializes the proxy becomes its registry (the factory, for every proxy it creates).
      expect(await token.implementationRegistry()).to.equal(deployer.address);
      await expect(init(config, tokenizer.address, tokenizer.address)).to.be.revertedWithCustomError(
        token,
        "InvalidInitialization",
      );
    });

    it("a bare escrow proxy initializes once; only its registry binds a token, once, never the zero address", async function () {
      const { deployer, outsider, tokenImpl, escrowImpl } = await loadFixture(deployFactoryFixture);
      const escrow = escrowImpl.attach(await deployRawProxy(escrowImpl.target)) as typeof escrowImpl;
      await escrow.connect(deployer).initialize();
      expect(await escrow.implementationRegistry()).to.equal(deployer.address);
      await expect(escrow.initialize()).to.be.revertedWithCustomError(escrow, "InvalidInitialization");
      await expect(escrow.connect(outsider).bindToken(tokenImpl.target))
        .to.be.revertedWithCustomError(escrow, "NotFactory")
        .withArgs(outsider.address);
      await expect(escrow.connect(deployer).bindToken(ethers.ZeroAddress)).to.be.revertedWithCustomError(escrow, "ZeroAddress");
      await escrow.connect(deployer).bindToken(tokenImpl.target);
      expect(await escrow.token()).to.equal(tokenImpl.target);
      await expect(escrow.connect(deployer).bindToken(outsider.address))
        .to.be.revertedWithCustomError(escrow, "TokenAlreadyBound")
        .withArgs(tokenImpl.target);
    });
  });
});
