import type { Authorization, Signature, TransactionRequest } from "ethers";

/** Where a service wallet's key is kept: in this process's memory (a raw key, a decrypted keystore) or on a PKCS#11 token. */
export type SignerKind = "key" | "pkcs11";

/** What an EIP-7702 authorization names: the code to delegate to, the account's nonce, the chain (0: every chain). */
export interface AuthorizationFields {
  address: string;
  nonce: number;
  chainId: number;
}

/**
 * A wallet the service signs with itself (a relayer key, the x402 settlement key), wherever its key is kept: the
 * engine and the payments ask it for signatures and never see the key.
 */
export interface ServiceSigner {
  /** Checksummed. */
  readonly address: string;
  readonly kind: SignerKind;
  /** ECDSA over secp256k1 of a 32-byte digest: low s (EIP-2), with the parity that recovers `address`. */
  signDigest(digest: Uint8Array): Promise<Signature>;
  /** A signed transaction's bytes (0x-hex), as ethers' Wallet.signTransaction gives them; `from`, if set, must be this signer. */
  signTransaction(request: TransactionRequest): Promise<string>;
  /** An EIP-7702 authorization signed by this account, as ethers' Wallet.authorizeSync gives it. */
  authorize(fields: AuthorizationFields): Promise<Authorization>;
  /** Lets go of what the signer holds (a token's session); idempotent. */
  close(): Promise<void>;
}
