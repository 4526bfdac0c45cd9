import { getBytes, Wallet, type Authorization, type Signature, type TransactionRequest } from "ethers";
import { signTransaction } from "../crypto/secp256k1";
import type { AuthorizationFields, ServiceSigner } from "./signer";

/**
 * A service wallet whose key is in this process's memory (RELAYER_PRIVATE_KEY, a decrypted keystore): transactions are
 * signed by the native secp256k1 build when it loads (the fast path), with ethers' bytes.
 */
export class KeySigner implements ServiceSigner {
  readonly kind = "key" as const;
  readonly address: string;
  private readonly wallet: Wallet;

  constructor(privateKey: string) {
    this.wallet = new Wallet(privateKey);
    this.address = this.wallet.address;
  }

  async signDigest(digest: Uint8Array): Promise<Signature> {
    return this.wallet.signingKey.sign(getBytes(digest));
  }

  signTransaction(request: TransactionRequest): Promise<string> {
    return signTransaction(this.wallet, request);
  }

  async authorize(fields: AuthorizationFields): Promise<Authorization> {
    return this.wallet.authorizeSync(fields);
  }

  async close(): Promise<void> {}
}
