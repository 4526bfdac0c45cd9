import { getAddress } from "ethers";
import { chainIdHex, networkById } from "../chains/networks";
import { badRequest, notFound } from "../errors";
import { authorizedToken, erc20, fromUnits, isPaymentTokenSymbol, paymentAsset, securityToken } from "../methods/common";
import type { MethodContext } from "../methods/types";
import type { Services } from "../services";
import type { ApiKeyRecord } from "../store/api-keys";
import type { TokenRecord } from "../store/tokens";

/** Read context for one token: the key must be allowed to see it (Unauthorized token symbol otherwise). */
export async function tokenContext(services: Services, apiKey: ApiKeyRecord, symbol: string): Promise<{ ctx: MethodContext; token: TokenRecord }> {
  const record = await services.tokens.bySymbol(symbol);
  if (!record) throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
  const chain = services.chains.find(record.chainId);
  if (!chain) throw badRequest(`tokenSymbol ${symbol} lives on chain ${record.chainId}, which this deployment does not serve`, { field: "tokenSymbol" });
  const ctx = { services, chain, apiKey };
  return { ctx, token: await authorizedToken(ctx, symbol) };
}

export function documentUrl(services: Services, ref: string | null): string | null {
  if (!ref) return null;
  return `${services.baseUrl}/documents/${ref.replace(/^sha256:/, "")}`;
}

/** The token record of API-SPEC ("Token record"): no contract address, no balances. */
export function tokenRecordView(services: Services, token: TokenRecord) {
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

export function tokenizerInfoView(token: TokenRecord) {
  return {
    tokenSymbol: token.symbol,
    tokenAddress: token.tokenAddress,
    paymentTokenAddress: token.paymentToken.address,
    paymentTokenSymbol: token.paymentToken.symbol,
    escrowAddress: token.escrowAddress,
    chainId: chainIdHex(token.chainId),
    tokenizerAddress: token.tokenizerAddress,
    companyWalletAddress: token.companyWalletAddress,
    email: token.tokenizerEmail,
    tokenizerEmail: token.tokenizerEmail,
    name: token.name,
    createdTxHash: token.createdTxHash,
    createdBlock: token.createdBlock,
  };
}

/** An investor wallet from an address, or from an e-mail recorded for this token. */
export async function investorWallet(services: Services, token: TokenRecord, address?: string, email?: string): Promise<{ address: string; email: string | null }> {
  if (address) {
    const known = await services.investors.byAddress(token.id, address);
    return { address: getAddress(address), email: known?.email ?? email ?? null };
  }
  if (!email) throw badRequest("investorAddress or investorEmail is required", { field: "investorAddress" });
  const [known] = await services.investors.byEmail(token.id, email);
  if (!known) throw notFound(`No wallet is recorded for ${email} on ${token.symbol}`, { field: "investorEmail" });
  return { address: getAddress(known.address), email: known.email };
}

export async function balanceWhitelistView(ctx: MethodContext, token: TokenRecord, wallet: { address: string; email: string | null }) {
  const contract = securityToken(ctx, token);
  const [balance, whitelisted] = await Promise.all([contract.balanceOf(wallet.address), contract.isWhitelisted(wallet.address)]);
  return {
    tokenSymbol: token.symbol,
    investorAddress: wallet.address,
    investorEmail: wallet.email,
    tokenBalance: fromUnits(balance, token.decimals),
    tokenBalanceRaw: balance.toString(),
    whitelisted,
    whitelistStatus: whitelisted,
  };
}

/** Allowance of a security token or a payment token (which needs the chain to be named). */
export async function allowanceView(services: Services, apiKey: ApiKeyRecord, q: { tokenSymbol: string; ownerAddress: string; spenderAddress: string; chainId?: string }) {
  let ctx: MethodContext;
  let asset: { symbol: string; address: string; decimals: number };
  if (isPaymentTokenSymbol(q.tokenSymbol)) {
    if (!q.chainId) throw badRequest(`chainId is required for the payment token ${q.tokenSymbol}`, { field: "chainId" });
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

export async function investorInfoView(ctx: MethodContext, token: TokenRecord, email: string) {
  const wallets = await ctx.services.investors.byEmail(token.id, email);
  if (!wallets.length) throw notFound(`No investor ${email} is recorded for ${token.symbol}`, { field: "email" });
  const contract = securityToken(ctx, token);
  const primary = wallets[0];
  const balances = await Promise.all(
    wallets.map(async (w) => {
      const [balance, whitelisted] = await Promise.all([contract.balanceOf(w.address), contract.isWhitelisted(w.address)]);
      return { walletAddress: getAddress(w.address), tokenBalance: fromUnits(balance, token.decimals), whitelisted };
    }),
  );
  return {
    email: primary.email,
    firstName: primary.firstName,
    lastName: primary.lastName,
    kycUrl: null,
    profilePicture: null,
    walletAddress: getAddress(primary.address),
    type: primary.investorType ?? "INVESTOR_PERSON",
    tokenSymbol: token.symbol,
    whitelisted: balances[0].whitelisted,
    tokenBalance: balances[0].tokenBalance,
    wallets: balances,
    investments: (await ctx.services.offerings.investmentsByEmail(token.id, email)).map((i) => ({
      id: i.id,
      date: i.createdAt,
      txHash: i.txHash,
      currency: token.paymentToken.symbol,
      amountInUSDT: fromUnits(BigInt(i.amount), token.paymentToken.decimals),
      status: i.status,
      tokenSymbol: token.symbol,
      offeringId: i.offeringId,
      offeringName: i.offeringName,
    })),
  };
}

/** Distributions from the records; totals and per-holder withdrawable live from the chain. */
export async function dividendView(ctx: MethodContext, token: TokenRecord, holderAddress?: string) {
  const contract = securityToken(ctx, token);
  const pd = token.paymentToken.decimals;
  const [distributions, totalDistributed] = await Promise.all([
    ctx.services.dividends.distributions(token.id),
    contract.totalDividendsDistributed(),
  ]);
  const addresses = holderAddress ? [getAddress(holderAddress)] : (await ctx.services.investors.holders(token.id)).map((h) => getAddress(h.address));
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
