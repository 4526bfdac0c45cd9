import { expect } from "chai";
import { getBytes, hashMessage, Signature, Transaction, Wallet, type HDNodeWallet } from "ethers";
import { authorizeWithDigest, signTransactionWithDigest } from "../../service/signers/digest-signing";
import { KeySigner } from "../../service/signers/key-signer";
import { ethereumSignature } from "../../service/signers/token-signature";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A transaction of each form the service signs: plain EIP-1559 (relayed, settlement, filler) and EIP-7702 (delegation). */
function requests(wallet: Wallet | HDNodeWallet, i: number) {
  const plain = {
    type: 2,
    chainId: 84532,
    nonce: i,
    to: Wallet.createRandom().address,
    value: 0n,
    data: "0xabcdef" + i.toString(16).padStart(2, "0"),
    gasLimit: 100_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
  };
  const authorization = wallet.authorizeSync({
    address: Wallet.createRandom().address,
    nonce: i + 1,
    chainId: 84532,
  });
  const delegation = {
    type: 4,
    chainId: 84532,
    nonce: i,
    to: wallet.address,
    value: 0n,
    data: "0x",
    gasLimit: 100_000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
    authorizationList: [authorization],
  };
  return [plain, delegation];
}

describe("signers: one interface for keys in memory and keys on a token", () => {
  it("KeySigner gives ethers' bytes for transactions and EIP-7702 authorizations", async () => {
    for (let i = 0; i < 8; i++) {
      const wallet = Wallet.createRandom();
      const signer = new KeySigner(wallet.privateKey);
      expect(signer.address).to.equal(wallet.address);
      for (const request of requests(wallet, i))
        expect(await signer.signTransaction(request)).to.equal(await wallet.signTransaction(request));
      const fields = {
        address: Wallet.createRandom().address,
        nonce: i,
        chainId: 84532,
      };
      const ours = await signer.authorize(fields);
      const theirs = wallet.authorizeSync(fields);
      expect({ ...ours, signature: ours.signature.serialized }).to.deep.equal({
        ...theirs,
        signature: theirs.signature.serialized,
      });
    }
  });

  it("signing through a digest signer (the PKCS#11 path) gives the same bytes as ethers' wallet", async () => {
    for (let i = 0; i < 8; i++) {
      const wallet = Wallet.createRandom();
      const signDigest = async (digest: Uint8Array) => wallet.signingKey.sign(digest);
      for (const request of requests(wallet, i))
        expect(await signTransactionWithDigest(wallet.address, signDigest, request)).to.equal(
          await wallet.signTransaction(request),
        );
      const fields = {
        address: Wallet.createRandom().address,
        nonce: i,
        chainId: 0,
      };
      expect((await authorizeWithDigest(signDigest, fields)).signature.serialized).to.equal(
        wallet.authorizeSync(fields).signature.serialized,
      );
    }
    const wallet = Wallet.createRandom();
    const other = await signTransactionWithDigest(wallet.address, async (d) => wallet.signingKey.sign(d), {
      ...requests(wallet, 0)[0],
      from: Wallet.createRandom().address,
    }).catch((e: Error) => e);
    expect(other).to.be.instanceOf(Error);
  });

  it("a token's r ‖ s becomes the low-s signature with the parity that recovers the key's address, whichever half its s was in", () => {
    const parities = new Set<number>();
    for (let i = 0; i < 16; i++) {
      const wallet = Wallet.createRandom();
      const digest = Buffer.from(getBytes(hashMessage(`digest ${i}`)));
      const expected = wallet.signingKey.sign(digest);
      parities.add(expected.yParity);
      const high = (N - BigInt(expected.s)).toString(16).padStart(64, "0");
      for (const s of [expected.s.slice(2), high]) {
        const made = ethereumSignature(digest, Buffer.from(expected.r.slice(2) + s, "hex"), wallet.address);
        expect(made.serialized).to.equal(expected.serialized);
        expect(BigInt(made.s) <= N / 2n).to.equal(true);
      }
    }
    expect([...parities].sort()).to.deep.equal([0, 1]);
    const wallet = Wallet.createRandom();
    const digest = Buffer.from(getBytes(hashMessage("x")));
    const signature = Wallet.createRandom().signingKey.sign(digest);
    expect(() =>
      ethereumSignature(digest, Buffer.from(signature.r.slice(2) + signature.s.slice(2), "hex"), wallet.address),
    ).to.throw("recovers neither parity");
    expect(() => ethereumSignature(digest, Buffer.alloc(70), wallet.address)).to.throw("70-byte");
    // A transaction signed with the made signature is the wallet's.
    const request = requests(wallet, 3)[0];
    const tx = Transaction.from(request);
    tx.signature = ethereumSignature(
      Buffer.from(getBytes(tx.unsignedHash)),
      Buffer.from(
        getBytes(
          Signature.from(wallet.signingKey.sign(tx.unsignedHash)).r +
            Signature.from(wallet.signingKey.sign(tx.unsignedHash)).s.slice(2),
        ),
      ),
      wallet.address,
    );
    expect(tx.from).to.equal(wallet.address);
  });
});
