import type { Config } from "../config";
import type { Pkcs11KeyReference } from "../configuration/pkcs11-keys";
import { KeySigner } from "./key-signer";
import { Pkcs11Signer } from "./pkcs11-signer";
import type { ServiceSigner } from "./signer";

/** The wallets the service signs with, opened once at start from the configuration. */
export interface ServiceWallets {
  /** Per chain: the relayer's own key first, then its further keys (RELAYER_EXTRA_PRIVATE_KEYS). */
  relayer: Map<number, ServiceSigner[]>;
  /** The in-process facilitator's settlement wallet, when one is configured. */
  settlement?: ServiceSigner;
  /** The wallet that pays owed x402 payments back, when one is configured. */
  refund?: ServiceSigner;
  /** Lets go of every signer (a token's sessions). */
  close(): Promise<void>;
}

/** A start refused because a wallet's token could not be opened: names the variables to look at, never the PIN. */
export class WalletOpenError extends Error {
  override name = "WalletOpenError";
}

/**
 * The signers the configuration names: raw keys and decrypted keystores in memory, PKCS#11 keys on their token (one
 * session each, opened and logged in now, so a wrong PIN or label stops the start). One signer per key, shared by the
 * chains that use it.
 */
export function openServiceWallets(config: Config): ServiceWallets {
  const opened: ServiceSigner[] = [];
  const close = async () => void (await Promise.all(opened.map((s) => s.close())));
  try {
    const byKey = new Map<string, ServiceSigner>();
    const signerOf = (key: string) => {
      let signer = byKey.get(key.toLowerCase());
      if (!signer) {
        byKey.set(key.toLowerCase(), (signer = new KeySigner(key)));
        opened.push(signer);
      }
      return signer;
    };
    const onToken = (reference: Pkcs11KeyReference | undefined, prefix: string) => {
      if (!reference) return undefined;
      try {
        const signer = Pkcs11Signer.open(reference);
        opened.push(signer);
        return signer;
      } catch (error) {
        throw new WalletOpenError(`${prefix}*: ${(error as Error).message}`);
      }
    };
    const relayerToken = onToken(config.relayerPkcs11, "RELAYER_PKCS11_");
    const settlementToken = onToken(config.settlementPkcs11, "X402_SETTLEMENT_PKCS11_");
    if (relayerToken && settlementToken && relayerToken.address === settlementToken.address) {
      throw new WalletOpenError(
        "RELAYER_PKCS11_KEY_LABEL and X402_SETTLEMENT_PKCS11_KEY_LABEL name the same key: the relayer and the settlement wallet need keys of their own (their nonces would clash)",
      );
    }
    const relayer = new Map<number, ServiceSigner[]>();
    for (const chainId of config.rpcEndpoints.keys()) {
      const raw = config.relayerKeys.get(chainId);
      const home = raw ? signerOf(raw) : relayerToken;
      if (home) relayer.set(chainId, [home, ...(config.relayerExtraKeys.get(chainId) ?? []).map(signerOf)]);
    }
    const settlement = config.X402_SETTLEMENT_PRIVATE_KEY
      ? signerOf(config.X402_SETTLEMENT_PRIVATE_KEY)
      : settlementToken;
    const refund = config.X402_REFUND_PRIVATE_KEY
      ? signerOf(config.X402_REFUND_PRIVATE_KEY)
      : onToken(config.refundPkcs11, "X402_REFUND_PKCS11_");
    // Its nonces are its own (no other part of the service heals or takes them): a key shared with another wallet would clash.
    const shared = refund && [settlement, ...[...relayer.values()].flat()].find((w) => w?.address === refund.address);
    if (shared)
      throw new WalletOpenError(
        `the refund key (X402_REFUND_*) is ${shared === settlement ? "the settlement key" : "a relayer key"}: the refund wallet needs a key of its own (${refund.address})`,
      );
    return { relayer, settlement, refund, close };
  } catch (error) {
    void close();
    throw error;
  }
}
