import { expect } from "chai";
import { Signature, Transaction, Wallet, hashMessage, recoverAddress } from "ethers";
import { randomBytes } from "node:crypto";
import { eip1559Fields } from "../../service/crypto/eip1559";
import { nativeRecovery, recoverSigner, signTransaction } from "../../service/crypto/secp256k1";

describe("engine: secp256k1 recovery and signing", () => {
  it("uses the native secp256k1 build on linux-x64 (the platform CI runs on)", function () {
    if (`${process.platform}-${process.arch}` !== "linux-x64") this.skip();
    expect(nativeRecovery).to.equal(true);
  });

  it("recovers the same address as ethers for signatures of either parity", () => {
    const parities = new Set<number>();
    for (let i = 0; i < 24; i++) {
      const wallet = Wallet.createRandom();
      const digest = hashMessage(`message ${i}`);
      const signature = wallet.signingKey.sign(digest);
      parities.add(signature.yParity);
      expect(recoverSigner(digest, signature)).to.equal(wallet.address);
      expect(recoverSigner(digest, signature.serialized)).to.equal(recoverAddress(digest, signature));
    }
    expect([...parities].sort()).to.deep.equal([0, 1]);
  });

  it("a flipped parity or another digest recovers someone else; an impossible signature throws", () => {
    const wallet = Wallet.createRandom();
    const digest = hashMessage("pay 1 USDC");
    const signature = wallet.signingKey.sign(digest);
    const flipped = Signature.from({ r: signature.r, s: signature.s, yParity: signature.yParity === 0 ? 1 : 0 });
    expect(recoverSigner(digest, flipped)).to.not.equal(wallet.address);
    expect(recoverSigner(hashMessage("pay 2 USDC"), signature)).to.not.equal(wallet.address);
    const zeroR = { r: "0x" + "00".repeat(32), s: signature.s, yParity: 0 as const };
    expect(() => recoverSigner(digest, zeroR)).to.throw();
  });

  it("signTransaction gives the bytes ethers' wallet gives (EIP-1559 and EIP-7702 transactions, either parity)", async () => {
    const parities = new Set<number>();
    for (let i = 0; i < 16; i++) {
      const wallet = Wallet.createRandom();
      const request = {
        type: 2,
        chainId: 84532,
        nonce: i,
        to: Wallet.createRandom().address,
        value: "0x00",
        data: "0xabcdef" + i.toString(16).padStart(2, "0"),
        gasLimit: "0x0189dd",
        maxFeePerGas: "2000000000",
        maxPriorityFeePerGas: "1000000",
      };
      const raw = await signTransaction(wallet, request);
      expect(raw).to.equal(await wallet.signTransaction(request));
      const tx = Transaction.from(raw);
      expect(tx.from).to.equal(wallet.address);
      parities.add(tx.signature!.yParity);
    }
    expect([...parities].sort()).to.deep.equal([0, 1]);
    const wallet = Wallet.createRandom();
    const authorization = wallet.authorizeSync({ address: Wallet.createRandom().address, nonce: 1, chainId: 84532 });
    const delegation = {
      type: 4,
      chainId: 84532,
      nonce: 0,
      to: wallet.address,
      value: 0n,
      data: "0x",
      gasLimit: 100_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
      authorizationList: [authorization],
    };
    expect(await signTransaction(wallet, delegation)).to.equal(await wallet.signTransaction(delegation));
  });

  it("a plain EIP-1559 request is serialized without ethers, to ethers' bytes: every number form, zeros, 2^256 - 1, data of 0 to 300 bytes", async () => {
    const wallet = Wallet.createRandom();
    const to = Wallet.createRandom().address;
    const forms = [
      (n: bigint) => n,
      (n: bigint) => n.toString(),
      (n: bigint) => "0x" + n.toString(16),
      (n: bigint) => (n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n),
    ];
    const numbers = [0n, 1n, 127n, 128n, 255n, 256n, 84532n, 2n ** 53n - 1n, 10n ** 30n, 2n ** 256n - 1n];
    const pick = <T>(list: T[], i: number) => list[i % list.length];
    for (let i = 0; i < 60; i++) {
      const form = pick(forms, i);
      const request = {
        type: 2,
        chainId: form(pick([1n, 84532n, 11155111n, 2n ** 64n], i)),
        nonce: pick([0, 1, 127, 128, 70_000, Number.MAX_SAFE_INTEGER], i),
        to: i % 3 ? to : to.toLowerCase(),
        value: form(pick(numbers, i + 3)),
        data: "0x" + randomBytes(pick([0, 1, 2, 55, 56, 255, 256, 300], i)).toString("hex"),
        gasLimit: form(pick(numbers, i + 1)),
        maxFeePerGas: form(pick(numbers, i + 2)),
        maxPriorityFeePerGas: form(pick(numbers, i) < pick(numbers, i + 2) ? pick(numbers, i) : pick(numbers, i + 2)),
      };
      expect(eip1559Fields(request), `request ${i}`).to.not.equal(undefined);
      expect(await signTransaction(wallet, request), `request ${i}`).to.equal(await wallet.signTransaction(request));
    }
    // A one-byte data below 0x80 is its own RLP encoding.
    const single = {
      type: 2,
      chainId: 1,
      nonce: 0,
      to,
      value: 0n,
      data: "0x05",
      gasLimit: 21_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
    };
    expect(await signTransaction(wallet, single)).to.equal(await wallet.signTransaction(single));
  });

  it("anything but a plain EIP-1559 request is left to ethers (same bytes, or the same refusal)", async () => {
    const wallet = Wallet.createRandom();
    const plain = {
      type: 2,
      chainId: 1,
      nonce: 0,
      to: wallet.address,
      gasLimit: 21_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
    };
    const others: Record<string, unknown>[] = [
      { ...plain, accessList: [{ address: wallet.address, storageKeys: ["0x" + "11".repeat(32)] }] },
      { ...plain, type: undefined },
      { ...plain, value: "1.5" },
      { ...plain, gasLimit: 21_000.5 },
      { ...plain, maxFeePerGas: -2n },
      { ...plain, to: undefined },
      { ...plain, maxPriorityFeePerGas: 3n },
    ];
    for (const other of others) {
      expect(
        eip1559Fields(other),
        JSON.stringify(other, (_, v) => (typeof v === "bigint" ? v.toString() : v)),
      ).to.equal(undefined);
      const ours = await signTransaction(wallet, other).catch((e: Error) => e);
      const theirs = await wallet.signTransaction(other).catch((e: Error) => e);
      if (theirs instanceof Error) expect(ours).to.be.instanceOf(Error);
      else expect(ours).to.equal(theirs);
    }
    // A wrong checksum in the recipient is refused, as ethers refuses it.
    const badChecksum = wallet.address.slice(0, 2) + wallet.address.slice(2).replace(/[a-f]/, (c) => c.toUpperCase());
    if (badChecksum !== wallet.address) expect(() => eip1559Fields({ ...plain, to: badChecksum })).to.throw();
  });

  it("signTransaction refuses a request from another address", async () => {
    const wallet = Wallet.createRandom();
    const request = {
      type: 2,
      chainId: 1,
      nonce: 0,
      to: wallet.address,
      gasLimit: 21_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
    };
    const error = await signTransaction(wallet, { ...request, from: Wallet.createRandom().address }).catch(
      (e: Error) => e,
    );
    expect(error).to.be.instanceOf(Error);
    expect(await signTransaction(wallet, { ...request, from: wallet.address })).to.equal(
      await wallet.signTransaction(request),
    );
  });
});
