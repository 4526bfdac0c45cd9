import path from "node:path";
import { Wallet } from "ethers";
import type { z } from "zod";
import { stdioVariables, type StdioVariable } from "../../configuration/mcp-variables";

/**
 * The stdio server's configuration, from its environment only (service/configuration/mcp-variables.ts documents each
 * variable): the service, an API key, a wallet (it signs prepared transactions and x402 payments here and never leaves
 * this process), what it may spend, the fees it signs, the toolsets it lists. No tool call changes any of it: a model
 * cannot be talked into another service, another key or a larger budget. A value that is wrong is a start error naming
 * its variable, never quoting a key.
 */
export interface StdioSettings {
  baseUrl: string;
  apiKey?: string;
  wallet?: Wallet;
  /** The most the x402 payments of one tool call may add up to, in USDC base units (6 decimals). */
  maxPayment: bigint;
  /** The most the payments of the whole session may add up to, in USDC base units. */
  maxSpend: bigint;
  /** The highest maxFeePerGas signed, in wei, when set. */
  maxFee?: bigint;
  /** The stdio server's own RPC per chain (the base fee its fee cap is a multiple of). */
  rpcUrls: ReadonlyMap<number, string>;
  toolsets: string;
  readOnly: boolean;
  confirm: "value-moving" | "all" | "none";
  /** Where the deployment files it pins are. */
  deploymentsDir: string;
}

export class SettingsError extends Error {}

/** The package's own deployment files (deployments/ beside service/ in a checkout, beside dist/ in an install). */
const PACKAGE_DEPLOYMENTS = path.resolve(
  __dirname,
  "..",
  "..",
  "..",
  ...(__dirname.includes(`${path.sep}dist${path.sep}`) ? [".."] : []),
  "deployments",
);

export function walletOf(privateKey: string, variable: string): Wallet {
  const key = privateKey.trim();
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key))
    throw new SettingsError(`${variable} must be a private key: 64 hex characters, with or without 0x`);
  try {
    return new Wallet(key.startsWith("0x") ? key : `0x${key}`);
  } catch {
    throw new SettingsError(`${variable} is not a valid secp256k1 private key`);
  }
}

/** `units` of a decimal text with `decimals` decimals. */
function units(text: string, decimals: number): bigint {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
}

/** One variable parsed by its schema, or the start error naming it (never quoting its value: it may be a key). */
function read<N extends StdioVariable>(env: NodeJS.ProcessEnv, name: N): z.output<(typeof stdioVariables)[N]> {
  const raw = env[name]?.trim() ? env[name] : undefined;
  const parsed = stdioVariables[name].safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0].message;
    throw new SettingsError(raw === undefined ? `${name} is required` : `${name} ${message}`);
  }
  return parsed.data as z.output<(typeof stdioVariables)[N]>;
}

export function settingsFromEnv(env: NodeJS.ProcessEnv): StdioSettings {
  if (!env.TAK_BASE_URL?.trim())
    throw new SettingsError("TAK_BASE_URL is required: where the service answers, e.g. http://127.0.0.1:3000");
  const apiKey = read(env, "TAK_API_KEY");
  const privateKey = read(env, "TAK_PRIVATE_KEY");
  const maxFee = read(env, "TAK_MAX_FEE_GWEI");
  const rpcUrls = read(env, "TAK_RPC_URLS") ?? [];
  return {
    baseUrl: read(env, "TAK_BASE_URL").replace(/\/$/, ""),
    ...(apiKey ? { apiKey } : {}),
    ...(privateKey ? { wallet: walletOf(privateKey, "TAK_PRIVATE_KEY") } : {}),
    maxPayment: units(read(env, "TAK_MAX_PAYMENT"), 6),
    maxSpend: units(read(env, "TAK_MAX_SPEND"), 6),
    ...(maxFee ? { maxFee: units(maxFee, 9) } : {}),
    rpcUrls: new Map(rpcUrls.map((r) => [r.chainId, r.url])),
    toolsets: read(env, "TAK_TOOLSETS"),
    readOnly: /^(1|true)$/.test(read(env, "TAK_READONLY")),
    confirm: read(env, "TAK_CONFIRM"),
    deploymentsDir: read(env, "TAK_DEPLOYMENTS_DIR") ?? PACKAGE_DEPLOYMENTS,
  };
}
