import {
  computeAddress,
  getBytes,
  hexlify,
  keccak256,
  recoverAddress,
  Signature,
  Transaction,
  type SignatureLike,
  type BaseWallet,
  type TransactionRequest,
} from "ethers";
import { checksumAddress } from "./checksum-address";
import { eip1559Fields, serializeSigned, unsignedDigest } from "./eip1559";

/**
 * ECDSA on secp256k1 for the request thread: recovering who signed, and signing with the service's own wallets.
 * ethers' own is pure JavaScript (~2–5 ms per signature or recovery on a small machine); the `secp256k1` package ships a
 * native build for the common platforms that does either in ~0.1–0.2 ms. Both give the same answers (signing is
 * deterministic, RFC 6979, low s, in both): the native one is used when its binary loads, ethers' otherwise.
 */
type Native = {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
};

function loadNative(): Native | undefined {
  try {
    // The bindings entry only (not the package index, which silently falls back to a JavaScript implementation).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional native build, loaded only if present
    return require("secp256k1/bindings") as Native;
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** Whether this process recovers and signs natively. */
export const nativeRecovery = native !== undefined;

/** The checksummed address whose key signed `digest`; throws on a malformed signature, like ethers' recoverAddress. */
export function recoverSigner(digest: string | Uint8Array, signature: SignatureLike): string {
  if (!native) return recoverAddress(digest, signature);
  const sig = Signature.from(signature);
  const compact = getBytes(sig.r + sig.s.slice(2));
  const publicKey = native.ecdsaRecover(compact, sig.yParity, getBytes(digest), false);
  return computeAddress("0x" + Buffer.from(publicKey).toString("hex"));
}

/**
 * The lowercase address whose key made signature `rs` (r ‖ s, 64 bytes) with parity `yParity` over `digest`, recovered
 * natively; undefined without the native build or when no key can have made it (the caller asks ethers instead, for
 * its answer or its refusal). ethers refuses an s in the upper half of 256 bits (its "non-canonical s"): so does this.
 */
export function recoverNatively(digest: Uint8Array, rs: Uint8Array, yParity: 0 | 1): string | undefined {
  if (!native || rs.length !== 64 || rs[32] >= 0x80) return undefined;
  try {
    const publicKey = native.ecdsaRecover(rs, yParity, digest, false);
    return "0x" + keccak256(publicKey.subarray(1)).slice(26);
  } catch {
    return undefined;
  }
}

/**
 * `wallet.signTransaction(request)` (same bytes), signed natively when it can be: for requests that name their
 * addresses (no ENS name to resolve) and whose `from`, if given, is the wallet. A plain EIP-1559 request is also
 * serialized without ethers.
 */
export async function signTransaction(wallet: BaseWallet, request: TransactionRequest): Promise<string> {
  if (!native) return wallet.signTransaction(request);
  const { from, ...fields } = request;
  if (from != null && checksumAddress(from as string) !== wallet.address)
    throw new Error("transaction from address mismatch");
  const plain = eip1559Fields(fields);
  if (plain) {
    const { signature, recid } = native.ecdsaSign(
      unsignedDigest(plain),
      Buffer.from(wallet.privateKey.slice(2), "hex"),
    );
    return serializeSigned(plain, signature, recid === 1 ? 1 : 0);
  }
  const tx = Transaction.from(fields as Parameters<typeof Transaction.from>[0]);
  const { signature, recid } = native.ecdsaSign(getBytes(tx.unsignedHash), getBytes(wallet.privateKey));
  tx.signature = Signature.from({
    r: hexlify(signature.subarray(0, 32)),
    s: hexlify(signature.subarray(32)),
    yParity: recid === 1 ? 1 : 0,
  });
  return tx.serialized;
}
