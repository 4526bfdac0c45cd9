import type { ParamType } from "ethers";
import { plainArgument, type ExpectedCall } from "./intent";

/**
 * What the stdio server checks before it signs a prepared transaction, so that a service that answers something else
 * than the request asked (compromised, or a proxy in between) cannot make the local wallet sign it:
 *
 * - `from` is the local wallet, `chainId` the chain the request named, `value` zero (no method of this API sends ether),
 *   the fees within the cap (fees.ts) and the gas within the call's bound;
 * - the transactions are, in order, the calls the method produces for this request (intent.ts, intents-*.ts): each to
 *   its contract (the pinned deployment's, the token's, the request's), each the method's function with the request's
 *   amounts, recipients and spenders; a call the intent leaves optional may be missing, and nothing else may be there;
 * - an address argument no check names is one the request named, or the wallet.
 *
 * The result lists every call signed (contract, function, arguments) for the agent and the person to see.
 */

export interface PreparedTransaction {
  from?: string;
  to?: string;
  value?: string | number;
  chainId?: string | number;
  data?: string;
  gasLimit?: string | number;
  maxFeePerGas?: string | number;
  maxPriorityFeePerGas?: string | number;
}

/** A prepared transaction as the stdio server understood it before signing. */
export interface DecodedCall {
  to: string;
  contract: string;
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
  /** The highest maxFeePerGas this server signs on the chain (wei). */
  feeCap: bigint;
  /** The addresses the request names (lower-case). */
  named: Set<string>;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Every address in a JSON value (a tool's arguments), lower-cased. */
export function addressesIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === "string" && ADDRESS.test(value.trim())) into.add(value.trim().toLowerCase());
  else if (Array.isArray(value)) for (const v of value) addressesIn(v, into);
  else if (value && typeof value === "object") for (const v of Object.values(value)) addressesIn(v, into);
  return into;
}

const big = (value: unknown): bigint => {
  try {
    return BigInt(value as string);
  } catch {
    return -1n;
  }
};

/** What is wrong with a transaction's envelope (not its call), if anything. */
function envelopeRefusal(tx: PreparedTransaction, context: VerificationContext): [string, string] | undefined {
  if (String(tx.from ?? "").toLowerCase() !== context.wallet.toLowerCase())
    return ["from", `it is from ${tx.from ?? "nobody"}, not this server's wallet ${context.wallet}`];
  if (Number(tx.chainId) !== context.chainId)
    return [
      "chainId",
      `it is for chain ${String(tx.chainId ?? "(none)")}, not chain ${context.chainId} the request named`,
    ];
  if (big(tx.value ?? 0) !== 0n)
    return ["value", `it sends ${String(tx.value)} wei of ether, which no method of this API does`];
  if (!tx.to || !ADDRESS.test(tx.to)) return ["to", "it has no contract to call"];
  const maxFee = big(tx.maxFeePerGas);
  if (maxFee < 0n || maxFee > context.feeCap)
    return [
      "maxFeePerGas",
      `its fee cap of ${gwei(maxFee)} gwei is above the ${gwei(context.feeCap)} gwei this server signs`,
    ];
  const tip = big(tx.maxPriorityFeePerGas);
  if (tip < 0n || tip > maxFee) return ["maxPriorityFeePerGas", `its tip of ${gwei(tip)} gwei is above its fee cap`];
  return undefined;
}

const gwei = (wei: bigint) => (Number(wei) / 1e9).toLocaleString("en-US", { maximumFractionDigits: 9 });

/** Whether `tx` is the call `expected` describes: undefined and the decoded call, or why not. */
function matchCall(
  tx: PreparedTransaction,
  expected: ExpectedCall,
  named: Set<string>,
): { call?: DecodedCall; refusal?: [string, string] } {
  if (tx.to!.toLowerCase() !== expected.to)
    return { refusal: ["to", `it calls ${tx.to}, not ${expected.contract} (${expected.to})`] };
  let parsed;
  try {
    parsed = expected.abi.parseTransaction({ data: String(tx.data ?? "0x") });
  } catch {
    parsed = null;
  }
  if (!parsed || parsed.name !== expected.fn)
    return {
      refusal: [
        "data",
        `it calls ${parsed?.signature ?? `selector ${String(tx.data ?? "0x").slice(0, 10)}`}, not ${expected.fn} of ${expected.contract}`,
      ],
    };
  const inputs: readonly ParamType[] = parsed.fragment.inputs;
  const args = Object.fromEntries(inputs.map((p, i) => [p.name || String(i), plainArgument(p, parsed.args[i])]));
  for (const [name, check] of Object.entries(expected.args)) {
    const wrong = check(args[name]);
    if (wrong) return { refusal: ["data", `${parsed.signature}: ${name} ${wrong}`] };
  }
  const stranger = [
    ...addressesIn(Object.fromEntries(Object.entries(args).filter(([n]) => !(n in expected.args)))),
  ].find((a) => !named.has(a));
  if (stranger)
    return { refusal: ["data", `${parsed.signature} names ${stranger}, an address the request did not name`] };
  if (big(tx.gasLimit) < 0n || big(tx.gasLimit) > expected.gas)
    return {
      refusal: [
        "gasLimit",
        `its gas limit ${String(tx.gasLimit)} is above the ${expected.gas} ${expected.fn} may take`,
      ],
    };
  return { call: { to: tx.to!, contract: expected.contract, function: parsed.signature, arguments: printable(args) } };
}

function printable(value: unknown): any {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return value.map(printable);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printable(v)]));
  return value;
}

/**
 * Holds `transactions` to `expected` (see the module's comment); answers what each one calls, or throws the refusal
 * of the transaction that went furthest from the request.
 */
export function verifyPrepared(
  transactions: readonly PreparedTransaction[],
  expected: readonly ExpectedCall[],
  context: VerificationContext,
): DecodedCall[] {
  if (!Array.isArray(transactions) || transactions.length === 0)
    throw new VerificationError("the service prepared no transactions; nothing was signed", 0, "transactions");
  const named = new Set([...context.named, context.wallet.toLowerCase(), ...expected.map((e) => e.to)]);
  transactions.forEach((tx, index) => {
    const wrong = envelopeRefusal(tx, context);
    if (wrong)
      throw new VerificationError(`transaction ${index + 1}: ${wrong[1]}; nothing was signed`, index, wrong[0]);
  });
  let deepest: { index: number; field: string; why: string } = { index: 0, field: "transactions", why: "" };
  const match = (t: number, e: number): DecodedCall[] | undefined => {
    if (t === transactions.length)
      return expected.slice(e).every((x) => x.optional)
        ? []
        : (note(
            t,
            "transactions",
            `${expected.slice(e).find((x) => !x.optional)!.fn} of ${expected[e].contract} is missing`,
          ),
          undefined);
    if (e === expected.length)
      return (note(t, "transactions", "it is a transaction the method does not produce"), undefined);
    const { call, refusal } = matchCall(transactions[t], expected[e], named);
    if (call) {
      const rest = match(t + 1, e + 1);
      if (rest) return [call, ...rest];
    } else note(t, refusal![0], refusal![1]);
    return expected[e].optional ? match(t, e + 1) : undefined;
  };
  const note = (index: number, field: string, why: string) => {
    // The refusal furthest in, and at one transaction the last call tried (the required one after the optional ones).
    if (index >= deepest.index) deepest = { index, field, why };
  };
  const calls = match(0, 0);
  if (calls) return calls;
  const index = Math.min(deepest.index, transactions.length - 1);
  throw new VerificationError(
    `transaction ${deepest.index + 1}: ${deepest.why}; nothing was signed`,
    index,
    deepest.field,
  );
}
