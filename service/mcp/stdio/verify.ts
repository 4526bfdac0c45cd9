import { type Interface, type ParamType, type Result } from "ethers";
import {
  agentExecutorInterface,
  agentMandateInterface,
  agentTokenFactoryInterface,
  agentTokenInterface,
  bknInterface,
  complianceProviderInterface,
  identityRegistryInterface,
  reputationRegistryInterface,
  securityTokenInterface,
  stoEscrowInterface,
  tokenFactoryInterface,
  usdcInterface,
} from "../../chains/contracts";

/**
 * What the stdio server checks before it signs a prepared transaction, so that a service that answers something else
 * than the request asked cannot make the local wallet sign it:
 *
 * - `from` is the local wallet, `chainId` the chain the request named, `value` zero (no method of this API sends ether);
 * - `data` is a call of a function of this project's contracts (their ABIs are compiled into the server);
 * - `to`, and every address the call names (recipient, spender, new owner, agent, principal…), is one the request
 *   named, the wallet itself, or a contract the service publishes for that chain (get_network_info) or for the
 *   request's token (get_tokenizer_info: the token, its escrow and payment token).
 *
 * It cannot tell a contract the service misreports from the real one (it reads no chain of its own), and it does not
 * check amounts: the tool's result lists every call it signed (function and arguments) for the agent to see.
 */

/** Interfaces whose functions a prepared transaction may call (Multicall3 is not one: it would hide any call). */
const INTERFACES: Interface[] = [
  tokenFactoryInterface,
  securityTokenInterface,
  stoEscrowInterface,
  identityRegistryInterface,
  reputationRegistryInterface,
  agentTokenFactoryInterface,
  agentTokenInterface,
  agentMandateInterface,
  complianceProviderInterface,
  agentExecutorInterface,
  usdcInterface,
  bknInterface,
];

export interface PreparedTransaction {
  from?: string;
  to?: string;
  value?: string | number;
  chainId?: string | number;
  data?: string;
}

/** A prepared transaction as the stdio server understood it before signing. */
export interface DecodedCall {
  to: string;
  function: string;
  arguments: Record<string, unknown>;
}

export class VerificationError extends Error {
  constructor(
    message: string,
    readonly transactionIndex: number,
    readonly field: string,
  ) {
    super(message);
  }
}

export interface VerificationContext {
  wallet: string;
  chainId: number;
  /** Addresses the call may name beside the wallet's: the request's, and the contracts the service publishes. */
  known: Set<string>;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ZERO = "0x0000000000000000000000000000000000000000";

/** Every address in a JSON value (a tool's arguments, a read's answer), lower-cased. */
export function addressesIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === "string" && ADDRESS.test(value.trim())) into.add(value.trim().toLowerCase());
  else if (Array.isArray(value)) for (const v of value) addressesIn(v, into);
  else if (value && typeof value === "object") for (const v of Object.values(value)) addressesIn(v, into);
  return into;
}

function decode(data: string): { signature: string; params: readonly ParamType[]; args: Result } | undefined {
  for (const iface of INTERFACES) {
    try {
      const parsed = iface.parseTransaction({ data });
      if (parsed) return { signature: parsed.signature, params: parsed.fragment.inputs, args: parsed.args };
    } catch {
      // another interface's function, or not a call at all
    }
  }
  return undefined;
}

/** The call's address arguments, with their path (params[1].recipient, …), tuples and arrays walked. */
function addressArguments(
  params: readonly ParamType[],
  values: readonly unknown[],
  path = "",
): { path: string; value: string }[] {
  const found: { path: string; value: string }[] = [];
  params.forEach((param, i) => {
    const where = `${path}${param.name || String(i)}`;
    const value = values[i];
    if (param.baseType === "address") found.push({ path: where, value: String(value) });
    else if (param.baseType === "tuple" && param.components)
      found.push(...addressArguments(param.components, value as readonly unknown[], `${where}.`));
    else if (param.baseType === "array" && param.arrayChildren) {
      const child = param.arrayChildren;
      (value as readonly unknown[]).forEach((item, j) =>
        found.push(...addressArguments([child], [item], `${where}[${j}]`)),
      );
    }
  });
  return found;
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

/** Checks every prepared transaction (see the module's comment); answers what each one calls, or throws. */
export function verifyPrepared(
  transactions: readonly PreparedTransaction[],
  context: VerificationContext,
): DecodedCall[] {
  if (!Array.isArray(transactions) || transactions.length === 0)
    throw new VerificationError("the service prepared no transactions", 0, "transactions");
  const wallet = context.wallet.toLowerCase();
  const allowed = (address: string) => {
    const a = address.toLowerCase();
    return a === wallet || a === ZERO || context.known.has(a);
  };
  return transactions.map((tx, index) => {
    const refuse = (field: string, why: string) =>
      new VerificationError(`transaction ${index + 1}: ${why}; nothing was signed`, index, field);
    if (String(tx.from ?? "").toLowerCase() !== wallet)
      throw refuse("from", `it is from ${tx.from ?? "nobody"}, not this server's wallet ${context.wallet}`);
    if (Number(tx.chainId) !== context.chainId)
      throw refuse(
        "chainId",
        `it is for chain ${tx.chainId ?? "(none)"}, not chain ${context.chainId} the request named`,
      );
    if (BigInt(tx.value ?? 0) !== 0n)
      throw refuse("value", `it sends ${BigInt(tx.value ?? 0)} wei of ether, which no method of this API does`);
    if (!tx.to || !ADDRESS.test(tx.to)) throw refuse("to", "it has no contract to call");
    if (!allowed(tx.to))
      throw refuse(
        "to",
        `it calls ${tx.to}, which is neither named by the request nor a contract the service publishes for chain ${context.chainId}`,
      );
    const call = decode(String(tx.data ?? "0x"));
    if (!call)
      throw refuse(
        "data",
        `its data (selector ${String(tx.data ?? "0x").slice(0, 10)}) is no function of this project's contracts`,
      );
    const stranger = addressArguments(call.params, call.args).find((a) => !allowed(a.value));
    if (stranger)
      throw refuse(
        "data",
        `${call.signature} names ${stranger.value} as ${stranger.path}, an address the request did not name`,
      );
    const args = Object.fromEntries(call.params.map((p, i) => [p.name || String(i), plain(call.args[i])]));
    return { to: tx.to, function: call.signature, arguments: args };
  });
}
