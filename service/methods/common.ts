import { contractAt } from "../chains/contract-at";
import { parseUnits } from "ethers";
import { z } from "zod";
import { IERC20Metadata__factory } from "../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { SecurityToken__factory } from "../../typechain-types/factories/contracts/tokenization/SecurityToken__factory";
import { badRequest, forbidden, preflightError } from "../errors";
import { address, chainIdInput, executionMode, gasLimitField, nonceField } from "../http/fields";
import type { TokenRecord } from "../store/tokens";
import type { MethodContext } from "./types";

/** Fields every prepare body may carry (API-SPEC "Common body", WIRE-COMPAT §3). */
export const commonFields = {
  method: z.string().optional(),
  chainId: chainIdInput,
  executionMode: executionMode.optional(),
  gasLimit: gasLimitField.optional().meta({ description: "Overrides the estimated gas limit of every transaction" }),
  nonce: nonceField.optional().meta({ description: "First nonce to use instead of the signer's pending nonce" }),
};

export const signerFields = { ...commonFields, signerAddress: address };

/** Payment-token symbols every key may use (exempt from the token-symbol scoping rule). */
export const PAYMENT_TOKEN_SYMBOLS = ["HAI", "BKN", "USDC", "USDt", "USDT"] as const;

export function isPaymentTokenSymbol(symbol: string): boolean {
  return (PAYMENT_TOKEN_SYMBOLS as readonly string[]).includes(symbol);
}

/** An ERC-20 a method acts on: a security token recorded here, or one of the chain's payment tokens. */
export interface Asset {
  symbol: string;
  address: string;
  decimals: number;
  token?: TokenRecord;
}

/** The chain's payment token for a symbol (USDC, USDT/USDt, BKN). */
export function paymentAsset(ctx: MethodContext, symbol: string, field = "tokenSymbol"): Asset {
  const c = ctx.chain.deployment.contracts;
  switch (symbol) {
    case "USDC":
      if (!c.USDC) throw badRequest(`USDC is not available on chain ${ctx.chain.chainId}`, { field });
      return { symbol: "USDC", address: c.USDC, decimals: 6 };
    case "USDT":
    case "USDt":
      if (!c.USDT) throw badRequest(`USDT is not available on chain ${ctx.chain.chainId}`, { field });
      return { symbol: "USDT", address: c.USDT, decimals: 6 };
    case "BKN":
      return { symbol: "BKN", address: c.BKN, decimals: 18 };
    default:
      throw badRequest(`${field} ${symbol} is not deployed on chain ${ctx.chain.chainId}`, { field });
  }
}

/**
 * The token a key may act on: it must exist (tokenized through this service), be on the request's chain, and have
 * been tokenized under this key's tokenizer e-mail ("Unauthorized token symbol" otherwise).
 */
export async function authorizedToken(ctx: MethodContext, symbol: string): Promise<TokenRecord> {
  const found = ctx.apiKey ? await ctx.services.tokens.bySymbolForKey(symbol, ctx.apiKey.id) : undefined;
  const token = found?.token ?? (ctx.apiKey ? undefined : await ctx.services.tokens.bySymbol(symbol));
  if (!token) throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
  if (!found?.keyMayUse) {
    throw forbidden("Unauthorized token symbol", { tokenSymbol: symbol });
  }
  if (token.chainId !== ctx.chain.chainId) {
    throw badRequest(`tokenSymbol ${symbol} lives on chain ${token.chainId}, not on chain ${ctx.chain.chainId}`, {
      field: "chainId",
      tokenChainId: token.chainId,
    });
  }
  return token;
}

/** A security token or payment token by symbol (payment tokens are exempt from key scoping). */
export async function resolveAsset(ctx: MethodContext, symbol: string): Promise<Asset> {
  if (isPaymentTokenSymbol(symbol)) return paymentAsset(ctx, symbol);
  const token = await authorizedToken(ctx, symbol);
  return { symbol: token.symbol, address: token.tokenAddress, decimals: token.decimals, token };
}

export const MAX_UINT256 = 2n ** 256n - 1n;

/** Human amount ("12.5") to base units; a 400 naming the field when it has too many decimals, is zero or exceeds uint256. */
export function toUnits(amount: string, decimals: number, field: string, options: { allowZero?: boolean } = {}): bigint {
  const [, fraction = ""] = amount.split(".");
  if (fraction.length > decimals) throw badRequest(`${field} has more than ${decimals} decimal places`, { field, decimals });
  const units = parseUnits(amount, decimals);
  if (units === 0n && !options.allowZero) throw badRequest(`${field} must be greater than 0`, { field });
  if (units > MAX_UINT256) throw badRequest(`${field} is too large: ${amount} with ${decimals} decimals exceeds uint256`, { field });
  return units;
}

/**
 * Base units to a human amount without trailing zeros ("1.5", "2", "0"): what ethers' formatUnits gives minus its ".0",
 * in plain bigint arithmetic (formatUnits builds a FixedNumber each call, a measurable share of a hot read).
 */
export function fromUnits(units: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) throw new RangeError(`decimals must be an ERC-20 uint8, not ${decimals}`);
  const sign = units < 0n ? "-" : "";
  const magnitude = units < 0n ? -units : units;
  if (decimals === 0) return sign + magnitude.toString();
  const digits = magnitude.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return sign + whole + (fraction ? "." + fraction : "");
}

export function securityToken(ctx: MethodContext, token: TokenRecord) {
  return contractAt(SecurityToken__factory, token.tokenAddress, ctx.chain.provider);
}

export function erc20(ctx: MethodContext, tokenAddress: string) {
  return contractAt(IERC20Metadata__factory, tokenAddress, ctx.chain.provider);
}

/** Only the tokenizer of a token may mint, whitelist and distribute its dividends. */
export function requireTokenizer(token: TokenRecord, signer: string, action: string): void {
  if (token.tokenizerAddress.toLowerCase() !== signer.toLowerCase()) {
    throw preflightError(`signerAddress ${signer} is not the tokenizer of ${token.symbol} (${token.tokenizerAddress}); only the tokenizer may ${action}`, {
      field: "signerAddress",
      tokenizer: token.tokenizerAddress,
    });
  }
}

