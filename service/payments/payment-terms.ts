import { getAddress, ZeroAddress, ZeroHash } from "ethers";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import type { Chain, ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Stores } from "../store/stores";
import type { PaymentFacilitator } from "./payment-facilitator";

/** What finding the payment terms reads: the configuration, the payment chain, the settlement wallet's nonces. */
export type PaymentTermsServices = Pick<Stores, "walletNonces"> & { chains: ChainRegistry; config: Config };

/** Where and how this deployment takes x402 payments: the chain, who verifies and settles, the asset and the payee. */
export interface PaymentTerms {
  chain: Chain;
  facilitator: PaymentFacilitator;
  /** The payment asset (USDC), checksummed. */
  asset: string;
  payTo: string;
  /** The asset's EIP-712 domain, which clients sign their authorizations over. */
  domain: { name: string; version: string };
}

/**
 * The payment terms of this deployment, or undefined when X402_ENABLED=false. Refuses to start (throws) with a
 * configuration that cannot take the payments it would advertise: the payment chain not served, no settlement key
 * and no facilitator, no payee, or a payment asset without EIP-3009 or without its EIP-712 name and version.
 */
export async function paymentTermsOf(
  services: PaymentTermsServices,
  facilitator: (chain: Chain) => PaymentFacilitator,
): Promise<PaymentTerms | undefined> {
  const { config } = services;
  if (!config.X402_ENABLED) return undefined;
  const chainId = config.x402PaymentChainId;
  const chain = services.chains.find(chainId);
  if (!chain) {
    throw new X402ConfigError(
      `x402 takes payments on chain ${chainId}, which this ${config.ENVIRONMENT} deployment does not serve: set RPC_URL_${chainId} (and its deployment file), choose another X402_PAYMENT_CHAIN_ID, or X402_ENABLED=false`,
    );
  }
  const f = facilitator(chain);
  const payTo = config.X402_PAY_TO ?? f.settlementAddress;
  if (!payTo)
    throw new X402ConfigError(
      "x402 needs a payee: set X402_PAY_TO or X402_SETTLEMENT_PRIVATE_KEY (or X402_ENABLED=false)",
    );
  const asset = chain.deployment.contracts.USDC;
  if (!asset) throw new X402ConfigError(`x402 takes payments in USDC, and chain ${chainId}'s deployment names none`);
  const domain = await eip3009Domain(chain, asset);
  if (f.settlementAddress) {
    const pending = await chain.provider.getTransactionCount(f.settlementAddress, "pending");
    await services.walletNonces.syncFloor(chain.chainId, f.settlementAddress, pending);
  }
  return { chain, facilitator: f, asset: getAddress(asset), payTo: getAddress(payTo), domain };
}

export class X402ConfigError extends Error {
  override name = "X402ConfigError";
}

/**
 * The EIP-712 domain clients sign payments with is the token's own (name() and version(), e.g. Circle's "USDC" / "2").
 * A token without EIP-3009 (authorizationState) or without them cannot take x402 payments.
 */
async function eip3009Domain(chain: Chain, asset: string): Promise<{ name: string; version: string }> {
  const usdc = USDC__factory.connect(asset, chain.provider);
  const code = await chain.provider.getCode(asset);
  if (code === "0x") throw new X402ConfigError(`The payment asset ${asset} on chain ${chain.chainId} has no code`);
  try {
    await usdc.authorizationState(ZeroAddress, ZeroHash);
  } catch {
    throw new X402ConfigError(
      `The payment asset ${asset} on chain ${chain.chainId} does not implement EIP-3009 (authorizationState): x402 cannot take payments in it`,
    );
  }
  try {
    const [name, version] = await Promise.all([usdc.name(), usdc.version()]);
    return { name, version };
  } catch {
    throw new X402ConfigError(
      `The payment asset ${asset} on chain ${chain.chainId} does not expose the EIP-712 name() and version() payments are signed with`,
    );
  }
}
