import { randomBytes } from "node:crypto";
import type { Wallet } from "ethers";
import { NETWORKS } from "../../chains/networks";
import type { Pins } from "./pins";

/** EIP-3009's TransferWithAuthorization: what x402's `exact` scheme signs. */
const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

/** The longest an authorization signed here stays valid: minutes, never the year a hostile quote may ask. */
export const MAX_VALIDITY_SECONDS = 900;

/** The networks x402 payments are taken on (the network table's), as x402 names them. */
const PAYMENT_NETWORKS = new Set(NETWORKS.filter((n) => n.x402Payments).map((n) => `eip155:${n.chainId}`));

export interface Requirement {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds?: number;
  extra?: { name?: string; version?: string; [key: string]: unknown };
}

/** A payment the stdio server will not sign: why, for the tool's error. */
export class PaymentRefused extends Error {}

/** The payments of one tool call: TAK_MAX_PAYMENT bounds their sum. */
export class CallBudget {
  paid = 0n;
}

const usdc = (units: bigint) => `${(Number(units) / 1e6).toLocaleString("en-US", { maximumFractionDigits: 6 })} USDC`;

/**
 * Signs x402 `exact` payments with the local wallet (an EIP-3009 authorization over the asset's EIP-712 domain, as
 * x402's EVM client signs it) when the requirement is one this session may pay: a payment network of the network table,
 * the USDC of the pinned deployment of that chain, the network and payee of the session's first payment (pinned), a validity of
 * at most MAX_VALIDITY_SECONDS, and an amount within what is left of the call's TAK_MAX_PAYMENT and the session's
 * TAK_MAX_SPEND (every payment counted once signed: a signed authorization may be used whatever the call's outcome).
 */
export class Payer {
  private spent = 0n;
  /** The network, asset and payee of the session's first payment: every later one must be the same. */
  private terms?: { network: string; asset: string; payTo: string };

  constructor(
    private readonly wallet: Wallet,
    private readonly pins: Pins,
    private readonly limits: { maxPayment: bigint; maxSpend: bigint },
  ) {}

  get spentInSession(): bigint {
    return this.spent;
  }

  private async check(requirement: Requirement, budget: CallBudget): Promise<{ chainId: number; amount: bigint }> {
    if (requirement.scheme !== "exact")
      throw new PaymentRefused(
        `the service asks for an x402 "${requirement.scheme}" payment; this server pays only "exact"`,
      );
    const chainId = Number(/^eip155:(\d+)$/.exec(requirement.network)?.[1]);
    if (!PAYMENT_NETWORKS.has(requirement.network))
      throw new PaymentRefused(
        `the service asks for a payment on ${requirement.network}, not a payment network (${[...PAYMENT_NETWORKS].join(", ")})`,
      );
    if (this.terms && requirement.network !== this.terms.network)
      throw new PaymentRefused(
        `the service asks for a payment on ${requirement.network}, not ${this.terms.network}, where this session pays`,
      );
    const asset = (await this.pins.contracts(chainId)).USDC;
    if (!asset || requirement.asset?.toLowerCase() !== asset)
      throw new PaymentRefused(
        `the service asks for a payment in ${requirement.asset}, not the USDC of chain ${chainId} (${asset ?? "none pinned"})`,
      );
    if (!/^0x[0-9a-fA-F]{40}$/.test(requirement.payTo ?? ""))
      throw new PaymentRefused("the payment requirements name no payee (payTo)");
    if (this.terms && requirement.payTo.toLowerCase() !== this.terms.payTo)
      throw new PaymentRefused(
        `the service asks to pay ${requirement.payTo}, not ${this.terms.payTo}, whom this session pays`,
      );
    const validity = requirement.maxTimeoutSeconds ?? 300;
    if (!Number.isInteger(validity) || validity <= 0 || validity > MAX_VALIDITY_SECONDS)
      throw new PaymentRefused(
        `the service asks for an authorization valid ${validity} s; this server signs at most ${MAX_VALIDITY_SECONDS} s`,
      );
    if (!requirement.extra?.name || !requirement.extra.version)
      throw new PaymentRefused(
        "the payment requirements lack the asset's EIP-712 name and version (extra.name, extra.version)",
      );
    if (!/^\d+$/.test(requirement.amount ?? ""))
      throw new PaymentRefused(`the payment amount ${requirement.amount} is not a whole number of base units`);
    const amount = BigInt(requirement.amount);
    if (budget.paid + amount > this.limits.maxPayment)
      throw new PaymentRefused(
        `the service asks ${usdc(amount)}${budget.paid ? ` after ${usdc(budget.paid)} already paid in this call` : ""}, more than TAK_MAX_PAYMENT allows for one call (${usdc(this.limits.maxPayment)})`,
      );
    if (this.spent + amount > this.limits.maxSpend)
      throw new PaymentRefused(
        `the service asks ${usdc(amount)}; this session has paid ${usdc(this.spent)} of the ${usdc(this.limits.maxSpend)} TAK_MAX_SPEND allows`,
      );
    return { chainId, amount };
  }

  /** The PaymentPayload for `_meta["x402/payment"]`, or PaymentRefused. */
  async sign(requirement: Requirement, budget: CallBudget): Promise<Record<string, unknown>> {
    const { chainId, amount } = await this.check(requirement, budget);
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from: this.wallet.address,
      to: requirement.payTo,
      value: amount.toString(),
      validAfter: String(now - 60),
      validBefore: String(now + (requirement.maxTimeoutSeconds ?? 300)),
      nonce: `0x${randomBytes(32).toString("hex")}`,
    };
    const domain = {
      name: requirement.extra!.name,
      version: requirement.extra!.version,
      chainId,
      verifyingContract: requirement.asset,
    };
    const signature = await this.wallet.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION, authorization);
    this.terms ??= {
      network: requirement.network,
      asset: requirement.asset.toLowerCase(),
      payTo: requirement.payTo.toLowerCase(),
    };
    budget.paid += amount;
    this.spent += amount;
    return { x402Version: 2, accepted: requirement, payload: { signature, authorization } };
  }
}
