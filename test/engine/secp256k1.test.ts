import { expect } from "chai";
import { Signature, Transaction, Wallet, hashMessage, recoverAddress } from "ethers";
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
    const delegation = { type: 4, chainId: 84532, nonce: 0, to: wallet.address, value: 0n, data: "0x", gasLimit: 100_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, authorizationList: [authorization] };
    expect(await signTransaction(wallet, delegation)).to.equal(await wallet.signTransaction(delegation));
  });

  it("signTransaction refuses a request from another address", async () => {
    const wallet = Wallet.createRandom();
    const request = { type: 2, chainId: 1, nonce: 0, to: wallet.address, gasLimit: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n };
    const error = await signTransaction(wallet, { ...request, from: Wallet.createRandom().address }).catch((e: Error) => e);
    expect(error).to.be.instanceOf(Error);
    expect(await signTransaction(wallet, { ...request, from: wallet.address })).to.equal(await wallet.signTransaction(request));
  });
});
