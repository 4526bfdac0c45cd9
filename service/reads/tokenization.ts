import { blockReads } from "../chains/block-reads";
import { getAddress } from "ethers";
import { checksumAddress } from "../crypto/checksum-address";
import { z } from "zod";
import { responseFields } from "../wire/responses";
import { KYC_STATUSES } from "../store/kyc";
import { chainIdHex, networkById } from "../chains/networks";
import { badRequest, notFound } from "../errors";
import type { DomainContext, DomainServices } from "../domains/context";
import type { KycViewServices } from "../onboarding/views";
import type { ApiKeyRecord } from "../store/api-keys";
import type { KycStatus } from "../store/kyc";
import type { TokenRecord } from "../store/tokens";
import { kycRecordForToken, kycView, KycViewSchema } from "../onboarding/views";
import { fromUnits } from "../model/units";
import { authorizedToken, erc20, isPaymentTokenSymbol, paymentAsset, securityToken } from "../domains/tokenization/tokens";

/** What the tokenization reads use. */
export type TokenizationReadServices = DomainServices & KycViewServices;

// Response schemas of the tokenization reads (GET /get-*): the views below return exactly these.

const { address, hash32, integerText, int } = responseFields;
/** An amount in human units of the token ("12.5"). */
const amount = z.string().regex(/^\d+(\.\d+)?$/).meta({ example: "100" });

export const TokenRecordView = z
  .strictObject({
    uuid: z.string(),
    name: z.string().meta({ description: "Company or asset name" }),
    tokenName: z.string(),
    tokenSymbol: z.string(),
    tokenType: z.string(),
    tokenizerEmail: z.string(),
    companyWalletAddress: address,
    tokenLogotype: z.string().nullable().meta({ description: "URL of the uploaded logotype (PATCH /patch-token-docs)" }),
    subscriptionAgreement: z.string().nullable().meta({ description: "Content reference (sha256:…)" }),
    legalDocs: z.string().nullable().meta({ description: "Content reference (sha256:…)" }),
    allowedTokenDecimals: int,
    initialTokenSupply: amount,
    maxTokenSupply: amount.meta({ description: "0: no cap" }),
    url: z.string(),
    paymentToken: z.strictObject({
      symbol: z.string(),
      address,
      decimals: int,
      blockchain: z.strictObject({ chainId: z.string().meta({ description: "0x hex" }), chainName: z.string(), blockExplorerUrl: z.string() }),
    }),
  })
  .meta({ id: "TokenRecord", description: "A token record: no contract address (get-tokenizer-info) and no balances" });

export const VisibleTokens = z
  .strictObject({ tokenSymbols: z.array(z.string()), tokenizerEmails: z.array(z.string()) })
  .meta({ id: "VisibleTokens", description: "Without tokenSymbol: the symbols and tokenizer e-mails the key may see" });
/** What the issuer controls add to a holding (additive fields of get-balance-whitelist and get-investor-info). */
function holdingControlFields() {
  return {
    frozenAmount: amount.meta({ description: "Tokens frozen by the issuer (ERC-7943 getFrozenTokens); may exceed the balance" }),
    frozenAmountRaw: integerText,
    unfrozenBalance: amount.meta({ description: "What the holder may move: the balance less the frozen amount, at least 0" }),
    addressFrozen: z.boolean().meta({ description: "The whole address is frozen: it neither sends nor receives" }),
    tokenPaused: z.boolean().meta({ description: "The token is paused: no holder transfers or burns" }),
  };
}

export const BalanceWhitelist = z
  .strictObject({
    tokenSymbol: z.string(),
    investorAddress: address,
    investorEmail: z.string().nullable(),
    tokenBalance: amount,
    tokenBalanceRaw: integerText,
    whitelisted: z.boolean(),
    whitelistStatus: z.boolean(),
    ...holdingControlFields(),
  })
  .meta({ id: "BalanceWhitelist" });

export const WhitelistStatus = z
  .strictObject({ tokenSymbol: z.string(), investorAddress: address, whitelistStatus: z.boolean(), whitelisted: z.boolean() })
  .meta({ id: "WhitelistStatus" });

export const Allowance = z
  .strictObject({ tokenSymbol: z.string(), tokenAddress: address, ownerAddress: address, spenderAddress: address, allowance: amount, allowanceRaw: integerText })
  .meta({ id: "Allowance" });

export const InvestorInfo = z
  .strictObject({
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    kycUrl: z.string().nullable().meta({ description: "The live onboarding link while the investor is invited" }),
    kycStatus: z.enum(KYC_STATUSES),
    profilePicture: z.null(),
    walletAddress: address.nullable(),
    type: z.string(),
    tokenSymbol: z.string(),
    whitelisted: z.boolean(),
    tokenBalance: amount,
    ...holdingControlFields(),
    wallets: z.array(z.strictObject({ walletAddress: address, tokenBalance: amount, whitelisted: z.boolean(), ...holdingControlFields() })),
    kyc: KycViewSchema,
    investments: z.array(
      z.strictObject({
        id: z.string(),
        date: z.string(),
        txHash: hash32,
        currency: z.string(),
        amountInUSDT: amount,
        status: z.string().meta({ description: "invest, claimTokens or refund" }),
        tokenSymbol: z.string(),
        offeringId: z.string(),
        offeringName: z.string(),
      }),
    ),
  })
  .meta({ id: "InvestorInfo" });

const InvestorListEntry = z.strictObject({
  email: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  country: z.string().nullable(),
  kycStatus: z.enum(KYC_STATUSES),
  kycUrl: z.string().nullable(),
  kycWalletAddress: address.nullable(),
  walletAddress: address.nullable(),
  wallets: z.array(z.strictObject({ walletAddress: address, whitelisted: z.boolean(), receivedTokens: z.boolean() })),
});

export const InvestorList = z
  .strictObject({ tokenSymbol: z.string().nullable(), investors: z.array(InvestorListEntry), total: int, limit: int, offset: int })
  .meta({ id: "InvestorList" });

export const DividendDistribution = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    paymentToken: z.strictObject({ symbol: z.string(), address, decimals: int }),
    totalDistributed: amount,
    totalDistributedRaw: integerText,
    distributions: z.array(
      z.strictObject({ id: z.string(), amount, amountRaw: integerText, distributor: address, txHash: hash32, blockNumber: int, date: z.string() }),
    ),
    holders: z.array(
      z.strictObject({
        address,
        email: z.string().nullable(),
        tokenBalance: amount,
        withdrawable: amount,
        withdrawableRaw: integerText,
        withdrawn: amount,
        withdrawnRaw: integerText,
      }),
    ),
  })
  .meta({ id: "DividendDistribution" });

export const TokenDocsUpload = z
  .strictObject({
    success: z.literal(true),
    tokenSymbol: z.string(),
    tokenLogotypeRef: z.string().nullable(),
    tokenLogotype: z.string().nullable(),
    subscriptionAgreementRef: z.string().nullable(),
    legalDocsRef: z.string().nullable(),
    subscriptionAgreementIpfs: z.string().nullable(),
    legalDocsIpfs: z.string().nullable(),
  })
  .meta({ id: "TokenDocsUpload", description: "Content references (sha256:…) of the uploaded documents" });

/** Read context for one token: the key must be allowed to see it (Unauthorized token symbol otherwise). */
export async function tokenContext(services: TokenizationReadServices, apiKey: ApiKeyRecord, symbol: string): Promise<{ ctx: DomainContext; token: TokenRecord }> {
  const record = await services.tokens.bySymbol(symbol);
  if (!record) throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
  const chain = services.chains.find(record.chainId);
  if (!chain) throw badRequest(`tokenSymbol ${symbol} lives on chain ${record.chainId}, which this deployment does not serve`, { field: "tokenSymbol" });
  const ctx = { services, chain, apiKey };
  return { ctx, token: await authorizedToken(ctx, symbol) };
}

export function documentUrl(services: TokenizationReadServices, ref: string | null): string | null {
  if (!ref) return null;
  return `${services.baseUrl}/documents/${ref.replace(/^sha256:/, "")}`;
}

/** The token record as clients read it: no contract address, no balances. */
export function tokenRecordView(services: TokenizationReadServices, token: TokenRecord): z.infer<typeof TokenRecordView> {
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

/** An investor wallet from an address, or from an e-mail recorded for this token. */
export async function investorWallet(services: TokenizationReadServices, token: TokenRecord, address?: string, email?: string): Promise<{ address: string; email: string | null }> {
  if (address) {
    const known = await services.investors.byAddress(token.id, address);
    return { address: checksumAddress(address), email: known?.email ?? email ?? null };
  }
  if (!email) throw badRequest("investorAddress or investorEmail is required", { field: "investorAddress" });
  const [known] = await services.investors.byEmail(token.id, email);
  if (!known) throw notFound(`No wallet is recorded for ${email} on ${token.symbol}`, { field: "investorEmail" });
  return { address: checksumAddress(known.address), email: known.email };
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
    return Promise.all([contract.balanceOf(address), contract.isWhitelisted(address), contract.getFrozenTokens(address), contract.isFrozen(address), contract.paused()]);
  });
  return { balance, whitelisted, frozenAmount, addressFrozen, tokenPaused };
}

/** The issuer-control fields of a holding, in the token's human units. */
function holdingControlView(token: TokenRecord, h: TokenHolding) {
  return {
    frozenAmount: fromUnits(h.frozenAmount, token.decimals),
    frozenAmountRaw: h.frozenAmount.toString(),
    unfrozenBalance: fromUnits(h.balance > h.frozenAmount ? h.balance - h.frozenAmount : 0n, token.decimals),
    addressFrozen: h.addressFrozen,
    tokenPaused: h.tokenPaused,
  };
}

export async function balanceWhitelistView(ctx: DomainContext, token: TokenRecord, wallet: { address: string; email: string | null }): Promise<z.infer<typeof BalanceWhitelist>> {
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

/**
 * An investor of a token by e-mail: the wallets recorded for it on the token (balances and whitelist live from the
 * chain) and its onboarding state (KYC status, the live link while pending, the verified wallet). 404 when neither
 * exists. Without a recorded wallet, the wallet the investor proved by signature stands in.
 */
export async function investorInfoView(ctx: DomainContext, token: TokenRecord, email: string): Promise<z.infer<typeof InvestorInfo>> {
  const wallets = await ctx.services.investors.byEmail(token.id, email);
  const record = await kycRecordForToken(ctx.services, token, ctx.apiKey!.id, email);
  if (!wallets.length && !record) throw notFound(`No investor ${email} is recorded for ${token.symbol}`, { field: "email" });
  const kyc = await kycView(ctx.services, record);
  const primary = wallets[0];
  const addresses = wallets.map((w) => getAddress(w.address));
  if (!addresses.length && kyc.walletAddress) addresses.push(getAddress(kyc.walletAddress));
  const balances = await Promise.all(
    addresses.map(async (address) => {
      const holding = await tokenHolding(ctx, token, address);
      return { walletAddress: address, tokenBalance: fromUnits(holding.balance, token.decimals), whitelisted: holding.whitelisted, ...holdingControlView(token, holding) };
    }),
  );
  const none = { frozenAmount: "0", frozenAmountRaw: "0", unfrozenBalance: "0", addressFrozen: false, tokenPaused: false };
  const { walletAddress: _primary, tokenBalance: _balance, whitelisted: _whitelisted, ...primaryControls } = balances[0] ?? { walletAddress: "", tokenBalance: "0", whitelisted: false, ...none };
  return {
    email: primary?.email ?? record!.email,
    firstName: primary?.firstName ?? kyc.firstName,
    lastName: primary?.lastName ?? kyc.lastName,
    kycUrl: kyc.url,
    kycStatus: kyc.status,
    profilePicture: null,
    walletAddress: addresses[0] ?? null,
    type: primary?.investorType ?? "INVESTOR_PERSON",
    tokenSymbol: token.symbol,
    whitelisted: balances[0]?.whitelisted ?? false,
    tokenBalance: balances[0]?.tokenBalance ?? "0",
    ...primaryControls,
    wallets: balances,
    kyc,
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

type InvestorListEntry = z.infer<typeof InvestorListEntry>;

/**
 * GET /get-investors. With a token: every wallet recorded for it (grouped by e-mail) and every investor onboarded in
 * its tokenizer scope. Without: every investor onboarded in the key's scope. From the records (no chain reads), one
 * entry per e-mail, ordered by e-mail, paged.
 */
export async function investorsView(
  services: TokenizationReadServices,
  apiKey: ApiKeyRecord,
  query: { token?: TokenRecord; kycStatus?: KycStatus; limit: number; offset: number },
): Promise<z.infer<typeof InvestorList>> {
  const { token } = query;
  const scope = token ? await services.kyc.scopeOfTokenizer(token.tokenizerEmail, apiKey.id) : await services.kyc.scopeOfKey(apiKey.id);
  const records = await services.kyc.listInScope(scope, apiKey.id);
  const entries = new Map<string, InvestorListEntry>();
  const blank = (email: string | null): InvestorListEntry => ({
    email,
    firstName: null,
    lastName: null,
    country: null,
    kycStatus: "none",
    kycUrl: null,
    kycWalletAddress: null,
    walletAddress: null,
    wallets: [],
  });
  for (const r of records) {
    const kyc = await kycView(services, r);
    entries.set(r.email, {
      ...blank(r.email),
      firstName: kyc.firstName,
      lastName: kyc.lastName,
      country: kyc.country,
      kycStatus: kyc.status,
      kycUrl: kyc.url,
      kycWalletAddress: kyc.walletAddress,
      walletAddress: kyc.walletAddress,
    });
  }
  if (token) {
    for (const w of await services.investors.ofToken(token.id)) {
      const key = w.email ? w.email.toLowerCase() : `wallet:${w.address}`;
      const entry = entries.get(key) ?? blank(w.email ? w.email.toLowerCase() : null);
      const walletAddress = getAddress(w.address);
      if (!entry.wallets.length) entry.walletAddress = walletAddress;
      entry.firstName ??= w.firstName;
      entry.lastName ??= w.lastName;
      entry.wallets.push({ walletAddress, whitelisted: w.whitelisted, receivedTokens: w.receivedTokens });
      entries.set(key, entry);
    }
  }
  const all = [...entries.values()]
    .filter((e) => !query.kycStatus || e.kycStatus === query.kycStatus)
    .sort((a, b) => (a.email ?? "\uffff").localeCompare(b.email ?? "\uffff") || (a.walletAddress ?? "").localeCompare(b.walletAddress ?? ""));
  return {
    tokenSymbol: token?.symbol ?? null,
    investors: all.slice(query.offset, query.offset + query.limit),
    total: all.length,
    limit: query.limit,
    offset: query.offset,
  };
}

/** Distributions from the records; totals and per-holder withdrawable live from the chain. */
export async function dividendView(ctx: DomainContext, token: TokenRecord, holderAddress?: string): Promise<z.infer<typeof DividendDistribution>> {
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
