import { z } from "zod";
import { KYC_STATUSES, type KycInvestorRecord } from "../store/kyc";
import type { TokenRecord } from "../store/tokens";
import { linkState, linkUrl, openLinkToken } from "./links";
import type { Stores } from "../store/stores";

/** What the KYC views read. */
export type KycViewServices = Pick<Stores, "kyc" | "kycLinks" | "sealer"> & { baseUrl: string };

/** The onboarding state of an investor as reads show it (its response schema, and its type). */
export const KycViewSchema = z
  .strictObject({
    investorId: z
      .string()
      .nullable()
      .meta({ description: "The onboarding record (kyc.* events name it); null without one" }),
    status: z.enum(KYC_STATUSES),
    needKyc: z.boolean(),
    url: z
      .string()
      .nullable()
      .meta({ description: "The live link while the investor has not used it yet; null otherwise" }),
    linkExpiresAt: z.string().nullable(),
    walletAddress: z
      .string()
      .nullable()
      .meta({ description: "The wallet the investor proved by signature (cleared only once approved)" }),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    country: z.string().nullable(),
    submittedAt: z.string().nullable(),
    reviewedAt: z.string().nullable(),
    reviewedBy: z.string().nullable(),
    reason: z.string().nullable(),
  })
  .meta({ id: "KycState" });

export type KycView = z.infer<typeof KycViewSchema>;

const NO_RECORD: KycView = {
  investorId: null,
  status: "none",
  needKyc: false,
  url: null,
  linkExpiresAt: null,
  walletAddress: null,
  firstName: null,
  lastName: null,
  country: null,
  submittedAt: null,
  reviewedAt: null,
  reviewedBy: null,
  reason: null,
};

/** The onboarding state shown by get-investor-info and get-investors. */
export async function kycView(services: KycViewServices, record: KycInvestorRecord | undefined): Promise<KycView> {
  if (!record) return NO_RECORD;
  const link = record.status === "invited" ? await services.kycLinks.openLink(record.id) : undefined;
  const token = link !== undefined && linkState(link) === "live" ? openLinkToken(services.sealer, link) : null;
  return {
    investorId: record.id,
    status: record.status,
    needKyc: record.needKyc,
    url: token ? linkUrl(services.baseUrl, token) : null,
    linkExpiresAt: link?.expiresAt ?? null,
    walletAddress: record.walletAddress,
    firstName: record.firstName,
    lastName: record.lastName,
    country: record.country,
    submittedAt: record.submittedAt,
    reviewedAt: record.reviewedAt,
    reviewedBy: record.reviewedBy,
    reason: record.reviewReason,
  };
}

/** The onboarding record of an investor as the caller sees it for one token (the token's tokenizer scope). */
export async function kycRecordForToken(
  services: KycViewServices,
  token: TokenRecord,
  callerKeyId: string,
  email: string,
) {
  const scope = await services.kyc.scopeOfTokenizer(token.tokenizerEmail, callerKeyId);
  return services.kyc.findInScope(scope, callerKeyId, email);
}
