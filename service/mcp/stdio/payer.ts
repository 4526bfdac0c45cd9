import { randomBytes } from "node:crypto";
import type { Wallet } from "ethers";

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

/**
 * Signs an x402 `exact` payment for `requirement` with the local wallet (an EIP-3009 authorization over the asset's
 * EIP-712 domain, as x402's EVM client signs it) and answers the PaymentPayload for `_meta["x402/payment"]`. Refused:
 * another scheme, a network that is not eip155:<id>, an asset without its EIP-712 name and version, an amount above
 * `maxPayment` (USDC base units).
 */
export async function signPayment(
  wallet: Wallet,
  requirement: Requirement,
  maxPayment: bigint,
): Promise<Record<string, unknown>> {
  if (requirement.scheme !== "exact")
    throw new PaymentRefused(
      `the service asks for an x402 "${requirement.scheme}" payment; this server pays only "exact"`,
    );
  const chainId = /^eip155:(\d+)$/.exec(requirement.network)?.[1];
  if (!chainId)
    throw new PaymentRefused(
      `the service asks for a payment on ${requirement.network}, not an EVM network (eip155:<id>)`,
    );
  if (!requirement.extra?.name || !requirement.extra.version)
    throw new PaymentRefused(
      "the payment requirements lack the asset's EIP-712 name and version (extra.name, extra.version)",
    );
  if (!/^\d+$/.test(requirement.amount))
    throw new PaymentRefused(`the payment amount ${requirement.amount} is not a whole number of base units`);
  const amount = BigInt(requirement.amount);
  if (amount > maxPayment) {
    throw new PaymentRefused(
      `the service asks ${amount} base units (${typeof requirement.extra.displayPrice === "string" ? requirement.extra.displayPrice : "USDC"}), more than TAK_MAX_PAYMENT allows for one call (${maxPayment})`,
    );
  }
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: wallet.address,
    to: requirement.payTo,
    value: amount.toString(),
    validAfter: String(now - 60),
    validBefore: String(now + (requirement.maxTimeoutSeconds ?? 300)),
    nonce: `0x${randomBytes(32).toString("hex")}`,
  };
  const domain = {
    name: requirement.extra.name,
    version: requirement.extra.version,
    chainId: Number(chainId),
    verifyingContract: requirement.asset,
  };
  const signature = await wallet.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION, authorization);
  return { x402Version: 2, accepted: requirement, payload: { signature, authorization } };
}
