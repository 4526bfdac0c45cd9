import {
  getAddress,
  getBytes,
  hashAuthorization,
  Transaction,
  type Authorization,
  type Signature,
  type TransactionRequest,
} from "ethers";
import { checksumAddress } from "../crypto/checksum-address";
import { eip1559Fields, serializeSigned, unsignedDigest } from "../crypto/eip1559";
import type { AuthorizationFields } from "./signer";

/** Signs a 32-byte digest (a token does it; the key never reaches this process). */
export type DigestSigning = (digest: Uint8Array) => Promise<Signature>;

/**
 * A transaction signed through `signDigest` with the bytes ethers' Wallet.signTransaction gives for the same request:
 * a plain EIP-1559 request serialized natively, any other (EIP-7702 authorizations, access lists) by ethers.
 */
export async function signTransactionWithDigest(
  address: string,
  signDigest: DigestSigning,
  request: TransactionRequest,
): Promise<string> {
  const { from, ...fields } = request;
  if (from != null && checksumAddress(from as string) !== address) throw new Error("transaction from address mismatch");
  const plain = eip1559Fields(fields);
  if (plain) {
    const signature = await signDigest(unsignedDigest(plain));
    return serializeSigned(plain, getBytes(signature.r + signature.s.slice(2)), signature.yParity);
  }
  const tx = Transaction.from(fields as Parameters<typeof Transaction.from>[0]);
  tx.signature = await signDigest(getBytes(tx.unsignedHash));
  return tx.serialized;
}

/** An EIP-7702 authorization signed through `signDigest`, shaped as ethers' Wallet.authorizeSync shapes it. */
export async function authorizeWithDigest(
  signDigest: DigestSigning,
  fields: AuthorizationFields,
): Promise<Authorization> {
  const signature = await signDigest(getBytes(hashAuthorization(fields)));
  return {
    address: getAddress(fields.address),
    nonce: BigInt(fields.nonce),
    chainId: BigInt(fields.chainId),
    signature,
  };
}
