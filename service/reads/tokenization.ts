import { blockReads } from "../chains/block-reads";
import { getAddress } from "ethers";
import type { z } from "zod";
import { chainIdHex, networkById } from "../chains/networks";
import { badRequest } from "../errors";
import type { DomainContext, DomainServices } from "../domains/context";
import type { KycViewServices } from "../onboarding/views";
import type { ApiKeyRecord } from "../store/api-keys";
import type { TokenRecord } from "../store/tokens";
import { fromUnits } from "../model/units";
import {
  authorizedToken,
  erc20,
  isPaymentTokenSymbol,
  paymentAsset,
  securityToken,
} from "../domains/tokenization/tokens";
import type { Allowance, BalanceWhitelist, DividendDistribution, TokenRecordView } from "./tokenization-schemas";

/** What the tokenization reads use. */
export type TokenizationReadServices = DomainServices & KycViewServices;

/** Read context for one token: the key must be allowed to see it (Unauthorized token symbol otherwise). */
export async function tokenContext(
  services: TokenizationReadServices,
  apiKey: ApiKeyRecord,
  symbol: string,
): Promise<{ ctx: DomainContext; token: TokenRecord }> {
  const record = await services.tokens.bySymbol(symbol);
  if (!record)
    throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
  const chain = services.chains.find(record.chainId);
  if (!chain)
    throw badRequest(`tokenSymbol ${symbol} lives on chain ${record.chainId}, which this deployment does not serve`, {
      field: "tokenSymbol",
    });
  const ctx = { services, chain, apiKey };
  return { ctx, token: await authorizedToken(ctx, symbol) };
}

export function documentUrl(services: TokenizationReadServices, ref: string | null): string | null {
  if (!ref) return null;
  return `${services.baseUrl}/documents/${ref.replace(/^sha256:/, "")}`;
}

/** The token record as clients read it: no contract address, no balances. */
export function tokenRecordView(
  services: TokenizationReadServices,
  token: TokenRecord,
): z.infer<typeof TokenRecordView> {
  const network = networkById(token.chainId);
  return {
    uuid: token.id,
    name: token.name,
    tokenName: token.tokenName,
    tokenSymbol: token.symbol,
    tokenType: token.tokenType,
    tokenizerEmail: token.tokenizerEmail,
    companyWalletAddress: token.companyWalletAddress,
    tokenLogotype: documentUrl(services, token.logotypeRef),
    subscriptionAgreement: token.subscriptionAgreementRef,
    legalDocs: token.legalDocsRef,
    allowedTokenDecimals: token.decimals,
    initialTokenSupply: fromUnits(BigInt(token.initialSupply), token.decimals),
    maxTokenSupply: fromUnits(BigInt(token.supplyCap), token.decimals),
    url: token.url,
    paymentToken: {
      symbol: token.paymentToken.symbol,
      address: token.paymentToken.address,
      decimals: token.paymentToken.decimals,
      blockchain: {
        chainId: chainIdHex(token.chainId),
        chainName: network?.name ?? String(token.chainId),
        blockExplorerUrl: network?.blockExplorerUrl ?? "",
      },
    },
  };
}

/** A wallet's holding of a security token: balance, whitelist status and the issuer controls on it. */
export interface TokenHolding {
  balance: bigint;
  whitelisted: boolean;
  frozenAmount: bigint;
  addressFrozen: boolean;
  tokenPaused: boolean;
}

/**
 * A wallet's holding on a security token, from the chain as of a recent head (BlockReads: shared by the reads of one
 * block, never older than the last block this instance saw). get-balance-whitelist, get-whitelist-status and
 * get-investor-info read it here.
 */
export async function tokenHolding(ctx: DomainContext, token: TokenRecord, address: string): Promise<TokenHolding> {
  const key = `holding:${token.tokenAddress.toLowerCase()}:${address.toLowerCase()}`;
  const [balance, whitelisted, frozenAmount, addressFrozen, tokenPaused] = await blockReads(ctx.chain).read(key, () => {
    const contract = securityToken(ctx, token);
    return Promise.all([
      contract.balanceOf(address),
      contract.isWhitelisted(address),
      contract.getFrozenTokens(address),
      contract.isFrozen(address),
      contract.paused(),
    ]);
  });
  return { balance, whitelisted, frozenAmount, addressFrozen, tokenPaused };
}

/** The issuer-control fields of a holding, in the token's human units. */
export function holdingControlView(token: TokenRecord, h: TokenHolding) {
  return {
    frozenAmount: fromUnits(h.frozenAmount, token.decimals),
    frozenAmountRaw: h.frozenAmount.toString(),
    unfrozenBalance: fromUnits(h.balance > h.frozenAmount ? h.balance - h.frozenAmount : 0n, token.decimals),
    addressFrozen: h.addressFrozen,
    tokenPaused: h.tokenPaused,
  };
}

export async function balanceWhitelistView(
  ctx: DomainContext,
  token: TokenRecord,
  wallet: { address: string; email: string | null },
): Promise<z.infer<typeof BalanceWhitelist>> {
  const holding = await tokenHolding(ctx, token, wallet.address);
  return {
    tokenSymbol: token.symbol,
    investorAddress: wallet.address,
    investorEmail: wallet.email,
    tokenBalance: fromUnits(holding.balance, token.decimals),
    tokenBalanceRaw: holding.balance.toString(),
    whitelisted: holding.whitelisted,
    whitelistStatus: holding.whitelisted,
    ...holdingControlView(token, holding),
  };
}

/** Allowance of a security token or a payment token (which needs the chain to be named). */
export async function allowanceView(
  services: TokenizationReadServices,
  apiKey: ApiKeyRecord,
  q: { tokenSymbol: string; ownerAddress: string; spenderAddress: string; chainId?: string },
): Promise<z.infer<typeof Allowance>> {
  let ctx: DomainContext;
  let asset: { symbol: string; address: string; decimals: number };
  if (isPaymentTokenSymbol(q.tokenSymbol)) {
    if (!q.chainId)
      throw badRequest(`chainId is required for the payment token ${q.tokenSymbol}`, { field: "chainId" });
    ctx = { services, chain: services.chains.resolve(q.chainId), apiKey };
    asset = paymentAsset(ctx, q.tokenSymbol);
  } else {
    const resolved = await tokenContext(services, apiKey, q.tokenSymbol);
    ctx = resolved.ctx;
    asset = { symbol: resolved.token.symbol, address: resolved.token.tokenAddress, decimals: resolved.token.decimals };
  }
  const allowance = await erc20(ctx, asset.address).allowance(q.ownerAddress, q.spenderAddress);
  return {
    tokenSymbol: asset.symbol,
    tokenAddress: asset.address,
    ownerAddress: q.ownerAddress,
    spenderAddress: q.spenderAddress,
    allowance: fromUnits(allowance, asset.decimals),
    allowanceRaw: allowance.toString(),
  };
}

/** Distributions from the records; totals and per-holder withdrawable live from the chain. */
export async function dividendView(
  ctx: DomainContext,
  token: TokenRecord,
  holderAddress?: string,
): Promise<z.infer<typeof DividendDistribution>> {
  const contract = securityToken(ctx, token);
  const pd = token.paymentToken.decimals;
  const [distributions, totalDistributed] = await Promise.all([
    ctx.services.dividends.distributions(token.id),
    contract.totalDividendsDistributed(),
  ]);
  const addresses = holderAddress
    ? [getAddress(holderAddress)]
    : (await ctx.services.investors.holders(token.id)).map((h) => getAddress(h.address));
  const holders = await Promise.all(
    addresses.map(async (address) => {
      const [balance, withdrawable, withdrawn] = await Promise.all([
        contract.balanceOf(address),
        contract.withdrawableDividendOf(address),
        contract.withdrawnDividendOf(address),
      ]);
      const known = await ctx.services.investors.byAddress(token.id, address);
      return {
        address,
        email: known?.email ?? null,
        tokenBalance: fromUnits(balance, token.decimals),
        withdrawable: fromUnits(withdrawable, pd),
        withdrawableRaw: withdrawable.toString(),
        withdrawn: fromUnits(withdrawn, pd),
        withdrawnRaw: withdrawn.toString(),
      };
    }),
  );
  return {
    tokenSymbol: token.symbol,
    tokenAddress: token.tokenAddress,
    paymentToken: { symbol: token.paymentToken.symbol, address: token.paymentToken.address, decimals: pd },
    totalDistributed: fromUnits(totalDistributed, pd),
    totalDistributedRaw: totalDistributed.toString(),
    distributions: distributions.map((d) => ({
      id: d.id,
      amount: fromUnits(BigInt(d.amount), pd),
      amountRaw: d.amount,
      distributor: getAddress(d.distributor),
      txHash: d.txHash,
      blockNumber: d.blockNumber,
      date: d.createdAt,
    })),
    holders,
  };
}
