import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, setBalance } from "@nomicfoundation/hardhat-network-helpers";
import { INVESTOR, ROLE, TOKENS, USDC, createTokenization, investorIdOf, tokenFixture, tokenizationParams } from "./helpers";

/** tokenFixture plus a capped token (cap 2000, alice 1000 preminted) and a signer impersonating its escrow. */
async function cappedFixture() {
  const base = await tokenFixture();
  const { factory, tokenizer, alice, usdc } = base;
  const { token: capped, escrow } = await createTokenization(
    factory,
    tokenizer,
    tokenizationParams(await usdc.getAddress(), {
      supplyCap: TOKENS(2000),
      initialHolders: [alice.address],
      preMints: [TOKENS(1000)],
    }),
  );
  await setBalance(await escrow.getAddress(), 10n ** 18n);
  const escrowSigner = await ethers.getImpersonatedSigner(await escrow.getAddress());
  return { ...base, capped, escrowSigner };
}

describe("SecurityToken", function () {
  describe("whitelist", function () {
    it("whitelists and blacklists one account, emitting every time (also when unchanged)", async function () {
      const { token, tokenizer, dave } = await loadFixture(tokenFixture);
      expect(await token.isWhitelisted(dave.address)).to.equal(false);
      await expect(token.connect(tokenizer).setWhitelisted(dave.address, true))
        .to.emit(token, "WhitelistUpdated")
        .withArgs(dave.address, true);
      expect(await token.isWhitelisted(dave.address)).to.equal(true);
      await expect(token.connect(tokenizer).setWhitelisted(dave.address, true))
        .to.emit(token, "WhitelistUpdated")
        .withArgs(dave.address, true);
      await expect(token.connect(tokenizer).setWhitelisted(dave.address, false))
        .to.emit(token, "WhitelistUpdated")
        .withArgs(dave.address, false);
      expect(await token.isWhitelisted(dave.address)).to.equal(false);
    });

    it("blacklisting keeps the balance", async function () {
      const { token, tokenizer, alice } = await loadFixture(tokenFixture);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
      await token.connect(tokenizer).setWhitelisted(alice.address, true);
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(1000));
    });

    it("needs WHITELISTER_ROLE and rejects the zero address", async function () {
      const { token, tokenizer, alice, dave } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).setWhitelisted(dave.address, true))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.WHITELISTER);
      await expect(
        token.connect(tokenizer).setWhitelisted(ethers.ZeroAddress, true),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
    });

    it("batch: updates every account and emits one event each", async function () {
      const { token, tokenizer, alice, dave, outsider } = await loadFixture(tokenFixture);
      const tx = token.connect(tokenizer).setWhitelistedBatch([dave.address, outsider.address, alice.address], [
        true,
        true,
        false,
      ]);
      await expect(tx).to.emit(token, "WhitelistUpdated").withArgs(dave.address, true);
      await expect(tx).to.emit(token, "WhitelistUpdated").withArgs(outsider.address, true);
      await expect(tx).to.emit(token, "WhitelistUpdated").withArgs(alice.address, false);
      expect(await token.isWhitelisted(dave.address)).to.equal(true);
      expect(await token.isWhitelisted(outsider.address)).to.equal(true);
      expect(await token.isWhitelisted(alice.address)).to.equal(false);
      await expect(token.connect(tokenizer).setWhitelistedBatch([], [])).to.not.emit(token, "WhitelistUpdated");
    });

    it("batch: WHITELISTER_ROLE, equal lengths, no zero address (atomically)", async function () {
      const { token, tokenizer, alice, dave } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).setWhitelistedBatch([dave.address], [true]))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.WHITELISTER);
      await expect(token.connect(tokenizer).setWhitelistedBatch([dave.address], [true, false]))
        .to.be.revertedWithCustomError(token, "LengthMismatch")
        .withArgs(1, 2);
      await expect(
        token.connect(tokenizer).setWhitelistedBatch([dave.address, ethers.ZeroAddress], [true, true]),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      expect(await token.isWhitelisted(dave.address)).to.equal(false);
    });
  });

  describe("investor bindings (whitelistInvestors)", function () {
    it("the factory binds each initial holder to its investor id; 0 leaves a wallet unbound", async function () {
      const { factory, token, tokenizer, alice, bob, carol, dave, usdc } = await loadFixture(tokenFixture);
      expect(await token.investorOf(alice.address)).to.equal(investorIdOf(alice.address));
      expect(await token.investorOf(carol.address)).to.equal(investorIdOf(carol.address));
      expect(await token.investorOf(dave.address)).to.equal(ethers.ZeroHash);
      const params = tokenizationParams(await usdc.getAddress(), {
        initialHolders: [alice.address, bob.address],
        initialInvestorIds: [INVESTOR("a"), ethers.ZeroHash],
        preMints: [1n, 1n],
      });
      const [tokenAddress] = await factory.connect(tokenizer).newTokenization.staticCall(params);
      const tx = factory.connect(tokenizer).newTokenization(params);
      await expect(tx).to.emit(token.attach(tokenAddress), "InvestorBound").withArgs(alice.address, INVESTOR("a"), factory.target);
      const other = await ethers.getContractAt("SecurityToken", tokenAddress);
      expect(await other.investorOf(bob.address)).to.equal(ethers.ZeroHash);
      expect(await other.isWhitelisted(bob.address)).to.equal(true);
    });

    it("whitelists and binds each wallet, emitting WhitelistUpdated and InvestorBound (once per change)", async function () {
      const { token, tokenizer, dave, outsider } = await loadFixture(tokenFixture);
      const tx = token.connect(tokenizer).whitelistInvestors([dave.address, outsider.address], [INVESTOR("d"), INVESTOR("d")]);
      await expect(tx).to.emit(token, "WhitelistUpdated").withArgs(dave.address, true);
      await expect(tx).to.emit(token, "InvestorBound").withArgs(dave.address, INVESTOR("d"), tokenizer.address);
      await expect(tx).to.emit(token, "InvestorBound").withArgs(outsider.address, INVESTOR("d"), tokenizer.address);
      expect(await token.isWhitelisted(outsider.address)).to.equal(true);
      expect(await token.investorOf(outsider.address)).to.equal(INVESTOR("d"));
      // The same binding again, or an id of 0, leaves the binding as it is and emits no InvestorBound.
      const again = token.connect(tokenizer).whitelistInvestors([dave.address, outsider.address], [INVESTOR("d"), ethers.ZeroHash]);
      await expect(again).to.not.emit(token, "InvestorBound");
      await expect(again).to.emit(token, "WhitelistUpdated").withArgs(outsider.address, true);
      expect(await token.investorOf(outsider.address)).to.equal(INVESTOR("d"));
      // Leaving the whitelist keeps the binding.
      await token.connect(tokenizer).setWhitelisted(dave.address, false);
      expect(await token.investorOf(dave.address)).to.equal(INVESTOR("d"));
    });

    it("a wallet holding nothing may move to another investor; one holding tokens may not (WalletInUse)", async function () {
      const { token, tokenizer, alice, carol } = await loadFixture(tokenFixture);
      await expect(token.connect(tokenizer).whitelistInvestors([carol.address], [INVESTOR("c2")]))
        .to.emit(token, "InvestorBound")
        .withArgs(carol.address, INVESTOR("c2"), tokenizer.address);
      await expect(token.connect(tokenizer).whitelistInvestors([alice.address], [INVESTOR("mallory")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(alice.address, investorIdOf(alice.address));
      await token.connect(alice).transfer(carol.address, TOKENS(1000));
      await expect(token.connect(tokenizer).whitelistInvestors([carol.address], [INVESTOR("mallory")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(carol.address, INVESTOR("c2"));
      // Emptied, alice may be rebound.
      await token.connect(tokenizer).whitelistInvestors([alice.address], [INVESTOR("a2")]);
      expect(await token.investorOf(alice.address)).to.equal(INVESTOR("a2"));
    });

    it("a frozen amount or unclaimed dividends keep a wallet bound (WalletInUse)", async function () {
      const { token, usdc, tokenizer, alice, bob, carol } = await loadFixture(tokenFixture);
      // A frozen amount on an empty wallet.
      await token.connect(tokenizer).setFrozenTokens(carol.address, 1n);
      await expect(token.connect(tokenizer).whitelistInvestors([carol.address], [INVESTOR("x")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(carol.address, investorIdOf(carol.address));
      // Unclaimed dividends on an emptied wallet.
      await usdc.mint(tokenizer.address, USDC(1500));
      await usdc.connect(tokenizer).approve(token.target, USDC(1500));
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      await token.connect(bob).transfer(alice.address, TOKENS(500));
      await expect(token.connect(tokenizer).whitelistInvestors([bob.address], [INVESTOR("x")]))
        .to.be.revertedWithCustomError(token, "WalletInUse")
        .withArgs(bob.address, investorIdOf(bob.address));
      await token.connect(bob).claimDividends();
      await token.connect(tokenizer).whitelistInvestors([bob.address], [INVESTOR("x")]);
    });

    it("needs WHITELISTER_ROLE, equal lengths and no zero address (atomically)", async function () {
      const { token, tokenizer, alice, dave } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).whitelistInvestors([dave.address], [INVESTOR("d")]))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.WHITELISTER);
      await expect(token.connect(tokenizer).whitelistInvestors([dave.address], []))
        .to.be.revertedWithCustomError(token, "LengthMismatch")
        .withArgs(1, 0);
      await expect(
        token.connect(tokenizer).whitelistInvestors([dave.address, ethers.ZeroAddress], [INVESTOR("d"), INVESTOR("d")]),
      ).to.be.revertedWithCustomError(token, "ZeroAddress");
      expect(await token.isWhitelisted(dave.address)).to.equal(false);
      expect(await token.investorOf(dave.address)).to.equal(ethers.ZeroHash);
    });
  });

  describe("transfers", function () {
    it("transfer between whitelisted holders", async function () {
      const { token, alice, bob } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).transfer(bob.address, TOKENS(100)))
        .to.emit(token, "Transfer")
        .withArgs(alice.address, bob.address, TOKENS(100));
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(900));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(600));
      expect(await token.totalSupply()).to.equal(TOKENS(1500));
    });

    it("transfer to a whitelisted account with no balance, and to oneself", async function () {
      const { token, alice, carol } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).transfer(carol.address, TOKENS(1))).to.changeTokenBalances(
        token,
        [alice, carol],
        [-TOKENS(1), TOKENS(1)],
      );
      await expect(token.connect(alice).transfer(alice.address, TOKENS(10))).to.changeTokenBalance(token, alice, 0n);
    });

    it("refuses a non-whitelisted sender, naming it", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(tokenFixture);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(token.connect(alice).transfer(bob.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotSend")
        .withArgs(alice.address);
    });

    it("refuses a non-whitelisted recipient, naming it (even if the amount exceeds the balance)", async function () {
      const { token, alice, dave } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).transfer(dave.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(dave.address);
      await expect(token.connect(alice).transfer(dave.address, TOKENS(5000)))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(dave.address);
    });

    it("names the sender first when neither side is whitelisted", async function () {
      const { token, tokenizer, alice, dave } = await loadFixture(tokenFixture);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(token.connect(alice).transfer(dave.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotSend")
        .withArgs(alice.address);
    });

    it("keeps the ERC-20 errors for balance and the zero address", async function () {
      const { token, alice, bob, carol } = await loadFixture(tokenFixture);
      await expect(token.connect(carol).transfer(bob.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(carol.address, 0n, 1n);
      await expect(token.connect(alice).transfer(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });

    it("approve keeps OpenZeppelin's zero-spender error", async function () {
      const { token, alice } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).approve(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidSpender")
        .withArgs(ethers.ZeroAddress);
    });

    it("transferFrom between whitelisted holders; the spender needs no whitelist", async function () {
      const { token, alice, bob, outsider } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).approve(outsider.address, TOKENS(50)))
        .to.emit(token, "Approval")
        .withArgs(alice.address, outsider.address, TOKENS(50));
      await expect(token.connect(outsider).transferFrom(alice.address, bob.address, TOKENS(20)))
        .to.emit(token, "Transfer")
        .withArgs(alice.address, bob.address, TOKENS(20));
      expect(await token.allowance(alice.address, outsider.address)).to.equal(TOKENS(30));
      expect(await token.balanceOf(bob.address)).to.equal(TOKENS(520));
    });

    it("transferFrom enforces the whitelist on both sides, the allowance and the balance", async function () {
      const { token, tokenizer, alice, bob, carol, dave, outsider } = await loadFixture(tokenFixture);
      await token.connect(alice).approve(outsider.address, TOKENS(5000));
      await token.connect(carol).approve(outsider.address, TOKENS(1));
      await expect(token.connect(outsider).transferFrom(alice.address, dave.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(dave.address);
      await expect(token.connect(outsider).transferFrom(carol.address, bob.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(carol.address, 0n, 1n);
      await expect(token.connect(outsider).transferFrom(bob.address, alice.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientAllowance")
        .withArgs(outsider.address, 0n, 1n);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(token.connect(outsider).transferFrom(alice.address, bob.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotSend")
        .withArgs(alice.address);
    });
  });

  describe("ERC-7943 views", function () {
    it("canSend / canReceive follow the whitelist", async function () {
      const { token, tokenizer, alice, carol, dave } = await loadFixture(tokenFixture);
      expect(await token.canSend(alice.address)).to.equal(true);
      expect(await token.canReceive(carol.address)).to.equal(true);
      expect(await token.canSend(dave.address)).to.equal(false);
      expect(await token.canReceive(dave.address)).to.equal(false);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      expect(await token.canSend(alice.address)).to.equal(false);
      expect(await token.canReceive(alice.address)).to.equal(false);
    });

    it("canTransfer needs both sides whitelisted and enough balance", async function () {
      const { token, tokenizer, alice, bob, dave } = await loadFixture(tokenFixture);
      expect(await token.canTransfer(alice.address, bob.address, TOKENS(1000))).to.equal(true);
      expect(await token.canTransfer(alice.address, bob.address, TOKENS(1000) + 1n)).to.equal(false);
      expect(await token.canTransfer(alice.address, dave.address, 1n)).to.equal(false);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      expect(await token.canTransfer(alice.address, bob.address, 1n)).to.equal(false);
    });
  });

  describe("mint and burn", function () {
    it("the tokenizer mints to a whitelisted account", async function () {
      const { token, tokenizer, carol } = await loadFixture(tokenFixture);
      await expect(token.connect(tokenizer).mint(carol.address, TOKENS(7)))
        .to.emit(token, "Transfer")
        .withArgs(ethers.ZeroAddress, carol.address, TOKENS(7));
      expect(await token.balanceOf(carol.address)).to.equal(TOKENS(7));
      expect(await token.totalSupply()).to.equal(TOKENS(1507));
    });

    it("mint: MINTER_ROLE, non-zero amount, whitelisted non-zero recipient", async function () {
      const { token, tokenizer, alice, dave } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).mint(alice.address, 1n))
        .to.be.revertedWithCustomError(token, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ROLE.MINTER);
      await expect(token.connect(tokenizer).mint(alice.address, 0n)).to.be.revertedWithCustomError(
        token,
        "ZeroAmount",
      );
      await expect(token.connect(tokenizer).mint(dave.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotReceive")
        .withArgs(dave.address);
      await expect(token.connect(tokenizer).mint(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });

    it("pause stops mints (issue 48: issuance went on while paused before)", async function () {
      const { token, tokenizer, carol } = await loadFixture(tokenFixture);
      await token.connect(tokenizer).pause();
      await expect(token.connect(tokenizer).mint(carol.address, 1n)).to.be.revertedWithCustomError(token, "EnforcedPause");
      await token.connect(tokenizer).unpause();
      await token.connect(tokenizer).mint(carol.address, 1n);
    });

    it("without a cap the supply is bounded only by uint248", async function () {
      const { token, tokenizer, carol } = await loadFixture(tokenFixture);
      const room = 2n ** 248n - 1n - TOKENS(1500);
      await token.connect(tokenizer).mint(carol.address, room);
      expect(await token.totalSupply()).to.equal(2n ** 248n - 1n);
      await expect(token.connect(tokenizer).mint(carol.address, 1n))
        .to.be.revertedWithCustomError(token, "SafeCastOverflowedUintDowncast")
        .withArgs(248, 2n ** 248n);
    });

    it("the cap limits tokenizer mints", async function () {
      const { capped, tokenizer, alice } = await loadFixture(cappedFixture);
      await expect(capped.connect(tokenizer).mint(alice.address, TOKENS(1000) + 1n))
        .to.be.revertedWithCustomError(capped, "SupplyCapExceeded")
        .withArgs(TOKENS(2000), TOKENS(2000) + 1n);
      await capped.connect(tokenizer).mint(alice.address, TOKENS(1000));
      expect(await capped.totalSupply()).to.equal(TOKENS(2000));
    });

    it("the cap counts reserved supply, and burning frees room", async function () {
      const { capped, tokenizer, alice, escrowSigner } = await loadFixture(cappedFixture);
      await capped.connect(escrowSigner).reserveSupply(TOKENS(600));
      await expect(capped.connect(tokenizer).mint(alice.address, TOKENS(401)))
        .to.be.revertedWithCustomError(capped, "SupplyCapExceeded")
        .withArgs(TOKENS(2000), TOKENS(2001));
      await capped.connect(tokenizer).mint(alice.address, TOKENS(400));
      await capped.connect(alice).burn(TOKENS(1));
      await capped.connect(tokenizer).mint(alice.address, TOKENS(1));
    });

    it("a holder allowed to send burns its own balance (ERC-7943: a public burn respects canSend)", async function () {
      const { token, tokenizer, alice } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).burn(TOKENS(100)))
        .to.emit(token, "Transfer")
        .withArgs(alice.address, ethers.ZeroAddress, TOKENS(100));
      expect(await token.totalSupply()).to.equal(TOKENS(1400));
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await expect(token.connect(alice).burn(TOKENS(900)))
        .to.be.revertedWithCustomError(token, "ERC7943CannotSend")
        .withArgs(alice.address);
      await token.connect(tokenizer).setWhitelisted(alice.address, true);
      await token.connect(alice).burn(TOKENS(900));
      expect(await token.balanceOf(alice.address)).to.equal(0n);
      expect(await token.totalSupply()).to.equal(TOKENS(500));
    });

    it("burn: non-zero amount within the balance", async function () {
      const { token, alice, carol } = await loadFixture(tokenFixture);
      await expect(token.connect(alice).burn(0n)).to.be.revertedWithCustomError(token, "ZeroAmount");
      await expect(token.connect(alice).burn(TOKENS(1000) + 1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(alice.address, TOKENS(1000), TOKENS(1000) + 1n);
      await expect(token.connect(carol).burn(1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(carol.address, 0n, 1n);
    });
  });

  describe("reserved supply (escrow only)", function () {
    it("reserve, release and mint reserved supply, with events", async function () {
      const { capped, escrowSigner, alice } = await loadFixture(cappedFixture);
      await expect(capped.connect(escrowSigner).reserveSupply(TOKENS(600)))
        .to.emit(capped, "SupplyReserved")
        .withArgs(TOKENS(600), TOKENS(600));
      await expect(capped.connect(escrowSigner).reserveSupply(TOKENS(400)))
        .to.emit(capped, "SupplyReserved")
        .withArgs(TOKENS(400), TOKENS(1000));
      expect(await capped.reservedSupply()).to.equal(TOKENS(1000));

      await expect(capped.connect(escrowSigner).mintReserved(alice.address, TOKENS(300)))
        .to.emit(capped, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, TOKENS(300));
      expect(await capped.reservedSupply()).to.equal(TOKENS(700));
      expect(await capped.totalSupply()).to.equal(TOKENS(1300));

      await expect(capped.connect(escrowSigner).releaseReservedSupply(TOKENS(200)))
        .to.emit(capped, "ReservationReleased")
        .withArgs(TOKENS(200), TOKENS(500));
      expect(await capped.reservedSupply()).to.equal(TOKENS(500));
    });

    it("reserveSupply respects the cap (supply + reserved) and rejects 0", async function () {
      const { capped, escrowSigner, tokenizer, alice } = await loadFixture(cappedFixture);
      await expect(capped.connect(escrowSigner).reserveSupply(TOKENS(1000) + 1n))
        .to.be.revertedWithCustomError(capped, "SupplyCapExceeded")
        .withArgs(TOKENS(2000), TOKENS(2000) + 1n);
      await capped.connect(escrowSigner).reserveSupply(TOKENS(500));
      await capped.connect(tokenizer).mint(alice.address, TOKENS(400));
      await expect(capped.connect(escrowSigner).reserveSupply(TOKENS(101)))
        .to.be.revertedWithCustomError(capped, "SupplyCapExceeded")
        .withArgs(TOKENS(2000), TOKENS(2001));
      await expect(capped.connect(escrowSigner).reserveSupply(0n)).to.be.revertedWithCustomError(
        capped,
        "ZeroAmount",
      );
    });

    it("without a cap any reservation is accepted", async function () {
      const { token, escrow } = await loadFixture(tokenFixture);
      await setBalance(await escrow.getAddress(), 10n ** 18n);
      const escrowSigner = await ethers.getImpersonatedSigner(await escrow.getAddress());
      await token.connect(escrowSigner).reserveSupply(2n ** 200n);
      expect(await token.reservedSupply()).to.equal(2n ** 200n);
    });

    it("release and mintReserved cannot exceed the reservation, reject 0, and mint only to the whitelist", async function () {
      const { capped, escrowSigner, alice, dave } = await loadFixture(cappedFixture);
      await capped.connect(escrowSigner).reserveSupply(TOKENS(100));
      await expect(capped.connect(escrowSigner).releaseReservedSupply(TOKENS(100) + 1n))
        .to.be.revertedWithCustomError(capped, "ReservationExceeded")
        .withArgs(TOKENS(100), TOKENS(100) + 1n);
      await expect(capped.connect(escrowSigner).mintReserved(alice.address, TOKENS(100) + 1n))
        .to.be.revertedWithCustomError(capped, "ReservationExceeded")
        .withArgs(TOKENS(100), TOKENS(100) + 1n);
      await expect(capped.connect(escrowSigner).releaseReservedSupply(0n)).to.be.revertedWithCustomError(
        capped,
        "ZeroAmount",
      );
      await expect(capped.connect(escrowSigner).mintReserved(alice.address, 0n)).to.be.revertedWithCustomError(
        capped,
        "ZeroAmount",
      );
      await expect(capped.connect(escrowSigner).mintReserved(dave.address, 1n))
        .to.be.revertedWithCustomError(capped, "ERC7943CannotReceive")
        .withArgs(dave.address);
      expect(await capped.reservedSupply()).to.equal(TOKENS(100));
    });

    it("pause stops mintReserved (escrow deliveries); reservations and releases go on", async function () {
      const { capped, escrowSigner, tokenizer, alice } = await loadFixture(cappedFixture);
      await capped.connect(tokenizer).pause();
      await capped.connect(escrowSigner).reserveSupply(TOKENS(100));
      await expect(capped.connect(escrowSigner).mintReserved(alice.address, 1n)).to.be.revertedWithCustomError(capped, "EnforcedPause");
      await capped.connect(escrowSigner).releaseReservedSupply(TOKENS(50));
      await capped.connect(tokenizer).unpause();
      await capped.connect(escrowSigner).mintReserved(alice.address, TOKENS(50));
      expect(await capped.reservedSupply()).to.equal(0n);
    });

    it("reserve, release and mintReserved are escrow only (not even the tokenizer)", async function () {
      const { capped, tokenizer, alice } = await loadFixture(cappedFixture);
      await expect(capped.connect(tokenizer).reserveSupply(1n))
        .to.be.revertedWithCustomError(capped, "NotEscrow")
        .withArgs(tokenizer.address);
      await expect(capped.connect(alice).releaseReservedSupply(1n))
        .to.be.revertedWithCustomError(capped, "NotEscrow")
        .withArgs(alice.address);
      await expect(capped.connect(tokenizer).mintReserved(alice.address, 1n))
        .to.be.revertedWithCustomError(capped, "NotEscrow")
        .withArgs(tokenizer.address);
    });
  });
});
