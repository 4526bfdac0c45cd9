import { getAddress, type Interface, type ParamType } from "ethers";
import type { ChainContracts, PinnedToken } from "./pins";

/**
 * What a prepare method produces, as the stdio server expects it before it signs anything: for a request, the calls in
 * order (the contract each must be sent to, its function, the checks of its arguments, the gas it may take), some of
 * them optional (an approval the allowance already covers, a whitelisting already done). The intents of each method
 * are in intents-*.ts; verify.ts decodes the prepared transactions and holds them to these.
 */

/** A decoded argument's check: undefined when it holds, else what is wrong. */
export type ArgCheck = (value: unknown) => string | undefined;

export interface ExpectedCall {
  /** The ABI its data is decoded with (the contract's own: argument names are that ABI's). */
  abi: Interface;
  /** The contract it is sent to (lower-case), and what that contract is, for messages. */
  to: string;
  contract: string;
  /** The function's name, e.g. transfer. */
  fn: string;
  /** Checks by argument name (a tuple's fields are checked by the tuple's check). */
  args: Record<string, ArgCheck>;
  /** The most gas it may take. */
  gas: bigint;
  /** It may be left out (an approval the allowance covers, a whitelisting already done). */
  optional?: boolean;
}

/** What an intent is computed from. */
export interface IntentContext {
  chainId: number;
  wallet: string;
  contracts(chainId?: number): Promise<ChainContracts>;
  token(symbol: string): Promise<PinnedToken>;
  /** The decimals of an agent token (the request's, remembered, or read from the chain), or a refusal. */
  agentTokenDecimals(address: string, given: string | undefined): Promise<number>;
  /** The executor a principal acts through: the one the request names or the prepared call's, pinned. */
  executor(principal: string, named: string | undefined, prepared: string | undefined): string;
  /** The address of the first prepared transaction (a call to an executor the request does not name). */
  firstTarget?: string;
}

/** A method's intent: the calls its request produces, and whether they move value or rights (confirmation). */
export interface Intent {
  movesValue: boolean;
  calls(body: any, ctx: IntentContext): Promise<ExpectedCall[]>;
}

export class IntentError extends Error {}

// ---------------------------------------------------------------------------------------------------------------
// Argument checks

export const same =
  (expected: string, what: string): ArgCheck =>
  (value) =>
    typeof value === "string" && value.toLowerCase() === expected.toLowerCase()
      ? undefined
      : `${String(value)} is not ${what} ${expected}`;

export const equal =
  (expected: bigint | number | boolean | string, what: string): ArgCheck =>
  (value) => {
    const norm = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : String(v));
    return norm(value) === norm(expected) ? undefined : `${String(value)} is not ${what} (${String(expected)})`;
  };

export const atMost =
  (limit: bigint, what: string): ArgCheck =>
  (value) =>
    BigInt(value as bigint) <= limit ? undefined : `${String(value)} is more than ${what} (${limit})`;

/** One of several addresses (a batch's accounts among the request's). */
export const oneOf =
  (allowed: readonly string[], what: string): ArgCheck =>
  (value) =>
    typeof value === "string" && allowed.some((a) => a.toLowerCase() === value.toLowerCase())
      ? undefined
      : `${String(value)} is not one of ${what}`;

export const each =
  (check: ArgCheck): ArgCheck =>
  (value) => {
    if (!Array.isArray(value)) return "is not a list";
    for (const item of value) {
      const wrong = check(item);
      if (wrong) return wrong;
    }
    return undefined;
  };

/** Any value: for arguments that name nothing of value (an agentURI the service serves, a hash). */
export const anything: ArgCheck = () => undefined;

/** A tuple's fields, each with its check (fields not named: anything but an address outside the request). */
export const fields =
  (checks: Record<string, ArgCheck>): ArgCheck =>
  (value) => {
    const record = value as Record<string, unknown>;
    for (const [name, check] of Object.entries(checks)) {
      const wrong = check(record?.[name]);
      if (wrong) return `${name}: ${wrong}`;
    }
    return undefined;
  };

// ---------------------------------------------------------------------------------------------------------------
// Helpers for intents

/** `amount` (human units, a decimal string) in base units of `decimals`. */
export function unitsOf(amount: string, decimals: number): bigint {
  const [whole, fraction = ""] = amount.split(".");
  if (fraction.length > decimals) throw new IntentError(`amount ${amount} has more than ${decimals} decimals`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
}

/** A contract of the chain's pinned deployment, or a refusal when the chain has none. */
export function pinned(contracts: ChainContracts, name: Exclude<keyof ChainContracts, "source">): string {
  const address = contracts[name];
  if (!address) throw new IntentError(`the deployment has no ${name} on this chain`);
  return address;
}

export const checksummed = (address: string) => getAddress(address.toLowerCase());

/** The plain value of a decoded argument: bigints kept, tuples as objects by field name, arrays as arrays. */
export function plainArgument(param: ParamType, value: unknown): unknown {
  if (param.baseType === "tuple" && param.components) {
    const items = value as readonly unknown[];
    return Object.fromEntries(param.components.map((c, i) => [c.name || String(i), plainArgument(c, items[i])]));
  }
  if (param.baseType === "array" && param.arrayChildren) {
    const child = param.arrayChildren;
    return (value as readonly unknown[]).map((item) => plainArgument(child, item));
  }
  return value;
}

/** The intents of the methods, by method name (intents-*.ts fill it). */
export type IntentTable = Record<string, Intent>;
