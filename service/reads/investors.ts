import { getAddress } from "ethers";
import { checksumAddress } from "../crypto/checksum-address";
import type { z } from "zod";
import { badRequest, notFound } from "../errors";
import type { DomainContext } from "../domains/context";
import type { ApiKeyRecord } from "../store/api-keys";
import type { KycStatus } from "../store/kyc";
import type { TokenRecord } from "../store/tokens";
import { kycRecordForToken, kycView } from "../onboarding/views";
import { fromUnits } from "../model/units";
import { holdingControlView, tokenHolding, type TokenizationReadServices } from "./tokenization";
import type { InvestorInfo, InvestorList, InvestorListEntry as InvestorListEntrySchema } from "./tokenization-schemas";

// The investors of a token: one wallet, one investor's holdings and onboarding, the paged list.

/** An investor wallet from an address, or from an e-mail recorded for this token. */
export async function investorWallet(
  services: TokenizationReadServices,
  token: TokenRecord,
  address?: string,
  email?: string,
): Promise<{ address: string; email: string | null }> {
  if (address) {
    const known = await services.investors.byAddress(token.id, address);
    return { address: checksumAddress(address), email: known?.email ?? email ?? null };
  }
  if (!email) throw badRequest("investorAddress or investorEmail is required", { field: "investorAddress" });
  const [known] = await services.investors.byEmail(token.id, email);
  if (!known) throw notFound(`No wallet is recorded for ${email} on ${token.symbol}`, { field: "investorEmail" });
  return { address: checksumAddress(known.address), email: known.email };
}

/**
 * An investor of a token by e-mail: the wallets recorded for it on the token (balances and whitelist live from the
 * chain) and its onboarding state (KYC status, the live link while pending, the verified wallet). 404 when neither
 * exists. Without a recorded wallet, the wallet the investor proved by signature stands in.
 */
export async function investorInfoView(
  ctx: DomainContext,
  token: TokenRecord,
  email: string,
): Promise<z.infer<typeof InvestorInfo>> {
  const wallets = await ctx.services.investors.byEmail(token.id, email);
  const record = await kycRecordForToken(ctx.services, token, ctx.apiKey!.id, email);
  if (!wallets.length && !record)
    throw notFound(`No investor ${email} is recorded for ${token.symbol}`, { field: "email" });
  const kyc = await kycView(ctx.services, record);
  const primary = wallets[0];
  const addresses = wallets.map((w) => getAddress(w.address));
  if (!addresses.length && kyc.walletAddress) addresses.push(getAddress(kyc.walletAddress));
  const balances = await Promise.all(
    addresses.map(async (address) => {
      const holding = await tokenHolding(ctx, token, address);
      return {
        walletAddress: address,
        tokenBalance: fromUnits(holding.balance, token.decimals),
        whitelisted: holding.whitelisted,
        ...holdingControlView(token, holding),
      };
    }),
  );
  const none = {
    frozenAmount: "0",
    frozenAmountRaw: "0",
    unfrozenBalance: "0",
    addressFrozen: false,
    tokenPaused: false,
  };
  const {
    walletAddress: _primary,
    tokenBalance: _balance,
    whitelisted: _whitelisted,
    ...primaryControls
  } = balances[0] ?? { walletAddress: "", tokenBalance: "0", whitelisted: false, ...none };
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

type InvestorListEntry = z.infer<typeof InvestorListEntrySchema>;

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
  const scope = token
    ? await services.kyc.scopeOfTokenizer(token.tokenizerEmail, apiKey.id)
    : await services.kyc.scopeOfKey(apiKey.id);
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
    .sort(
      (a, b) =>
        (a.email ?? "\uffff").localeCompare(b.email ?? "\uffff") ||
        (a.walletAddress ?? "").localeCompare(b.walletAddress ?? ""),
    );
  return {
    tokenSymbol: token?.symbol ?? null,
    investors: all.slice(query.offset, query.offset + query.limit),
    total: all.length,
    limit: query.limit,
    offset: query.offset,
  };
}
