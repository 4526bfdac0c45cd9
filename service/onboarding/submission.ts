import { z } from "zod";
import { ApiError, conflict, notFound, type ErrorCode } from "../errors";
import { address } from "../wire/fields";
import type { KycInvestorRecord } from "../store/kyc";
import type { KycLinkRecord } from "../store/kyc-links";
import { isCountryCode } from "./countries";
import { LINK_TOKEN_PATTERN, linkState, MAX_LINK_FAILURES, type LinkState } from "./links";
import { issueMessage, renderMessage, verifyWalletProof } from "./wallet-proof";
import type { Stores } from "../store/stores";
import type { KycProvider } from "./provider";
import type { Logger } from "../logger";

/** What an investor's submission uses. */
export type SubmissionServices = Pick<Stores, "db" | "kyc" | "kycLinks"> & {
  baseUrl: string;
  kycProvider: KycProvider;
  logger: Logger;
};

// ---------------------------------------------------------------------------------------------------------------
// Request fields of the investor's page

export const linkToken = z
  .string()
  .regex(LINK_TOKEN_PATTERN, "must be the token of a KYC link")
  .meta({ description: "The token of the link (its ?token=)" });

const personName = z
  .string()
  .trim()
  .min(1, "is required")
  .max(100, "must be at most 100 characters")
  .regex(/^\p{L}[\p{L}\p{M}' .-]*$/u, "must be letters, with spaces, apostrophes, hyphens or periods");

export const countryCode = z
  .string()
  .trim()
  .toUpperCase()
  .refine(isCountryCode, "must be an ISO 3166-1 alpha-2 country code such as DE or US")
  .meta({ description: "ISO 3166-1 alpha-2", example: "DE" });

const details = {
  token: linkToken,
  firstName: personName,
  lastName: personName,
  country: countryCode,
  walletAddress: address,
};

export const messageRequest = z.strictObject({
  ...details,
  chainId: z.number({ error: "must be the wallet's chain id (a number)" }).int().min(1).max(Number.MAX_SAFE_INTEGER),
});

export const submitRequest = z.strictObject({
  ...details,
  message: z.string().min(1).max(4000),
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte 0x-hex signature"),
});

// ---------------------------------------------------------------------------------------------------------------
// Links

const LINK_PROBLEMS: Record<Exclude<LinkState, "live">, { code: ErrorCode; title: string; message: string }> = {
  used: {
    code: "LINK_USED",
    title: "This link has already been used",
    message:
      "Your details were already submitted with this link. Your issuer will contact you if anything else is needed.",
  },
  voided: {
    code: "LINK_REPLACED",
    title: "This link is no longer valid",
    message: "A newer link replaced it, or the onboarding was closed. Use the most recent link your issuer sent you.",
  },
  expired: {
    code: "LINK_EXPIRED",
    title: "This link has expired",
    message: "Ask your issuer for a new onboarding link.",
  },
  locked: {
    code: "LINK_LOCKED",
    title: "This link is locked",
    message: `It was locked after ${MAX_LINK_FAILURES} refused submissions. Ask your issuer for a new onboarding link.`,
  },
};

export type LinkProblem = ApiError & { title: string; explanation: string };

/** A link problem as an ApiError; `title` and `explanation` are what its page shows. */
export function linkError(state: LinkState | "unknown"): LinkProblem {
  if (state === "unknown") {
    const title = "This link is not valid";
    const explanation = "Check that you copied all of it, or ask your issuer for a new one.";
    return Object.assign(notFound(`${title}. ${explanation}`, { field: "token" }), { title, explanation });
  }
  if (state === "live") throw new Error("a live link is not an error");
  const p = LINK_PROBLEMS[state];
  return Object.assign(new ApiError(p.code, `${p.title}. ${p.message}`, { field: "token", linkState: state }), {
    title: p.title,
    explanation: p.message,
  });
}

/** A link and its investor, when the link can still be used; 404 for an unknown token, 410 for a used, replaced or expired one. */
export async function liveLink(
  services: SubmissionServices,
  token: string,
): Promise<{ link: KycLinkRecord; investor: KycInvestorRecord }> {
  const link = LINK_TOKEN_PATTERN.test(token) ? await services.kycLinks.linkByToken(token) : undefined;
  if (!link) throw linkError("unknown");
  const state = linkState(link);
  if (state !== "live") throw linkError(state);
  const investor = (await services.kyc.get(link.investorId))!;
  return { link, investor };
}

/**
 * The onboarding a used link led to, for the investor who opens it again: its record while it is submitted (awaiting
 * review), approved or rejected; undefined for a link that is not used, unknown, or whose investor was invited again.
 */
export async function outcomeOfUsedLink(
  services: SubmissionServices,
  token: string,
): Promise<KycInvestorRecord | undefined> {
  const link = LINK_TOKEN_PATTERN.test(token) ? await services.kycLinks.linkByToken(token) : undefined;
  if (!link || linkState(link) !== "used") return undefined;
  const investor = await services.kyc.get(link.investorId);
  return investor && ["submitted", "approved", "rejected"].includes(investor.status) ? investor : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// The two steps of the page

/** Step 1: the sign-in message for these details and this wallet. Writes nothing. */
export async function issueSignInMessage(services: SubmissionServices, body: z.infer<typeof messageRequest>) {
  const { link, investor } = await liveLink(services, body.token);
  const message = issueMessage({
    baseUrl: services.baseUrl,
    address: body.walletAddress,
    chainId: body.chainId,
    nonce: link.nonce,
    claims: { email: investor.email, firstName: body.firstName, lastName: body.lastName, country: body.country },
    linkExpiresAt: link.expiresAt,
  });
  return {
    message: renderMessage(message),
    nonce: message.nonce,
    issuedAt: message.issuedAt,
    expirationTime: message.expirationTime,
  };
}

/**
 * Step 2: the signed message. Verified against the link's nonce, the service's site, the details and the wallet; then,
 * under the link's row lock, the link is used and the investor becomes submitted. Refusals write nothing.
 */
export async function submitWalletProof(services: SubmissionServices, body: z.infer<typeof submitRequest>) {
  const { link, investor } = await liveLink(services, body.token);
  const claims = { email: investor.email, firstName: body.firstName, lastName: body.lastName, country: body.country };
  let wallet: string;
  try {
    wallet = verifyWalletProof({
      message: body.message,
      signature: body.signature,
      walletAddress: body.walletAddress,
      nonce: link.nonce,
      baseUrl: services.baseUrl,
      claims,
    }).address;
  } catch (error) {
    // Each refused proof counts against the link; after MAX_LINK_FAILURES it is locked (a fresh link is needed).
    if (error instanceof ApiError && error.status < 500)
      await services.kycLinks.recordLinkFailure(link.tokenHash, MAX_LINK_FAILURES);
    throw error;
  }
  const submitted = await services.db.transaction(async (q) => {
    const locked = (await services.kycLinks.linkByToken(body.token, q, true))!;
    const state = linkState(locked);
    if (state !== "live") throw linkError(state);
    const current = (await services.kyc.lock(q, locked.investorId))!;
    if (current.status !== "invited")
      throw conflict(`This onboarding is ${current.status}; it no longer takes submissions`, {
        kycStatus: current.status,
      });
    await services.kycLinks.markLinkUsed(q, locked.tokenHash);
    const updated = await services.kyc.submit(q, current.id, {
      firstName: claims.firstName,
      lastName: claims.lastName,
      country: claims.country,
      walletAddress: wallet,
      proofMessage: body.message,
    });
    await services.kyc.addEvent(q, current.id, "submitted", "investor", { walletAddress: wallet });
    return updated;
  });
  try {
    await services.kycProvider.submitted(submitted);
  } catch (error) {
    services.logger.error(
      { err: (error as Error).message, investorId: submitted.id, provider: services.kycProvider.name },
      "KYC provider did not take the submission",
    );
  }
  return {
    status: submitted.status,
    email: submitted.email,
    firstName: submitted.firstName,
    lastName: submitted.lastName,
    country: submitted.country,
    walletAddress: submitted.walletAddress,
    submittedAt: submitted.submittedAt,
  };
}
