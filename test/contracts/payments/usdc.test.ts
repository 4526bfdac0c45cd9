import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { HardhatEthersSigner } from "@nomicfoundation/hardhat-ethers/signers";
import type { TypedDataDomain, TypedDataField } from "ethers";
import type { ERC1271WalletMock, USDC } from "../../../typechain-types";

const { ethers } = hre;

const TRANSFER_VRS = "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)";
const TRANSFER_BYTES = "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)";
const RECEIVE_VRS = "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)";
const RECEIVE_BYTES = "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)";
const CANCEL_VRS = "cancelAuthorization(address,bytes32,uint8,bytes32,bytes32)";
const CANCEL_BYTES = "cancelAuthorization(address,bytes32,bytes)";

const AUTHORIZATION_FIELDS: TypedDataField[] = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
];
const TRANSFER_TYPES = { TransferWithAuthorization: AUTHORIZATION_FIELDS };
const RECEIVE_TYPES = { ReceiveWithAuthorization: AUTHORIZATION_FIELDS };
const CANCEL_TYPES = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
};

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const ONE_USDC = 10n ** 6n;

interface Authorization {
  from: string;
  to: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: string;
}

/** Deterministic stand-ins for the random 32-byte nonces real clients generate. */
const nonce = (label: string): string => ethers.id(`nonce:${label}`);

const args = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;

describe("USDC", () => {
  async function deployFixture() {
    const [owner, alice, bob, relayer, mallory, walletKey] = await ethers.getSigners();
    const usdc: USDC = await ethers.deployContract("USDC");
    const wallet: ERC1271WalletMock = await ethers.deployContract("ERC1271WalletMock", [walletKey.address]);
    await usdc.mint(alice.address, 1_000n * ONE_USDC);
    await usdc.mint(await wallet.getAddress(), 1_000n * ONE_USDC);
    const domain: TypedDataDomain = {
      name: "USDC",
      version: "2",
      chainId: (await ethers.provider.getNetwork()).chainId,
      verifyingContract: await usdc.getAddress(),
    };
    return { usdc, wallet, domain, owner, alice, bob, relayer, mallory, walletKey };
  }

  /** An authorization from `from` to `to` for 10 USDC, valid from now for an hour. */
  async function authorization(from: string, to: string, overrides: Partial<Authorization> = {}): Promise<Authorization> {
    const validBefore = BigInt(await time.latest()) + 3600n;
    return { from, to, value: 10n * ONE_USDC, validAfter: 0n, validBefore, nonce: nonce("default"), ...overrides };
  }

  const signTransfer = (signer: HardhatEthersSigner, domain: TypedDataDomain, a: Authorization) =>
    signer.signTypedData(domain, TRANSFER_TYPES, a);
  const signReceive = (signer: HardhatEthersSigner, domain: TypedDataDomain, a: Authorization) =>
    signer.signTypedData(domain, RECEIVE_TYPES, a);
  const signCancel = (signer: HardhatEthersSigner, domain: TypedDataDomain, authorizer: string, n: string) =>
    signer.signTypedData(domain, CANCEL_TYPES, { authorizer, nonce: n });
  const vrs = (signature: string) => {
    const { v, r, s } = ethers.Signature.from(signature);
    return [v, r, s] as const;
  };

  describe("deployment", () => {
    it("has the USDC metadata, 6 decimals and the deployer as owner", async () => {
      const { usdc, owner } = await loadFixture(deployFixture);
      expect(await usdc.name()).to.equal("USDC");
      expect(await usdc.symbol()).to.equal("USDC");
      expect(await usdc.decimals()).to.equal(6n);
      expect(await usdc.version()).to.equal("2");
      expect(await usdc.owner()).to.equal(owner.address);
    });

    it("exposes the EIP-712 domain x402 clients sign with", async () => {
      const { usdc, domain } = await loadFixture(deployFixture);
      expect(await usdc.DOMAIN_SEPARATOR()).to.equal(ethers.TypedDataEncoder.hashDomain(domain));
      const [fields, name, version, chainId, verifyingContract, salt, extensions] = await usdc.eip712Domain();
      expect(fields).to.equal("0x0f");
      expect([name, version, chainId, verifyingContract]).to.deep.equal([
        domain.name,
        domain.version,
        domain.chainId,
        domain.verifyingContract,
      ]);
      expect(salt).to.equal(ethers.ZeroHash);
      expect(extensions).to.deep.equal([]);
    });
  });

  describe("mint", () => {
    it("lets the owner mint to any account", async () => {
      const { usdc, bob } = await loadFixture(deployFixture);
      const amount = 250n * ONE_USDC;
      const tx = usdc.mint(bob.address, amount);
      await expect(tx).to.emit(usdc, "Transfer").withArgs(ethers.ZeroAddress, bob.address, amount);
      await expect(tx).to.changeTokenBalance(usdc, bob, amount);
      expect(await usdc.totalSupply()).to.equal(2_250n * ONE_USDC);
    });

    it("refuses a non-owner", async () => {
      const { usdc, alice } = await loadFixture(deployFixture);
      await expect(usdc.connect(alice).mint(alice.address, 1n))
        .to.be.revertedWithCustomError(usdc, "OwnableUnauthorizedAccount")
        .withArgs(alice.address);
    });

    it("refuses the zero address", async () => {
      const { usdc } = await loadFixture(deployFixture);
      await expect(usdc.mint(ethers.ZeroAddress, 1n))
        .to.be.revertedWithCustomError(usdc, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });
  });

  describe("transferWithAuthorization (v, r, s)", () => {
    it("moves the funds when a relayer submits the payer's signature", async () => {
      const { usdc, domain, alice, bob, relayer } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, domain, auth);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(false);

      const tx = usdc.connect(relayer)[TRANSFER_VRS](...args(auth), ...vrs(sig));
      await expect(tx).to.changeTokenBalances(usdc, [alice, bob, relayer], [-auth.value, auth.value, 0n]);
      await expect(tx)
        .to.emit(usdc, "AuthorizationUsed")
        .withArgs(alice.address, auth.nonce)
        .and.to.emit(usdc, "Transfer")
        .withArgs(alice.address, bob.address, auth.value);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(true);
    });

    it("accepts random nonces in any order", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const first = await authorization(alice.address, bob.address, { nonce: nonce("a") });
      const second = await authorization(alice.address, bob.address, { nonce: nonce("b"), value: ONE_USDC });
      const firstSig = await signTransfer(alice, domain, first);
      const secondSig = await signTransfer(alice, domain, second);

      await usdc[TRANSFER_VRS](...args(second), ...vrs(secondSig));
      await usdc[TRANSFER_VRS](...args(first), ...vrs(firstSig));
      expect(await usdc.balanceOf(bob.address)).to.equal(11n * ONE_USDC);
      expect(await usdc.authorizationState(alice.address, first.nonce)).to.equal(true);
      expect(await usdc.authorizationState(alice.address, second.nonce)).to.equal(true);
    });

    it("refuses a replay", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, domain, auth);
      await usdc[TRANSFER_VRS](...args(auth), ...vrs(sig));
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("refuses a signature by someone other than `from`", async () => {
      const { usdc, domain, alice, bob, mallory } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, mallory.address);
      const sig = await signTransfer(mallory, domain, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
      expect(await usdc.balanceOf(bob.address)).to.equal(0n);
    });

    it("refuses a tampered message", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, domain, auth);
      const tampered = { ...auth, value: auth.value + 1n };
      await expect(usdc[TRANSFER_VRS](...args(tampered), ...vrs(sig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });

    it("refuses a signature made for another EIP-712 domain version", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, { ...domain, version: "1" }, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });

    it("refuses an expired authorization (validBefore is exclusive)", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const validBefore = BigInt(await time.latest()) + 100n;
      const auth = await authorization(alice.address, bob.address, { validBefore });
      const sig = await signTransfer(alice, domain, auth);
      await time.setNextBlockTimestamp(validBefore);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(auth.validAfter, auth.validBefore);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(false);
    });

    it("refuses a not-yet-valid authorization, then accepts it once validAfter has passed", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const validAfter = BigInt(await time.latest()) + 600n;
      const auth = await authorization(alice.address, bob.address, { validAfter, validBefore: validAfter + 3600n });
      const sig = await signTransfer(alice, domain, auth);

      await time.setNextBlockTimestamp(validAfter);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(auth.validAfter, auth.validBefore);

      await time.setNextBlockTimestamp(validAfter + 1n);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig))).to.changeTokenBalance(usdc, bob, auth.value);
    });

    it("refuses a transfer above the balance without consuming the nonce", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const balance = await usdc.balanceOf(alice.address);
      const auth = await authorization(alice.address, bob.address, { value: balance + 1n });
      const sig = await signTransfer(alice, domain, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC20InsufficientBalance")
        .withArgs(alice.address, balance, auth.value);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(false);
    });

    it("refuses a transfer to the zero address", async () => {
      const { usdc, domain, alice } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, ethers.ZeroAddress);
      const sig = await signTransfer(alice, domain, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts with OZ ECDSA errors on a malformed v or a high s", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const [v, r, s] = vrs(await signTransfer(alice, domain, auth));
      await expect(usdc[TRANSFER_VRS](...args(auth), 0, r, s)).to.be.revertedWithCustomError(
        usdc,
        "ECDSAInvalidSignature",
      );
      const highS = ethers.toBeHex(SECP256K1_N - BigInt(s), 32);
      await expect(usdc[TRANSFER_VRS](...args(auth), v === 27 ? 28 : 27, r, highS))
        .to.be.revertedWithCustomError(usdc, "ECDSAInvalidSignatureS")
        .withArgs(highS);
    });

    it("refuses a contract wallet (no ERC-1271 on the v, r, s form)", async () => {
      const { usdc, wallet, domain, bob, walletKey } = await loadFixture(deployFixture);
      const auth = await authorization(await wallet.getAddress(), bob.address);
      const sig = await signTransfer(walletKey, domain, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(sig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });
  });

  describe("transferWithAuthorization (bytes signature)", () => {
    it("moves the funds with a 65-byte EOA signature", async () => {
      const { usdc, domain, alice, bob, relayer } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address, { nonce: nonce("bytes") });
      const sig = await signTransfer(alice, domain, auth);

      const tx = usdc.connect(relayer)[TRANSFER_BYTES](...args(auth), sig);
      await expect(tx).to.changeTokenBalances(usdc, [alice, bob], [-auth.value, auth.value]);
      await expect(tx)
        .to.emit(usdc, "AuthorizationUsed")
        .withArgs(alice.address, auth.nonce)
        .and.to.emit(usdc, "Transfer")
        .withArgs(alice.address, bob.address, auth.value);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(true);
    });

    it("shares the nonce space with the v, r, s form (no cross-overload replay)", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, domain, auth);
      await usdc[TRANSFER_VRS](...args(auth), ...vrs(sig));
      await expect(usdc[TRANSFER_BYTES](...args(auth), sig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("refuses a replay", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signTransfer(alice, domain, auth);
      await usdc[TRANSFER_BYTES](...args(auth), sig);
      await expect(usdc[TRANSFER_BYTES](...args(auth), sig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("refuses a wrong signer and a malformed signature", async () => {
      const { usdc, domain, alice, mallory } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, mallory.address);
      const sig = await signTransfer(mallory, domain, auth);
      await expect(usdc[TRANSFER_BYTES](...args(auth), sig)).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
      await expect(usdc[TRANSFER_BYTES](...args(auth), "0x1234")).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });

    it("refuses expired and not-yet-valid authorizations", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const now = BigInt(await time.latest());
      const expired = await authorization(alice.address, bob.address, { nonce: nonce("x"), validBefore: now });
      const early = await authorization(alice.address, bob.address, {
        nonce: nonce("y"),
        validAfter: now + 600n,
        validBefore: now + 1200n,
      });
      await expect(usdc[TRANSFER_BYTES](...args(expired), await signTransfer(alice, domain, expired)))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(expired.validAfter, expired.validBefore);
      await expect(usdc[TRANSFER_BYTES](...args(early), await signTransfer(alice, domain, early)))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(early.validAfter, early.validBefore);
    });

    it("accepts an ERC-1271 contract wallet's signature", async () => {
      const { usdc, wallet, domain, bob, walletKey } = await loadFixture(deployFixture);
      const walletAddress = await wallet.getAddress();
      const auth = await authorization(walletAddress, bob.address);
      const sig = await signTransfer(walletKey, domain, auth);
      const tx = usdc[TRANSFER_BYTES](...args(auth), sig);
      await expect(tx).to.emit(usdc, "AuthorizationUsed").withArgs(walletAddress, auth.nonce);
      await expect(tx).to.changeTokenBalances(usdc, [walletAddress, bob.address], [-auth.value, auth.value]);
    });

    it("refuses a signature the ERC-1271 wallet rejects", async () => {
      const { usdc, wallet, domain, bob, mallory } = await loadFixture(deployFixture);
      const auth = await authorization(await wallet.getAddress(), bob.address);
      const sig = await signTransfer(mallory, domain, auth);
      await expect(usdc[TRANSFER_BYTES](...args(auth), sig)).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });
  });

  describe("receiveWithAuthorization", () => {
    it("(v, r, s) lets the payee pull the funds", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signReceive(alice, domain, auth);
      const tx = usdc.connect(bob)[RECEIVE_VRS](...args(auth), ...vrs(sig));
      await expect(tx).to.changeTokenBalances(usdc, [alice, bob], [-auth.value, auth.value]);
      await expect(tx)
        .to.emit(usdc, "AuthorizationUsed")
        .withArgs(alice.address, auth.nonce)
        .and.to.emit(usdc, "Transfer")
        .withArgs(alice.address, bob.address, auth.value);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(true);
    });

    it("(v, r, s) refuses a caller other than the payee", async () => {
      const { usdc, domain, alice, bob, relayer } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signReceive(alice, domain, auth);
      await expect(usdc.connect(relayer)[RECEIVE_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC20InvalidReceiver")
        .withArgs(bob.address);
    });

    it("(v, r, s) refuses a TransferWithAuthorization signature and a replay", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const transferSig = await signTransfer(alice, domain, auth);
      await expect(usdc.connect(bob)[RECEIVE_VRS](...args(auth), ...vrs(transferSig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
      const sig = await signReceive(alice, domain, auth);
      await usdc.connect(bob)[RECEIVE_VRS](...args(auth), ...vrs(sig));
      await expect(usdc.connect(bob)[RECEIVE_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("(v, r, s) refuses an expired authorization", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address, { validBefore: BigInt(await time.latest()) });
      const sig = await signReceive(alice, domain, auth);
      await expect(usdc.connect(bob)[RECEIVE_VRS](...args(auth), ...vrs(sig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(auth.validAfter, auth.validBefore);
    });

    it("(bytes) lets the payee pull the funds", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signReceive(alice, domain, auth);
      const tx = usdc.connect(bob)[RECEIVE_BYTES](...args(auth), sig);
      await expect(tx).to.changeTokenBalances(usdc, [alice, bob], [-auth.value, auth.value]);
      await expect(tx).to.emit(usdc, "AuthorizationUsed").withArgs(alice.address, auth.nonce);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(true);
    });

    it("(bytes) refuses a caller other than the payee", async () => {
      const { usdc, domain, alice, bob, relayer } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const sig = await signReceive(alice, domain, auth);
      await expect(usdc.connect(relayer)[RECEIVE_BYTES](...args(auth), sig))
        .to.be.revertedWithCustomError(usdc, "ERC20InvalidReceiver")
        .withArgs(bob.address);
    });

    it("(bytes) refuses a wrong signer, a TransferWithAuthorization signature and a replay", async () => {
      const { usdc, domain, alice, bob, mallory } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      await expect(
        usdc.connect(bob)[RECEIVE_BYTES](...args(auth), await signReceive(mallory, domain, auth)),
      ).to.be.revertedWithCustomError(usdc, "ERC3009InvalidSignature");
      await expect(
        usdc.connect(bob)[RECEIVE_BYTES](...args(auth), await signTransfer(alice, domain, auth)),
      ).to.be.revertedWithCustomError(usdc, "ERC3009InvalidSignature");

      const sig = await signReceive(alice, domain, auth);
      await usdc.connect(bob)[RECEIVE_BYTES](...args(auth), sig);
      await expect(usdc.connect(bob)[RECEIVE_BYTES](...args(auth), sig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("(bytes) refuses a not-yet-valid authorization", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const validAfter = BigInt(await time.latest()) + 600n;
      const auth = await authorization(alice.address, bob.address, { validAfter, validBefore: validAfter + 600n });
      const sig = await signReceive(alice, domain, auth);
      await expect(usdc.connect(bob)[RECEIVE_BYTES](...args(auth), sig))
        .to.be.revertedWithCustomError(usdc, "ERC3009InvalidAuthorizationTime")
        .withArgs(auth.validAfter, auth.validBefore);
    });

    it("(bytes) accepts an ERC-1271 contract wallet as payer", async () => {
      const { usdc, wallet, domain, bob, walletKey } = await loadFixture(deployFixture);
      const walletAddress = await wallet.getAddress();
      const auth = await authorization(walletAddress, bob.address);
      const sig = await signReceive(walletKey, domain, auth);
      await expect(usdc.connect(bob)[RECEIVE_BYTES](...args(auth), sig)).to.changeTokenBalances(
        usdc,
        [walletAddress, bob.address],
        [-auth.value, auth.value],
      );
      expect(await usdc.authorizationState(walletAddress, auth.nonce)).to.equal(true);
    });
  });

  describe("cancelAuthorization", () => {
    it("(v, r, s) cancels a nonce so it can no longer be used or cancelled again", async () => {
      const { usdc, domain, alice, bob, relayer } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      const cancelSig = await signCancel(alice, domain, alice.address, auth.nonce);

      await expect(usdc.connect(relayer)[CANCEL_VRS](alice.address, auth.nonce, ...vrs(cancelSig)))
        .to.emit(usdc, "AuthorizationCanceled")
        .withArgs(alice.address, auth.nonce);
      expect(await usdc.authorizationState(alice.address, auth.nonce)).to.equal(true);

      const transferSig = await signTransfer(alice, domain, auth);
      await expect(usdc[TRANSFER_VRS](...args(auth), ...vrs(transferSig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
      await expect(usdc[TRANSFER_BYTES](...args(auth), transferSig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
      await expect(usdc[CANCEL_VRS](alice.address, auth.nonce, ...vrs(cancelSig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
      expect(await usdc.balanceOf(bob.address)).to.equal(0n);
    });

    it("(v, r, s) refuses to cancel an authorization that was already used", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const auth = await authorization(alice.address, bob.address);
      await usdc[TRANSFER_VRS](...args(auth), ...vrs(await signTransfer(alice, domain, auth)));
      const cancelSig = await signCancel(alice, domain, alice.address, auth.nonce);
      await expect(usdc[CANCEL_VRS](alice.address, auth.nonce, ...vrs(cancelSig)))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, auth.nonce);
    });

    it("(v, r, s) refuses a wrong signer", async () => {
      const { usdc, domain, alice, mallory } = await loadFixture(deployFixture);
      const n = nonce("victim");
      const sig = await signCancel(mallory, domain, alice.address, n);
      await expect(usdc[CANCEL_VRS](alice.address, n, ...vrs(sig))).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
      expect(await usdc.authorizationState(alice.address, n)).to.equal(false);
    });

    it("(bytes) cancels a nonce without affecting other nonces", async () => {
      const { usdc, domain, alice, bob } = await loadFixture(deployFixture);
      const cancelled = await authorization(alice.address, bob.address, { nonce: nonce("cancelled") });
      const kept = await authorization(alice.address, bob.address, { nonce: nonce("kept") });
      const cancelSig = await signCancel(alice, domain, alice.address, cancelled.nonce);

      await expect(usdc[CANCEL_BYTES](alice.address, cancelled.nonce, cancelSig))
        .to.emit(usdc, "AuthorizationCanceled")
        .withArgs(alice.address, cancelled.nonce);
      expect(await usdc.authorizationState(alice.address, cancelled.nonce)).to.equal(true);
      expect(await usdc.authorizationState(alice.address, kept.nonce)).to.equal(false);

      const receiveSig = await signReceive(alice, domain, cancelled);
      await expect(usdc.connect(bob)[RECEIVE_BYTES](...args(cancelled), receiveSig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, cancelled.nonce);
      await expect(usdc[CANCEL_BYTES](alice.address, cancelled.nonce, cancelSig))
        .to.be.revertedWithCustomError(usdc, "ERC3009UsedAuthorization")
        .withArgs(alice.address, cancelled.nonce);

      await expect(usdc[TRANSFER_BYTES](...args(kept), await signTransfer(alice, domain, kept))).to.changeTokenBalance(
        usdc,
        bob,
        kept.value,
      );
    });

    it("(bytes) refuses a wrong signer and a malformed signature", async () => {
      const { usdc, domain, alice, mallory } = await loadFixture(deployFixture);
      const n = nonce("victim");
      await expect(
        usdc[CANCEL_BYTES](alice.address, n, await signCancel(mallory, domain, alice.address, n)),
      ).to.be.revertedWithCustomError(usdc, "ERC3009InvalidSignature");
      await expect(usdc[CANCEL_BYTES](alice.address, n, "0x")).to.be.revertedWithCustomError(
        usdc,
        "ERC3009InvalidSignature",
      );
    });

    it("(bytes) lets an ERC-1271 contract wallet cancel", async () => {
      const { usdc, wallet, domain, walletKey, mallory } = await loadFixture(deployFixture);
      const walletAddress = await wallet.getAddress();
      const n = nonce("wallet");
      await expect(
        usdc[CANCEL_BYTES](walletAddress, n, await signCancel(mallory, domain, walletAddress, n)),
      ).to.be.revertedWithCustomError(usdc, "ERC3009InvalidSignature");
      await expect(usdc[CANCEL_BYTES](walletAddress, n, await signCancel(walletKey, domain, walletAddress, n)))
        .to.emit(usdc, "AuthorizationCanceled")
        .withArgs(walletAddress, n);
      expect(await usdc.authorizationState(walletAddress, n)).to.equal(true);
    });
  });
});
