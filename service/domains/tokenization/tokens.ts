import { contractAt } from "../../chains/contract-at";
import { IERC20Metadata__factory } from "../../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { SecurityToken__factory } from "../../../typechain-types/factories/contracts/tokenization/SecurityToken__factory";
import { badRequest, forbidden, preflightError } from "../../errors";
import type { TokenRecord } from "../../store/tokens";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";

/** What this domain reads: the token records of the key's scope, and the chain. */
type Context = DomainContext<Pick<Stores, "tokens">>;

// Security tokens and their payment assets: what writes (methods/) and reads (reads/) of tokenization both need.

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
export function paymentAsset(ctx: Context, symbol: string, field = "tokenSymbol"): Asset {
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
export async function authorizedToken(ctx: Context, symbol: string): Promise<TokenRecord> {
  const found = ctx.apiKey ? await ctx.services.tokens.bySymbolForKey(symbol, ctx.apiKey.id) : undefined;
  const token = found?.token ?? (ctx.apiKey ? undefined : await ctx.services.tokens.bySymbol(symbol));
  if (!token)
    throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
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
export async function resolveAsset(ctx: Context, symbol: string): Promise<Asset> {
  if (isPaymentTokenSymbol(symbol)) return paymentAsset(ctx, symbol);
  const token = await authorizedToken(ctx, symbol);
  return { symbol: token.symbol, address: token.tokenAddress, decimals: token.decimals, token };
}

export function securityToken(ctx: Context, token: TokenRecord) {
  return contractAt(SecurityToken__factory, token.tokenAddress, ctx.chain.provider);
}

export function erc20(ctx: Context, tokenAddress: string) {
  return contractAt(IERC20Metadata__factory, tokenAddress, ctx.chain.provider);
}

/**
 * Only the tokenizer of a token may create its offerings, resolve their claims and distribute its dividends. The record
 * says who it is; when the signer is not that one, the chain decides (the tokenizer may have been handed over outside
 * this service, by a multisig accepting it) and the record follows it.
 */
export async function requireTokenizer(
  ctx: Context,
  token: TokenRecord,
  signer: string,
  action: string,
): Promise<void> {
  if (token.tokenizerAddress.toLowerCase() === signer.toLowerCase()) return;
  const onChain = await securityToken(ctx, token).tokenizer();
  if (onChain.toLowerCase() === signer.toLowerCase()) {
    await ctx.services.tokens.setTokenizerAddress(token.id, onChain);
    return;
  }
  throw preflightError(
    `signerAddress ${signer} is not the tokenizer of ${token.symbol} (${onChain}); only the tokenizer may ${action}`,
    {
      field: "signerAddress",
      tokenizer: onChain,
    },
  );
}
