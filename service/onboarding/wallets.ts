import { getAddress } from "ethers";
import { badRequest } from "../errors";
import type { MethodContext } from "../methods/types";
import type { KycInvestorRecord } from "../store/kyc";
import type { TokenRecord } from "../store/tokens";

/**
 * What the wallet is for: minting and whitelisting need an investor cleared for it; removing one from the whitelist
 * (whitelistStatus false) takes whatever wallet is known, so a rejected investor can still be removed.
 */
export type WalletPurpose = "mint" | "whitelist" | "unwhitelist" | "premint";

export interface KnownWallet {
  address: string;
  /** The investor's onboarding record in the scope, if any (its names complete the request's). */
  kyc?: KycInvestorRecord;
}

/**
 * The wallet of an investor named only by e-mail (a mintToken or whitelist entry, a premint holder;
 * docs/wire-conventions.md).
 *
 * 1. An onboarding record of the e-mail in the scope (the token's tokenizer scope; for a premint, the key's) that was
 *    invited with needKyc: its verified wallet once approved; KYC pending or KYC rejected otherwise (400).
 * 2. Otherwise the wallet recorded with that e-mail on the token itself (the newest), else the one wallet recorded
 *    with it on the scope's other tokens; several different wallets there are ambiguous (400).
 * 3. Otherwise a 400 saying no wallet is known.
 */
export async function knownWallet(
  ctx: MethodContext,
  input: { email: string; field: string; purpose: WalletPurpose; token?: TokenRecord },
): Promise<KnownWallet> {
  const { services } = ctx;
  const keyId = ctx.apiKey!.id;
  const email = input.email.trim().toLowerCase();
  const { field, token } = input;
  const scope = token
    ? await services.kyc.scopeOfTokenizer(token.tokenizerEmail, keyId)
    : await services.kyc.scopeOfKey(keyId);
  const record = await services.kyc.findInScope(scope, keyId, email);

  if (record?.needKyc) {
    if (input.purpose === "unwhitelist" && record.walletAddress) return { address: record.walletAddress, kyc: record };
    if (input.purpose !== "unwhitelist") {
      if (record.status === "approved") return { address: getAddress(record.walletAddress!), kyc: record };
      if (record.status === "rejected") {
        throw badRequest(
          `${field} ${email}: KYC rejected${record.reviewReason ? ` (${record.reviewReason})` : ""}; its wallet is not used`,
          {
            field,
            kycStatus: record.status,
          },
        );
      }
      throw badRequest(
        `${field} ${email}: KYC pending (status ${record.status}); the investor's wallet is used once the operator approves it`,
        {
          field,
          kycStatus: record.status,
        },
      );
    }
  }

  if (token) {
    const [own] = await services.investors.byEmail(token.id, email);
    if (own) return { address: getAddress(own.address), kyc: record };
  }
  const tokenizerEmails = token ? [token.tokenizerEmail] : (await services.tokens.visibleTo(keyId)).tokenizerEmails;
  const recorded = await services.investors.walletsOfEmail(tokenizerEmails, email);
  if (recorded.length === 1) return { address: getAddress(recorded[0]), kyc: record };
  if (recorded.length > 1) {
    throw badRequest(
      `${field} ${email}: several wallets are recorded for this investor (${recorded.map((a) => getAddress(a)).join(", ")}); give investorAddress`,
      {
        field,
        wallets: recorded.map((a) => getAddress(a)),
      },
    );
  }
  throw badRequest(
    `${field} ${email}: no wallet known for this investor; give investorAddress, or onboard the investor with POST /create-kyc-link`,
    {
      field,
      kycStatus: record?.status ?? "none",
    },
  );
}
