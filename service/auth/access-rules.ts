import type { MissingKeyAnswer } from "./api-key";
import type { ExecutionMode } from "../wire/fields";

/**
 * Which credential works where, as data (docs/wire-conventions.md, Access, credits and prices). Every route and every
 * prepare method names one rule; the gate is the only code that reads them.
 *
 * | rule           | API key                      | x402 without a key                              |
 * |----------------|------------------------------|-------------------------------------------------|
 * | public         | ignored                      | not needed                                      |
 * | keyScoped      | checked when sent; scopes it | not needed                                      |
 * | keyEndpoint    | required (401 for endpoint)  | not accepted                                    |
 * | keyHeaders     | required (400 missing)       | not accepted                                    |
 * | keyMethod      | required (401 for method)    | not accepted                                    |
 * | agenticWrite   | accepted, replaces payment   | the write price, split by execution mode        |
 * | agentGetter    | accepted (scoped to its own) | the agent-getter price; payer must be the owner |
 * | ramsRead       | accepted                     | the RAMS read price                             |
 * | faucet         | accepted (faucet credits)    | the faucet price                                |
 * | keyOrTxId      | accepted (its own events)    | free, for one txId prepared without a key       |
 * | operatorSession| ignored (a console session)  | not accepted                                    |
 */
/** Price tiers; an operation belongs to one. Amounts in USDC (6 decimals). */
export type PriceTier = "write" | "faucet" | "agentGetter" | "ramsRead";

export interface AccessRule {
  name: string;
  /**
   * required: no key → a 401 or 400 (missingKeyError); optional: a key is used when sent, else x402
   * pays; none: credentials are ignored.
   */
  key: "required" | "optional" | "none";
  /** How a missing key is answered (existing clients expect a different answer on different endpoints). */
  missingKey?: MissingKeyAnswer;
  /** The price tier x402 pays when no key is sent (optional-key rules only). */
  price?: PriceTier;
  /** Reads of someone's records paid with x402: the paying wallet must be that owner. */
  payerMustOwn?: boolean;
}

export const ACCESS = {
  public: { name: "public", key: "none" },
  keyScoped: { name: "keyScoped", key: "optional" },
  keyEndpoint: { name: "keyEndpoint", key: "required", missingKey: "endpoint" },
  keyHeaders: { name: "keyHeaders", key: "required", missingKey: "headers" },
  keyMethod: { name: "keyMethod", key: "required", missingKey: "method" },
  agenticWrite: { name: "agenticWrite", key: "optional", price: "write" },
  agentGetter: { name: "agentGetter", key: "optional", price: "agentGetter", payerMustOwn: true },
  ramsRead: { name: "ramsRead", key: "optional", price: "ramsRead" },
  faucet: { name: "faucet", key: "optional", price: "faucet" },
  /** Events: a key's own, or (no key) those of one batch prepared without a key; the handler checks which. */
  keyOrTxId: { name: "keyOrTxId", key: "optional" },
  /**
   * The operator console's JSON (/console/api/…): no API key, no payment; the handler checks the operator's session
   * cookie, role and CSRF token.
   */
  operatorSession: { name: "operatorSession", key: "none" },
} as const satisfies Record<string, AccessRule>;

export type PaymentStep = "prepare" | "send";

/**
 * Price shares: each operation is priced once. Client-signed and client-broadcast pay half
 * at prepare and half at send (the send half takes the odd unit); service-relayed prepares free and pays it all at send.
 */
export const PRICE_SHARES: Record<ExecutionMode, { prepare: { numerator: bigint; denominator: bigint } }> = {
  "client-signed": { prepare: { numerator: 1n, denominator: 2n } },
  "client-broadcast": { prepare: { numerator: 1n, denominator: 2n } },
  "service-relayed": { prepare: { numerator: 0n, denominator: 1n } },
};

export function shareOf(price: bigint, mode: ExecutionMode, step: PaymentStep): bigint {
  const { numerator, denominator } = PRICE_SHARES[mode].prepare;
  const prepareShare = (price * numerator) / denominator;
  return step === "prepare" ? prepareShare : price - prepareShare;
}

/** How the OpenAPI document describes a rule's credentials. */
export function securityOf(rule: AccessRule): "none" | "apiKey" | "apiKeyOrPayment" | "optionalApiKey" {
  if (rule.key === "none") return "none";
  if (rule.key === "required") return "apiKey";
  return rule.price ? "apiKeyOrPayment" : "optionalApiKey";
}
