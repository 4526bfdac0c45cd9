import { Wallet } from "ethers";
import { z } from "zod";

/**
 * The stdio server's configuration, from its environment: the service (TAK_BASE_URL), an API key (TAK_API_KEY,
 * optional), a wallet (TAK_PRIVATE_KEY, optional: it signs prepared transactions and x402 payments here and never
 * leaves this process) and the most it pays for one call (TAK_MAX_PAYMENT, in USDC). A value that is wrong is a start
 * error naming its variable, never quoting a key.
 */
export interface StdioSettings {
  baseUrl: string;
  apiKey?: string;
  wallet?: Wallet;
  /** The largest x402 payment it signs for one call, in USDC base units (6 decimals). */
  maxPayment: bigint;
}

export const DEFAULT_MAX_PAYMENT = "1";

export class SettingsError extends Error {}

const baseUrl = z.string().trim().url("must be a URL such as http://127.0.0.1:3000");
const usdc = z
  .string()
  .trim()
  .regex(/^\d+(\.\d{1,6})?$/, "must be an amount of USDC such as 0.5 (at most 6 decimals)");

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

export function parseBaseUrl(value: string, variable: string): string {
  const parsed = baseUrl.safeParse(value);
  if (!parsed.success) throw new SettingsError(`${variable} ${parsed.error.issues[0].message}`);
  return parsed.data.replace(/\/$/, "");
}

export function usdcUnits(value: string, variable: string): bigint {
  const parsed = usdc.safeParse(value);
  if (!parsed.success) throw new SettingsError(`${variable} ${parsed.error.issues[0].message}`);
  const [whole, fraction = ""] = parsed.data.split(".");
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
}

export function settingsFromEnv(env: NodeJS.ProcessEnv): StdioSettings {
  if (!env.TAK_BASE_URL?.trim())
    throw new SettingsError("TAK_BASE_URL is required: where the service answers, e.g. http://127.0.0.1:3000");
  return {
    baseUrl: parseBaseUrl(env.TAK_BASE_URL, "TAK_BASE_URL"),
    ...(env.TAK_API_KEY?.trim() ? { apiKey: env.TAK_API_KEY.trim() } : {}),
    ...(env.TAK_PRIVATE_KEY?.trim() ? { wallet: walletOf(env.TAK_PRIVATE_KEY, "TAK_PRIVATE_KEY") } : {}),
    maxPayment: usdcUnits(env.TAK_MAX_PAYMENT?.trim() || DEFAULT_MAX_PAYMENT, "TAK_MAX_PAYMENT"),
  };
}
