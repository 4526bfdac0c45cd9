import { expect } from "chai";
import { concat, decodeRlp, encodeRlp, keccak256, Transaction, Wallet, type TransactionRequest } from "ethers";
import { randomBytes } from "node:crypto";
import { decodeSigned, serializeSigned } from "../../service/crypto/eip1559";
import { recoverNatively } from "../../service/crypto/secp256k1";
import { verifySignedTransactions } from "../../service/engine/send";
import type { Batch, UnsignedTransaction } from "../../service/model/batch";

/** A prepared one-transaction batch as the store holds it, for `unsigned`. */
function batchOf(unsigned: UnsignedTransaction): Batch {
  return { transactions: [{ index: 0, unsigned }] } as unknown as Batch;
}

function unsignedFor(from: string, i: number): UnsignedTransaction {
  return {
    from,
    to: Wallet.createRandom().address,
    value: i % 2 ? "0x00" : "0x" + (10n ** 18n + BigInt(i)).toString(16),
    nonce: [0, 1, 127, 128, 70_000][i % 5],
    chainId: [11155111, 84532, 1][i % 3],
    data: "0x" + randomBytes([0, 1, 4, 55, 56, 300][i % 6]).toString("hex"),
    type: 2,
    maxPriorityFeePerGas: String(1_000_000 + i),
    maxFeePerGas: String(2_000_000_000 + i),
    gasLimit: "0x" + (21_000 + i).toString(16),
  };
}

const requestOf = (u: UnsignedTransaction): TransactionRequest => ({ ...u, from: undefined });

/** The signed bytes with RLP field `index` replaced (the signature stays: it then signs other fields or none). */
function withField(raw: string, index: number, value: string): string {
  const fields = decodeRlp("0x" + raw.slice(4)) as string[];
  fields[index] = value;
  return concat(["0x02", encodeRlp(fields)]);
}

describe("engine: signed transactions checked against their prepared twins (engine/send.ts, crypto/eip1559.ts)", () => {
  const wallet = Wallet.createRandom();

  it("decodeSigned reads ethers' own signed bytes to ethers' fields, and serializes them back to the same bytes", async () => {
    const parities = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const raw = await wallet.signTransaction(requestOf(unsignedFor(wallet.address, i)));
      const tx = Transaction.from(raw);
      const decoded = decodeSigned(raw)!;
      expect(decoded, `transaction ${i}`).to.not.equal(undefined);
      const { fields } = decoded;
      expect([fields.chainId, fields.nonce, fields.to, fields.value, fields.gasLimit]).to.deep.equal([
        tx.chainId,
        BigInt(tx.nonce),
        tx.to,
        tx.value,
        tx.gasLimit,
      ]);
      expect([fields.maxFeePerGas, fields.maxPriorityFeePerGas]).to.deep.equal([
        tx.maxFeePerGas,
        tx.maxPriorityFeePerGas,
      ]);
      expect("0x" + fields.data.toString("hex")).to.equal(tx.data);
      expect("0x" + decoded.rs.toString("hex")).to.equal(tx.signature!.r + tx.signature!.s.slice(2));
      expect(decoded.yParity).to.equal(tx.signature!.yParity);
      expect(serializeSigned(fields, decoded.rs, decoded.yParity)).to.equal(raw);
      expect(recoverNatively(Buffer.from(tx.unsignedHash.slice(2), "hex"), decoded.rs, decoded.yParity)).to.equal(
        wallet.address.toLowerCase(),
      );
      parities.add(decoded.yParity);
    }
    expect([...parities].sort()).to.deep.equal([0, 1]);
  });

  it("decodeSigned leaves to ethers what is not a plain type-2 transaction in its canonical encoding", async () => {
    const u = unsignedFor(wallet.address, 2);
    const raw = await wallet.signTransaction(requestOf(u));
    const legacy = await wallet.signTransaction({
      ...requestOf(u),
      type: 0,
      gasPrice: 1n,
      maxFeePerGas: undefined,
      maxPriorityFeePerGas: undefined,
    });
    const withAccessList = await wallet.signTransaction({
      ...requestOf(u),
      accessList: [{ address: u.to, storageKeys: [] }],
    });
    const longLength = "0x02f9" + (raw.length / 2 - 3).toString(16).padStart(4, "0") + raw.slice(6);
    for (const [label, bytes] of [
      ["value 0 as a zero byte", withField(raw, 6, "0x00")],
      ["a nonce with a leading zero", withField(raw, 1, "0x0080")],
      ["a parity of 0x00", withField(raw, 9, "0x00")],
      ["a parity of 2", withField(raw, 9, "0x02")],
      ["a recipient of 19 bytes", withField(raw, 5, "0x" + "11".repeat(19))],
      ["no recipient", withField(raw, 5, "0x")],
      ["a list's length in the long form", longLength],
      ["a byte after the list", raw + "00"],
      ["one byte short", raw.slice(0, -2)],
      ["an odd number of digits", raw + "0"],
      ["not hex", raw.slice(0, -2) + "zz"],
      ["type 1", "0x01" + raw.slice(4)],
      ["legacy", legacy],
      ["an access list", withAccessList],
      ["nothing", "0x"],
    ] as const)
      expect(decodeSigned(bytes), label).to.equal(undefined);
    // Upper-case digits are the same bytes.
    expect(decodeSigned("0x" + raw.slice(2).toUpperCase())).to.not.equal(undefined);
  });

  it("recoverNatively refuses an s in the upper half and a signature no key made, as ethers does", async () => {
    const tx = Transaction.from(await wallet.signTransaction(requestOf(unsignedFor(wallet.address, 3))));
    const digest = Buffer.from(tx.unsignedHash.slice(2), "hex");
    const rs = Buffer.from(tx.signature!.r.slice(2) + tx.signature!.s.slice(2), "hex");
    const high = Buffer.from(rs);
    high[32] |= 0x80;
    expect(recoverNatively(digest, high, 0)).to.equal(undefined);
    expect(recoverNatively(digest, Buffer.concat([Buffer.alloc(32), rs.subarray(32)]), 0)).to.equal(undefined);
  });

  it("verifySignedTransactions accepts the prepared transaction (re-priced within the bound) and names the first field that differs otherwise", async () => {
    const u = unsignedFor(wallet.address, 1); // value 0: a zero byte instead of the empty string is the same value
    const sign = (over: Partial<TransactionRequest>, by = wallet) => by.signTransaction({ ...requestOf(u), ...over });
    const raw = await sign({});
    expect(verifySignedTransactions(batchOf(u), [raw])).to.deep.equal([
      { index: 0, signedRaw: raw, txHash: keccak256(raw) },
    ]);
    const repriced = await sign({ maxFeePerGas: BigInt(u.maxFeePerGas) * 3n });
    expect(verifySignedTransactions(batchOf(u), [repriced])[0].txHash).to.equal(keccak256(repriced));
    const refusals: [string, Promise<string>, RegExp][] = [
      ["chainId", sign({ chainId: 5 }), /chainId does not match/],
      ["nonce", sign({ nonce: u.nonce + 1 }), /nonce does not match/],
      ["to", sign({ to: Wallet.createRandom().address }), /to does not match/],
      ["value", sign({ value: 7n }), /value does not match/],
      ["data", sign({ data: u.data + "00" }), /data does not match/],
      ["gasLimit", sign({ gasLimit: BigInt(u.gasLimit) + 1n }), /gasLimit does not match/],
      ["maxFeePerGas", sign({ maxFeePerGas: BigInt(u.maxFeePerGas) * 3n + 1n }), /maxFeePerGas does not match/],
      ["signer", sign({}, Wallet.createRandom()), /is signed by 0x[0-9a-fA-F]{40}, not by/],
      [
        "legacy",
        sign({ type: 0, gasPrice: 1n, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }),
        /type does not match/,
      ],
      ["accessList", sign({ accessList: [{ address: u.to, storageKeys: [] }] }), /accessList does not match/],
      ["canonical", Promise.resolve(withField(raw, 6, "0x00")), /is not canonically encoded/],
      ["tampered", Promise.resolve(withField(raw, 1, "0x05")), /nonce does not match|is signed by/],
    ];
    for (const [label, bytes, message] of refusals) {
      const signed = await bytes;
      expect(() => verifySignedTransactions(batchOf(u), [signed]), label).to.throw(message);
    }
  });
});
