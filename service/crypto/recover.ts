import { computeAddress, getBytes, recoverAddress, Signature, type SignatureLike } from "ethers";

/**
 * The address that signed a 32-byte digest. ethers' own recovery is pure JavaScript (~2–5 ms per signature on a small
 * machine, on the request thread); the `secp256k1` package ships a native build for the common platforms that does it
 * in ~0.2 ms. Both give the same answer: the native one is used when its binary loads, ethers' otherwise.
 */
type Native = { ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array };

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

/** Whether this process recovers signatures natively. */
export const nativeRecovery = native !== undefined;

/** The checksummed address whose key signed `digest`; throws on a malformed signature, like ethers' recoverAddress. */
export function recoverSigner(digest: string | Uint8Array, signature: SignatureLike): string {
  if (!native) return recoverAddress(digest, signature);
  const sig = Signature.from(signature);
  const compact = getBytes(sig.r + sig.s.slice(2));
  const publicKey = native.ecdsaRecover(compact, sig.yParity, getBytes(digest), false);
  return computeAddress("0x" + Buffer.from(publicKey).toString("hex"));
}
