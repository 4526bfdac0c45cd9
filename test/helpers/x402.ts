import { randomBytes } from "node:crypto";
import { expect } from "chai";
import type { Wallet } from "ethers";

/** EIP-3009's TransferWithAuthorization typed-data types (what x402's `exact` scheme signs). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

export interface Requirements {
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds?: number;
  extra: Record<string, any>;
}

/** The quote of a 402 answer, decoded from its PAYMENT-REQUIRED header. */
export function quoteOf(res: { status: number; headers: Headers; body: any }): {
  x402Version: number;
  accepts: Requirements[];
  resource: any;
  error?: string;
} {
  expect(res.status, JSON.stringify(res.body)).to.equal(402);
  const header = res.headers.get("payment-required");
  expect(header, "PAYMENT-REQUIRED header").to.be.a("string");
  return JSON.parse(Buffer.from(header!, "base64").toString("utf8"));
}

export function decodePaymentResponse(res: { headers: Headers }) {
  const header = res.headers.get("payment-response");
  return header ? JSON.parse(Buffer.from(header, "base64").toString("utf8")) : undefined;
}

export interface PaymentOverrides {
  network?: string;
  chainId?: number;
  asset?: string;
  amount?: string;
  payTo?: string;
  value?: string;
  validAfter?: number;
  validBefore?: number;
  nonce?: string;
  /** The authorization's payer (default: the signing wallet): another wallet's address makes a forged authorization. */
  from?: string;
  /** The payload's `accepted` as given (default: the CLI's echo, without maxTimeoutSeconds and extra). */
  accepted?: Record<string, unknown>;
}

/**
 * An x402 v2 payment built by hand with ethers, the way the published CLI builds it: an EIP-3009
 * TransferWithAuthorization signed over the token's EIP-712 domain, base64 JSON, `accepted` without extra.
 */
export async function payWithEthers(wallet: Wallet, req: Requirements, o: PaymentOverrides = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const network = o.network ?? req.network;
  const accepted = {
    scheme: req.scheme,
    network,
    asset: o.asset ?? req.asset,
    amount: o.amount ?? req.amount,
    payTo: o.payTo ?? req.payTo,
  };
  const declared = o.accepted ?? accepted;
  const authorization = {
    from: o.from ?? wallet.address,
    to: accepted.payTo,
    value: o.value ?? accepted.amount,
    validAfter: String(o.validAfter ?? now - 60),
    validBefore: String(o.validBefore ?? now + 300),
    nonce: o.nonce ?? "0x" + randomBytes(32).toString("hex"),
  };
  const signature = await wallet.signTypedData(
    {
      name: req.extra.name,
      version: req.extra.version,
      chainId: o.chainId ?? Number(network.split(":")[1]),
      verifyingContract: accepted.asset,
    },
    TRANSFER_WITH_AUTHORIZATION_TYPES,
    authorization,
  );
  return Buffer.from(
    JSON.stringify({ x402Version: 2, accepted: declared, payload: { signature, authorization } }),
  ).toString("base64");
}
