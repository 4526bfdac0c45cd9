import { Signature } from "ethers";
import { recoverSigner } from "../crypto/secp256k1";

/** The curve's order: a signature's s above half of it is replaced by n - s (EIP-2: only low s is valid). */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** r ‖ s as a token answers CKM_ECDSA, made an Ethereum signature: s in the low half (EIP-2), the parity that recovers `address`. */
export function ethereumSignature(digest: Buffer, rs: Buffer, address: string): Signature {
  if (rs.length !== 64) throw new Error(`the token answered a ${rs.length}-byte signature, not r ‖ s of 64 bytes`);
  const r = "0x" + rs.subarray(0, 32).toString("hex");
  let s = BigInt("0x" + rs.subarray(32).toString("hex"));
  if (s > SECP256K1_N / 2n) s = SECP256K1_N - s;
  const sHex = "0x" + s.toString(16).padStart(64, "0");
  for (const yParity of [0, 1] as const) {
    const signature = Signature.from({ r, s: sHex, yParity });
    if (recoverSigner(digest, signature) === address) return signature;
  }
  throw new Error("the token's signature recovers neither parity to its public key's address");
}
