import { Transaction } from "ethers";
import { checksumAddress } from "../crypto/checksum-address";
import { decodeSigned, unsignedDigest } from "../crypto/eip1559";
import { recoverNatively, recoverSigner } from "../crypto/secp256k1";
import { badSignature, invalid } from "./errors";

/** What verifySignedTransactions (send.ts) checks of a signed transaction, however it was read. */
export interface SignedFacts {
  /** Who signed it. */
  from: string;
  type: number | null;
  chainId: bigint;
  nonce: number;
  to: string;
  value: bigint;
  data: string;
  gasLimit: bigint;
  accessListLength: number;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Whether its bytes are the canonical encoding of what they say. */
  canonical: boolean;
}

/**
 * The common case read without ethers: a plain type-2 transaction in its canonical encoding (decodeSigned), its
 * signer recovered natively. Undefined for anything else (ethers reads it, and names what is wrong with it).
 */
export function readPlainly(raw: string): SignedFacts | undefined {
  const decoded = decodeSigned(raw);
  if (!decoded || decoded.fields.nonce > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  const { fields } = decoded;
  const signer = recoverNatively(unsignedDigest(fields), decoded.rs, decoded.yParity);
  if (!signer) return undefined;
  return {
    from: checksumAddress(signer),
    type: 2,
    chainId: fields.chainId,
    nonce: Number(fields.nonce),
    to: fields.to,
    value: fields.value,
    data: "0x" + fields.data.toString("hex"),
    gasLimit: fields.gasLimit,
    accessListLength: 0,
    maxFeePerGas: fields.maxFeePerGas,
    maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
    canonical: true,
  };
}

/** Any signed transaction ethers reads; a 400 naming transaction `index` when it is not one, or is not signed. */
export function readWithEthers(raw: string, index: number): SignedFacts {
  let tx: Transaction;
  try {
    tx = Transaction.from(raw);
  } catch {
    throw invalid(`signedTransactions[${index}] is not a serialized transaction`, { transactionIndex: index });
  }
  if (!tx.signature) throw invalid(`signedTransactions[${index}] is not signed`, { transactionIndex: index });
  let from: string;
  try {
    from = recoverSigner(tx.unsignedHash, tx.signature);
  } catch {
    throw badSignature(`signedTransactions[${index}] has a signature no key can have made`, {
      transactionIndex: index,
    });
  }
  return {
    from,
    type: tx.type,
    chainId: tx.chainId,
    nonce: tx.nonce,
    to: tx.to ?? "",
    value: tx.value,
    data: tx.data,
    gasLimit: tx.gasLimit,
    accessListLength: tx.accessList?.length ?? 0,
    maxFeePerGas: tx.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? 0n,
    canonical: tx.serialized === raw.toLowerCase(),
  };
}
