import fs from "node:fs";
import { decryptKeystoreJsonSync, isKeystoreJson } from "ethers";

/** The keys that may come from an encrypted JSON keystore, with the variables that name it and its password. */
const KEYSTORE_KEYS = [
  { key: "RELAYER_PRIVATE_KEY", keystore: "RELAYER_KEYSTORE", password: "RELAYER_KEYSTORE_PASSWORD" },
  {
    key: "X402_SETTLEMENT_PRIVATE_KEY",
    keystore: "X402_SETTLEMENT_KEYSTORE",
    password: "X402_SETTLEMENT_KEYSTORE_PASSWORD",
  },
  { key: "X402_REFUND_PRIVATE_KEY", keystore: "X402_REFUND_KEYSTORE", password: "X402_REFUND_KEYSTORE_PASSWORD" },
] as const;

/**
 * The environment with each keystore decrypted into the key it holds (RELAYER_KEYSTORE → RELAYER_PRIVATE_KEY): the
 * key exists only in this process's memory, never in a variable or a file in clear. A keystore with its raw key also
 * given, without its password, unreadable, not a keystore, or not opened by the password is an error naming the variable.
 */
export function readKeystores(env: Record<string, string | undefined>): {
  env: Record<string, string | undefined>;
  problems: string[];
} {
  const out = { ...env };
  const problems: string[] = [];
  for (const { key, keystore, password } of KEYSTORE_KEYS) {
    const file = env[keystore];
    if (!file) continue;
    if (env[key]) {
      problems.push(`${keystore}: ${key} is set too; give the key once (the keystore, or the raw key)`);
      continue;
    }
    if (!env[password]) {
      problems.push(`${keystore}: needs ${password} (or ${password}_FILE)`);
      continue;
    }
    let json: string;
    try {
      json = fs.readFileSync(file, "utf8");
    } catch (error) {
      problems.push(`${keystore}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
      continue;
    }
    if (!isKeystoreJson(json)) {
      problems.push(`${keystore}: ${file} is not an encrypted JSON keystore (Web3 Secret Storage v3)`);
      continue;
    }
    try {
      out[key] = decryptKeystoreJsonSync(json, env[password]).privateKey;
    } catch {
      problems.push(`${keystore}: ${password} does not open ${file}`);
    }
  }
  return { env: out, problems };
}
