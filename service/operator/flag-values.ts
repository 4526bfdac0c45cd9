import fs from "node:fs";
import path from "node:path";
import type { KeySource } from "../signers/key-sources";
import { UsageError } from "./usage-error";

/**
 * What the command table (command-table.ts) builds from more than one flag, or from a file a flag names; a wrong
 * combination, or a file that cannot be read, is a UsageError saying what to give.
 */

/** A password from --password-file (its first line): read here, so it never appears on a command line or in a shell history. */
export function passwordOf(v: Record<string, unknown>): { password?: string } {
  const file = v["password-file"] as string | undefined;
  if (file === undefined) return {};
  try {
    return { password: fs.readFileSync(file, "utf8").split(/\r?\n/)[0] };
  } catch (error) {
    throw new UsageError(`--password-file ${file} cannot be read: ${(error as Error).message}`);
  }
}

/** A signers command's scope: --key-id K or --all-keys, exactly one. */
export function signerScopeOf(command: string, v: Record<string, unknown>): { keyId: string } | { allKeys: true } {
  const usage =
    "give --key-id K (the key that may prepare with this signer) or --all-keys (every key, and payers without one)";
  if (v["key-id"] !== undefined && v["all-keys"])
    throw new UsageError(`${command}: --key-id and --all-keys together; ${usage}`);
  if (v["all-keys"]) return { allKeys: true };
  if (v["key-id"] === undefined) throw new UsageError(`${command}: --key-id or --all-keys is required; ${usage}`);
  return { keyId: v["key-id"] as string };
}

/**
 * Where `relayer-keys add` finds the key: --keystore with --password-file, or --pkcs11-module with --token-label,
 * --key-label and --pin-file. Paths are made absolute here (the command may run in the service, elsewhere).
 */
export function keySourceOf(v: Record<string, unknown>): KeySource {
  const given = (names: string[]) => names.filter((n) => v[n] !== undefined);
  const keystore = ["keystore", "password-file"];
  const pkcs11 = ["pkcs11-module", "token-label", "key-label", "pin-file"];
  const usage =
    "give --keystore FILE --password-file FILE, or --pkcs11-module LIB --token-label T --key-label K --pin-file FILE";
  if (given(keystore).length && given(pkcs11).length)
    throw new UsageError(`relayer-keys add: a keystore or a PKCS#11 token, not both; ${usage}`);
  const missing = (names: string[]) => names.filter((n) => v[n] === undefined).map((n) => `--${n}`);
  if (given(pkcs11).length) {
    if (missing(pkcs11).length)
      throw new UsageError(`relayer-keys add: ${missing(pkcs11).join(", ")} required with --pkcs11-module; ${usage}`);
    return {
      kind: "pkcs11",
      module: path.resolve(v["pkcs11-module"] as string),
      tokenLabel: v["token-label"] as string,
      keyLabel: v["key-label"] as string,
      pinFile: path.resolve(v["pin-file"] as string),
    };
  }
  if (missing(keystore).length)
    throw new UsageError(`relayer-keys add: ${missing(keystore).join(", ")} required; ${usage}`);
  return {
    kind: "keystore",
    keystore: path.resolve(v.keystore as string),
    passwordFile: path.resolve(v["password-file"] as string),
  };
}
