import { expect } from "chai";
import { Signature, Wallet, hashMessage, recoverAddress } from "ethers";
import { nativeRecovery, recoverSigner } from "../../service/crypto/recover";

describe("engine: signer recovery", () => {
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
});
