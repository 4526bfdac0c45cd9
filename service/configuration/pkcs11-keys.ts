import fs from "node:fs";

/** Where a key is on a PKCS#11 token: the library, the token's label, the key pair's label (CKA_LABEL), the user PIN. */
export interface Pkcs11KeyReference {
  module: string;
  tokenLabel: string;
  keyLabel: string;
  pin: string;
}

/** The wallets whose key may be on a PKCS#11 token, the variables that name it, and the raw key it stands in for. */
const PKCS11_KEYS = [
  {
    role: "relayer",
    prefix: "RELAYER_PKCS11_",
    rawKey: "RELAYER_PRIVATE_KEY",
    keystore: "RELAYER_KEYSTORE",
  },
  {
    role: "settlement",
    prefix: "X402_SETTLEMENT_PKCS11_",
    rawKey: "X402_SETTLEMENT_PRIVATE_KEY",
    keystore: "X402_SETTLEMENT_KEYSTORE",
  },
  {
    role: "refund",
    prefix: "X402_REFUND_PKCS11_",
    rawKey: "X402_REFUND_PRIVATE_KEY",
    keystore: "X402_REFUND_KEYSTORE",
  },
] as const;

const PARTS = ["MODULE", "TOKEN_LABEL", "KEY_LABEL", "PIN"] as const;

/**
 * The relayer's, the settlement and the refund wallets' PKCS#11 references (RELAYER_PKCS11_*, X402_SETTLEMENT_PKCS11_*,
 * X402_REFUND_PKCS11_*): all four variables of a group or none, the module a readable file, and the key given once
 * (not also as a raw key or a keystore). `env` is the environment after secret files and keystores were read in.
 */
export function readPkcs11Keys(env: Record<string, string | undefined>): {
  relayer?: Pkcs11KeyReference;
  settlement?: Pkcs11KeyReference;
  refund?: Pkcs11KeyReference;
  problems: string[];
} {
  const problems: string[] = [];
  const found: {
    relayer?: Pkcs11KeyReference;
    settlement?: Pkcs11KeyReference;
    refund?: Pkcs11KeyReference;
  } = {};
  for (const { role, prefix, rawKey, keystore } of PKCS11_KEYS) {
    const given = PARTS.filter((part) => env[prefix + part]);
    if (!given.length) continue;
    const missing = PARTS.filter((part) => !env[prefix + part]).map((part) =>
      part === "PIN" ? `${prefix}PIN (or ${prefix}PIN_FILE)` : prefix + part,
    );
    if (missing.length) {
      problems.push(`${prefix}${given[0]}: a key on a PKCS#11 token needs ${missing.join(", ")} too`);
      continue;
    }
    if (env[rawKey] || env[keystore]) {
      problems.push(
        `${prefix}MODULE: ${env[keystore] ? keystore : rawKey} is set too; give the key once (the token, a keystore or the raw key)`,
      );
      continue;
    }
    const module = env[prefix + "MODULE"]!;
    try {
      fs.accessSync(module, fs.constants.R_OK);
    } catch (error) {
      problems.push(
        `${prefix}MODULE: cannot read ${module} (${
          (error as NodeJS.ErrnoException).code ?? "unreadable"
        }); it names the token's PKCS#11 library, e.g. /usr/lib/softhsm/libsofthsm2.so`,
      );
      continue;
    }
    found[role] = {
      module,
      tokenLabel: env[prefix + "TOKEN_LABEL"]!,
      keyLabel: env[prefix + "KEY_LABEL"]!,
      pin: env[prefix + "PIN"]!,
    };
  }
  return { ...found, problems };
}
