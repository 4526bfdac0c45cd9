import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture, setBalance } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractTransactionResponse, Interface } from "ethers";
import { CODE, TOKENS, USDC, createTokenization, tokenFixture, tokenizationParams } from "./helpers";

/** tokenFixture (alice 1000, bob 500, carol whitelisted with 0, dave and outsider not whitelisted) plus a dividend payment token funded for the tokenizer. */
async function controlsFixture() {
  const base = await tokenFixture();
  await base.usdc.mint(base.tokenizer.address, USDC(1_000_000));
  await base.usdc.connect(base.tokenizer).approve(base.token.target, ethers.MaxUint256);
  return base;
}

/** The names of the events a transaction emitted from `contract`, in log order. */
async function eventOrder(tx: Promise<ContractTransactionResponse>, iface: Interface, address: string): Promise<string[]> {
  const receipt = await (await tx).wait();
  return receipt!.logs.filter((l) => l.address === address).map((l) => iface.parseLog(l)!.name);
}

function interfaceId(iface: Interface, names: string[]): string {
  let id = 0n;
  for (const name of names) id ^= BigInt(iface.getFunction(name)!.selector);
  return ethers.toBeHex(id, 4);
}

describe("SecurityToken issuer controls", function () {
  describe("pause", function () {
    it("stops transfers, transferFrom, burns and issuance; agents' moves and whitelisting go on", async function () {
      const { token, tokenizer, alice, bob, carol } = await loadFixture(controlsFixture);
      await token.connect(alice).approve(bob.address, TOKENS(10));
      await expect(token.connect(tokenizer).pause()).to.emit(token, "Paused").withArgs(tokenizer.address);
      expect(await token.paused()).to.equal(true);
      await expect(token.connect(alice).transfer(bob.address, 1n)).to.be.revertedWithCustomError(token, "EnforcedPause");
      await expect(token.connect(bob).transferFrom(alice.address, bob.address, 1n)).to.be.revertedWithCustomError(token, "EnforcedPause");
      await expect(token.connect(alice).burn(1n)).to.be.revertedWithCustomError(token, "EnforcedPause");
      // Issue 48: a paused token used to go on minting; issuance now stops with the rest.
      await expect(token.connect(tokenizer).mint(carol.address, 1n)).to.be.revertedWithCustomError(token, "EnforcedPause");
      expect(await token.detectTransferRestriction(alice.address, bob.address, 1n)).to.equal(CODE.PAUSED);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, carol.address, 1n)).to.equal(CODE.PAUSED);
      expect(await token.canTransfer(alice.address, bob.address, 1n)).to.equal(false);

      await token.connect(tokenizer).forcedTransfer(alice.address, carol.address, TOKENS(1));
      await token.connect(tokenizer).setWhitelisted(ethers.Wallet.createRandom().address, true);
      await token.connect(tokenizer).setFrozenTokens(bob.address, 1n);
      expect(await token.balanceOf(carol.address)).to.equal(TOKENS(1));

      await expect(token.connect(tokenizer).unpause()).to.emit(token, "Unpaused").withArgs(tokenizer.address);
      expect(await token.paused()).to.equal(false);
      await token.connect(alice).transfer(bob.address, 1n);
      await token.connect(tokenizer).mint(carol.address, 1n);
    });

    it("pause while paused and unpause while running revert", async function () {
      const { token, tokenizer } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).unpause()).to.be.revertedWithCustomError(token, "ExpectedPause");
      await token.connect(tokenizer).pause();
      await expect(token.connect(tokenizer).pause()).to.be.revertedWithCustomError(token, "EnforcedPause");
    });

    it("a paused token accepts dividend distributions and holds the claims until the unpause", async function () {
      const { token, tokenizer, alice } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).pause();
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      const owed = await token.withdrawableDividendOf(alice.address);
      expect(USDC(1000) - owed <= 1n).to.equal(true);
      await expect(token.connect(alice).claimDividends()).to.be.revertedWithCustomError(token, "EnforcedPause");
      await token.connect(tokenizer).unpause();
      await expect(token.connect(alice).claimDividends()).to.emit(token, "DividendClaimed").withArgs(alice.address, owed);
    });
  });

  describe("whole-address freeze", function () {
    it("a frozen address neither sends, receives, burns nor is minted to; its whitelist entry stays", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).setAddressFrozen(alice.address, true))
        .to.emit(token, "AddressFrozen")
        .withArgs(alice.address, true, tokenizer.address);
      expect(await token.isFrozen(alice.address)).to.equal(true);
      expect(await token.isWhitelisted(alice.address)).to.equal(true);
      expect(await token.canSend(alice.address)).to.equal(false);
      expect(await token.canReceive(alice.address)).to.equal(false);
      expect(await token.canTransact(alice.address)).to.equal(false);
      await expect(token.connect(alice).transfer(bob.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943CannotSend").withArgs(alice.address);
      await expect(token.connect(bob).transfer(alice.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943CannotReceive").withArgs(alice.address);
      await expect(token.connect(alice).burn(1n)).to.be.revertedWithCustomError(token, "ERC7943CannotSend").withArgs(alice.address);
      await expect(token.connect(tokenizer).mint(alice.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943CannotReceive").withArgs(alice.address);
      expect(await token.detectTransferRestriction(alice.address, bob.address, 1n)).to.equal(CODE.SENDER_FROZEN);
      expect(await token.detectTransferRestriction(bob.address, alice.address, 1n)).to.equal(CODE.RECEIVER_FROZEN);

      await expect(token.connect(tokenizer).setAddressFrozen(alice.address, false))
        .to.emit(token, "AddressFrozen")
        .withArgs(alice.address, false, tokenizer.address);
      expect(await token.canTransact(alice.address)).to.equal(true);
      await token.connect(alice).transfer(bob.address, 1n);
    });

    it("rejects the zero address", async function () {
      const { token, tokenizer } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).setAddressFrozen(ethers.ZeroAddress, true)).to.be.revertedWithCustomError(token, "ZeroAddress");
    });

    it("whitelisting and freezing are independent flags", async function () {
      const { token, tokenizer, dave } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).setAddressFrozen(dave.address, true);
      await token.connect(tokenizer).setWhitelisted(dave.address, true);
      expect(await token.isFrozen(dave.address)).to.equal(true);
      expect(await token.canReceive(dave.address)).to.equal(false);
      await token.connect(tokenizer).setAddressFrozen(dave.address, false);
      expect(await token.canReceive(dave.address)).to.equal(true);
      await token.connect(tokenizer).setWhitelisted(dave.address, false);
      expect(await token.isFrozen(dave.address)).to.equal(false);
    });
  });

  describe("frozen amounts (ERC-7943)", function () {
    it("setFrozenTokens overwrites, may exceed the balance, emits Frozen and returns true", async function () {
      const { token, tokenizer, alice } = await loadFixture(controlsFixture);
      expect(await token.connect(tokenizer).setFrozenTokens.staticCall(alice.address, 1n)).to.equal(true);
      await expect(token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(300))).to.emit(token, "Frozen").withArgs(alice.address, TOKENS(300));
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(5000));
      expect(await token.getFrozenTokens(alice.address)).to.equal(TOKENS(5000));
      await expect(token.connect(tokenizer).setFrozenTokens(ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(token, "ZeroAddress");
    });

    it("a holder moves only its unfrozen balance (transfer, transferFrom, burn)", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(700));
      await expect(token.connect(alice).transfer(bob.address, TOKENS(300) + 1n))
        .to.be.revertedWithCustomError(token, "ERC7943InsufficientUnfrozenBalance")
        .withArgs(alice.address, TOKENS(300) + 1n, TOKENS(300));
      await token.connect(alice).approve(bob.address, TOKENS(1000));
      await expect(token.connect(bob).transferFrom(alice.address, bob.address, TOKENS(301)))
        .to.be.revertedWithCustomError(token, "ERC7943InsufficientUnfrozenBalance")
        .withArgs(alice.address, TOKENS(301), TOKENS(300));
      await expect(token.connect(alice).burn(TOKENS(301)))
        .to.be.revertedWithCustomError(token, "ERC7943InsufficientUnfrozenBalance")
        .withArgs(alice.address, TOKENS(301), TOKENS(300));
      expect(await token.detectTransferRestriction(alice.address, bob.address, TOKENS(301))).to.equal(CODE.INSUFFICIENT_UNFROZEN_BALANCE);
      expect(await token.canTransfer(alice.address, bob.address, TOKENS(300))).to.equal(true);
      await token.connect(alice).transfer(bob.address, TOKENS(200));
      await token.connect(alice).burn(TOKENS(100));
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(700));
      expect(await token.canTransfer(alice.address, bob.address, 1n)).to.equal(false);
    });

    it("the balance error comes before the frozen one; frozen above the balance leaves nothing to move", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(5000));
      await expect(token.connect(alice).transfer(bob.address, TOKENS(1001)))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(alice.address, TOKENS(1000), TOKENS(1001));
      expect(await token.detectTransferRestriction(alice.address, bob.address, TOKENS(1001))).to.equal(CODE.INSUFFICIENT_BALANCE);
      await expect(token.connect(alice).transfer(bob.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943InsufficientUnfrozenBalance")
        .withArgs(alice.address, 1n, 0n);
      // What arrives later is withheld too.
      await token.connect(bob).transfer(alice.address, TOKENS(100));
      await expect(token.connect(alice).transfer(bob.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943InsufficientUnfrozenBalance");
    });

    it("freezePartialTokens adds and unfreezePartialTokens subtracts; back to 0 the whole balance moves", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).freezePartialTokens(alice.address, TOKENS(100))).to.emit(token, "Frozen").withArgs(alice.address, TOKENS(100));
      await expect(token.connect(tokenizer).freezePartialTokens(alice.address, TOKENS(50))).to.emit(token, "Frozen").withArgs(alice.address, TOKENS(150));
      await expect(token.connect(tokenizer).unfreezePartialTokens(alice.address, TOKENS(150) + 1n))
        .to.be.revertedWithCustomError(token, "InsufficientFrozenTokens")
        .withArgs(alice.address, TOKENS(150), TOKENS(150) + 1n);
      await expect(token.connect(tokenizer).unfreezePartialTokens(alice.address, TOKENS(150))).to.emit(token, "Frozen").withArgs(alice.address, 0n);
      await token.connect(alice).transfer(bob.address, TOKENS(1000));
    });

    it("partial freezes reject 0 and the zero address", async function () {
      const { token, tokenizer, alice } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).freezePartialTokens(alice.address, 0n)).to.be.revertedWithCustomError(token, "ZeroAmount");
      await expect(token.connect(tokenizer).unfreezePartialTokens(alice.address, 0n)).to.be.revertedWithCustomError(token, "ZeroAmount");
      await expect(token.connect(tokenizer).freezePartialTokens(ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(token, "ZeroAddress");
    });
  });

  describe("forced transfer (ERC-7943)", function () {
    it("moves tokens from a holder that is off the whitelist, frozen, and while paused; emits Transfer then ForcedTransfer", async function () {
      const { token, tokenizer, alice, carol } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).setWhitelisted(alice.address, false);
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      await token.connect(tokenizer).pause();
      expect(await token.connect(tokenizer).forcedTransfer.staticCall(alice.address, carol.address, TOKENS(10))).to.equal(true);
      const tx = token.connect(tokenizer).forcedTransfer(alice.address, carol.address, TOKENS(10));
      await expect(tx).to.emit(token, "ForcedTransfer").withArgs(alice.address, carol.address, TOKENS(10));
      expect(await eventOrder(token.connect(tokenizer).forcedTransfer(alice.address, carol.address, 1n), token.interface, await token.getAddress())).to.deep.equal([
        "Transfer",
        "ForcedTransfer",
      ]);
      expect(await token.balanceOf(carol.address)).to.equal(TOKENS(10) + 1n);
      expect(await token.totalSupply()).to.equal(TOKENS(1500));
    });

    it("takes frozen tokens only beyond the unfrozen part, lowering the frozen amount first (Frozen before Transfer)", async function () {
      const { token, tokenizer, alice, carol } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).setFrozenTokens(alice.address, TOKENS(800));
      // 200 unfrozen: taking 150 leaves the freeze alone.
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, carol.address, TOKENS(150))).to.not.emit(token, "Frozen");
      // 50 unfrozen left: taking 250 takes 200 frozen.
      const order = await eventOrder(token.connect(tokenizer).forcedTransfer(alice.address, carol.address, TOKENS(250)), token.interface, await token.getAddress());
      expect(order).to.deep.equal(["Frozen", "Transfer", "ForcedTransfer"]);
      expect(await token.getFrozenTokens(alice.address)).to.equal(TOKENS(600));
      expect(await token.balanceOf(alice.address)).to.equal(TOKENS(600));
    });

    it("refuses a receiver that may not receive, zero addresses, 0, the same account and more than the balance", async function () {
      const { token, tokenizer, alice, bob, dave } = await loadFixture(controlsFixture);
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, dave.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943CannotReceive").withArgs(dave.address);
      await token.connect(tokenizer).setAddressFrozen(bob.address, true);
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, bob.address, 1n)).to.be.revertedWithCustomError(token, "ERC7943CannotReceive").withArgs(bob.address);
      await expect(token.connect(tokenizer).forcedTransfer(ethers.ZeroAddress, alice.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidSender")
        .withArgs(ethers.ZeroAddress);
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(token, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, alice.address, 1n))
        .to.be.revertedWithCustomError(token, "ERC7943CannotTransfer")
        .withArgs(alice.address, alice.address, 1n);
      await token.connect(tokenizer).setAddressFrozen(bob.address, false);
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, bob.address, 0n)).to.be.revertedWithCustomError(token, "ZeroAmount");
      await expect(token.connect(tokenizer).forcedTransfer(alice.address, bob.address, TOKENS(1000) + 1n))
        .to.be.revertedWithCustomError(token, "ERC20InsufficientBalance")
        .withArgs(alice.address, TOKENS(1000), TOKENS(1000) + 1n);
    });

    it("keeps dividend entitlements: the holder keeps what it earned, the receiver earns from then on", async function () {
      const { token, tokenizer, alice, bob } = await loadFixture(controlsFixture);
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      const [aliceBefore, bobBefore] = [await token.withdrawableDividendOf(alice.address), await token.withdrawableDividendOf(bob.address)];
      await token.connect(tokenizer).forcedTransfer(alice.address, bob.address, TOKENS(500));
      expect(await token.withdrawableDividendOf(alice.address)).to.equal(aliceBefore);
      expect(await token.withdrawableDividendOf(bob.address)).to.equal(bobBefore);
      // alice 500, bob 1000 now: the next distribution follows the new balances.
      await token.connect(tokenizer).distributeDividends(USDC(1500));
      expect(USDC(500) - ((await token.withdrawableDividendOf(alice.address)) - aliceBefore) <= 1n).to.equal(true);
      expect(USDC(1000) - ((await token.withdrawableDividendOf(bob.address)) - bobBefore) <= 1n).to.equal(true);
    });

    it("keeps the escrow's reservation and the cap", async function () {
      const { factory, tokenizer, alice, bob, usdc } = await loadFixture(controlsFixture);
      const { token, escrow } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(2000), initialHolders: [alice.address, bob.address], preMints: [TOKENS(1000), 0n] }),
      );
      await setBalance(await escrow.getAddress(), 10n ** 18n);
      await token.connect(await ethers.getImpersonatedSigner(await escrow.getAddress())).reserveSupply(TOKENS(600));
      await token.connect(tokenizer).forcedTransfer(alice.address, bob.address, TOKENS(1000));
      expect(await token.reservedSupply()).to.equal(TOKENS(600));
      expect(await token.totalSupply()).to.equal(TOKENS(1000));
      await expect(token.connect(tokenizer).mint(bob.address, TOKENS(401))).to.be.revertedWithCustomError(token, "SupplyCapExceeded");
    });
  });

  describe("ERC-1404 restriction codes", function () {
    it("answers each code with its message", async function () {
      const { token } = await loadFixture(controlsFixture);
      const messages = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255].map((c) => token.messageForTransferRestriction(c)));
      expect(messages).to.deep.equal([
        "No restriction",
        "Transfers of this token are paused",
        "The sender is not whitelisted",
        "The receiver is not whitelisted",
        "The sender's address is frozen",
        "The receiver's address is frozen",
        "The amount exceeds the sender's balance",
        "The amount exceeds the sender's unfrozen balance",
        "Minting the amount would exceed the supply cap",
        "Unknown restriction code",
        "Unknown restriction code",
      ]);
    });

    it("names the first rule broken, in the order transfers check them, and agrees with canTransfer", async function () {
      const { token, tokenizer, alice, bob, carol, dave } = await loadFixture(controlsFixture);
      const detect = (from: string, to: string, amount: bigint) => token.detectTransferRestriction(from, to, amount);
      expect(await detect(alice.address, bob.address, TOKENS(1000))).to.equal(CODE.SUCCESS);
      expect(await detect(dave.address, alice.address, 1n)).to.equal(CODE.SENDER_NOT_WHITELISTED);
      expect(await detect(alice.address, dave.address, 1n)).to.equal(CODE.RECEIVER_NOT_WHITELISTED);
      expect(await detect(carol.address, bob.address, 1n)).to.equal(CODE.INSUFFICIENT_BALANCE);
      // Sender before receiver, eligibility before balance.
      await token.connect(tokenizer).setAddressFrozen(alice.address, true);
      expect(await detect(alice.address, dave.address, TOKENS(5000))).to.equal(CODE.SENDER_FROZEN);
      await expect(token.connect(alice).transfer(dave.address, TOKENS(5000))).to.be.revertedWithCustomError(token, "ERC7943CannotSend");
      expect(await detect(bob.address, dave.address, TOKENS(5000))).to.equal(CODE.RECEIVER_NOT_WHITELISTED);
      await expect(token.connect(bob).transfer(dave.address, TOKENS(5000))).to.be.revertedWithCustomError(token, "ERC7943CannotReceive");
      for (const [from, to, amount] of [
        [alice.address, bob.address, 1n],
        [bob.address, carol.address, TOKENS(500)],
        [bob.address, carol.address, TOKENS(501)],
      ] as const) {
        expect(await token.canTransfer(from, to, amount)).to.equal((await detect(from, to, amount)) === CODE.SUCCESS);
      }
    });

    it("from the zero address it checks an issuance: receiver and cap (net of reservations)", async function () {
      const { factory, tokenizer, alice, dave, usdc } = await loadFixture(controlsFixture);
      const { token, escrow } = await createTokenization(
        factory,
        tokenizer,
        tokenizationParams(await usdc.getAddress(), { supplyCap: TOKENS(2000), initialHolders: [alice.address], preMints: [TOKENS(1000)] }),
      );
      await setBalance(await escrow.getAddress(), 10n ** 18n);
      await token.connect(await ethers.getImpersonatedSigner(await escrow.getAddress())).reserveSupply(TOKENS(600));
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, alice.address, TOKENS(400))).to.equal(CODE.SUCCESS);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, alice.address, TOKENS(400) + 1n)).to.equal(CODE.SUPPLY_CAP_EXCEEDED);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, dave.address, 1n)).to.equal(CODE.RECEIVER_NOT_WHITELISTED);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, ethers.ZeroAddress, 1n)).to.equal(CODE.RECEIVER_NOT_WHITELISTED);
      // A burn checks the sender only.
      expect(await token.detectTransferRestriction(alice.address, ethers.ZeroAddress, TOKENS(1000))).to.equal(CODE.SUCCESS);
    });

    it("without a cap an issuance is bounded by uint248; the views never revert", async function () {
      const { token, alice, bob, carol } = await loadFixture(controlsFixture);
      const room = 2n ** 248n - 1n - TOKENS(1500);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, carol.address, room)).to.equal(CODE.SUCCESS);
      expect(await token.detectTransferRestriction(ethers.ZeroAddress, carol.address, room + 1n)).to.equal(CODE.SUPPLY_CAP_EXCEEDED);
      expect(await token.detectTransferRestriction(alice.address, bob.address, ethers.MaxUint256)).to.equal(CODE.INSUFFICIENT_BALANCE);
      expect(await token.canTransfer(ethers.ZeroAddress, carol.address, ethers.MaxUint256)).to.equal(false);
    });
  });

  describe("the dividend per share's bound", function () {
    it("a distribution that would take the dividend per share above uint248 reverts", async function () {
      const { factory, tokenizer, alice, usdc } = await loadFixture(controlsFixture);
      const { token } = await createTokenization(factory, tokenizer, tokenizationParams(await usdc.getAddress(), { initialHolders: [alice.address], preMints: [1n] }));
      await usdc.mint(tokenizer.address, 2n ** 121n);
      await usdc.connect(tokenizer).approve(token.target, ethers.MaxUint256);
      await expect(token.connect(tokenizer).distributeDividends(2n ** 120n))
        .to.be.revertedWithCustomError(token, "SafeCastOverflowedUintDowncast")
        .withArgs(248, 2n ** 248n);
      await token.connect(tokenizer).distributeDividends(2n ** 120n - 1n);
      await token.connect(tokenizer).pause();
      expect(await token.paused()).to.equal(true);
      expect(await token.withdrawableDividendOf(alice.address)).to.equal(2n ** 120n - 1n);
    });
  });

  describe("ERC-165", function () {
    it("declares ERC-7943 (Final 0x3edbb4c4 and the Last Call draft), ERC-1404, ERC-20, AccessControl (with default admin rules) and ERC-165", async function () {
      const { token } = await loadFixture(controlsFixture);
      const iface = token.interface;
      const final = interfaceId(iface, ["forcedTransfer", "setFrozenTokens", "canSend", "canReceive", "getFrozenTokens", "canTransfer"]);
      expect(final).to.equal("0x3edbb4c4");
      const lastCall = interfaceId(iface, ["forcedTransfer", "setFrozenTokens", "canTransact", "getFrozenTokens", "canTransfer"]);
      const erc1404 = interfaceId(iface, ["detectTransferRestriction", "messageForTransferRestriction"]);
      const erc20 = interfaceId(iface, ["totalSupply", "balanceOf", "transfer", "allowance", "approve", "transferFrom"]);
      const accessControl = interfaceId(iface, ["hasRole", "getRoleAdmin", "grantRole", "revokeRole", "renounceRole"]);
      const defaultAdminRules = interfaceId(iface, [
        "defaultAdmin",
        "pendingDefaultAdmin",
        "defaultAdminDelay",
        "pendingDefaultAdminDelay",
        "beginDefaultAdminTransfer",
        "cancelDefaultAdminTransfer",
        "acceptDefaultAdminTransfer",
        "changeDefaultAdminDelay",
        "rollbackDefaultAdminDelay",
        "defaultAdminDelayIncreaseWait",
      ]);
      for (const id of [final, lastCall, erc1404, erc20, accessControl, defaultAdminRules, "0x01ffc9a7"]) {
        expect(await token.supportsInterface(id), id).to.equal(true);
      }
      expect(await token.supportsInterface("0xffffffff")).to.equal(false);
      expect(await token.supportsInterface("0x12345678")).to.equal(false);
    });
  });
});
