import fs from "node:fs";
import { decryptKeystoreJsonSync, isKeystoreJson } from "ethers";
import { KeySigner } from "./key-signer";
import { Pkcs11Signer } from "./pkcs11-signer";
import type { ServiceSigner } from "./signer";

/**
 * Where a key added on a running service is (relayer key rotation): an encrypted JSON keystore and the file holding its
 * password, or a key pair on a PKCS#11 token and the file holding its PIN. Only these references are stored; every
 * instance opens the key from them itself.
 */
export type KeySource =
  | { kind: "keystore"; keystore: string; passwordFile: string }
  | { kind: "pkcs11"; module: string; tokenLabel: string; keyLabel: string; pinFile: string };

/** Opens the key `source` names; an error says what could not be read or opened, never a password or PIN. */
export function openKeySource(source: KeySource): ServiceSigner {
  if (source.kind === "pkcs11") {
    const pin = readSecret(source.pinFile, "the PIN file");
    return Pkcs11Signer.open({ module: source.module, tokenLabel: source.tokenLabel, keyLabel: source.keyLabel, pin });
  }
  const json = readSecret(source.keystore, "the keystore");
  if (!isKeystoreJson(json))
    throw new Error(`${source.keystore} is not an encrypted JSON keystore (Web3 Secret Storage v3)`);
  const password = readSecret(source.passwordFile, "the password file");
  let privateKey: string;
  try {
    privateKey = decryptKeystoreJsonSync(json, password).privateKey;
  } catch {
    throw new Error(`the password in ${source.passwordFile} does not open ${source.keystore}`);
  }
  return new KeySigner(privateKey);
}

function readSecret(file: string, what: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8").replace(/\s+$/, "");
  } catch (error) {
    throw new Error(`cannot read ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  if (!text) throw new Error(`${what} ${file} is empty`);
  return text;
}
