import type { Request, Response } from "express";
import { OnboardingRateLimiter } from "../auth/onboarding-limits";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { ApiError } from "../errors";
import { email } from "../wire/fields";
import { defineRoute } from "../http/route";
import { KYC_STATUSES } from "../store/kyc";
import { createKycLink } from "../onboarding/invitations";
import { linkProblemPage, onboardingPage, outcomePage, type RenderedPage } from "../onboarding/page";
import {
  issueSignInMessage,
  liveLink,
  messageRequest,
  outcomeOfUsedLink,
  submitRequest,
  submitWalletProof,
  type LinkProblem,
} from "../onboarding/submission";
import type { Services } from "../usecases/services";

/** Exactly { email, needKyc? }: any other key is refused, naming it. */
const createKycLinkBody = z.strictObject(
  {
    email: email.meta({ description: "The investor's e-mail; the investor joins the key's tokenizer scope" }),
    needKyc: z
      .boolean({ error: "must be true or false (a JSON boolean)" })
      .default(true)
      .meta({ description: "false registers the investor without a link (url null)" }),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `${issue.keys.join(", ")}: not a field of this body, which is exactly { email, needKyc? }`
        : undefined,
  },
);

const KycLink = z
  .strictObject({
    email: z.string(),
    needKyc: z.boolean(),
    userCreated: z.boolean().meta({ description: "The e-mail was new in the key's scope" }),
    invitationSent: z.boolean().meta({ description: "The link was e-mailed (SMTP configured and accepted)" }),
    url: z
      .string()
      .nullable()
      .meta({ description: "The single-use link (null with needKyc false): deliver it when invitationSent is false" }),
    kycStatus: z.enum(KYC_STATUSES),
    expiresAt: z.string().nullable(),
  })
  .meta({ id: "KycLink" });

const KycLinkState = z.strictObject({ email: z.string(), kycStatus: z.enum(KYC_STATUSES), expiresAt: z.string() });

const SignInMessage = z
  .strictObject({
    message: z.string().meta({ description: "The EIP-4361 message for the wallet to sign (personal_sign)" }),
    nonce: z.string(),
    issuedAt: z.string(),
    expirationTime: z.string(),
  })
  .meta({ id: "KycSignInMessage" });

const KycSubmitted = z
  .strictObject({
    status: z.enum(KYC_STATUSES),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    country: z.string().nullable(),
    walletAddress: z.string().nullable(),
    submittedAt: z.string().nullable(),
  })
  .meta({ id: "KycSubmitted" });

function sendPage(res: Response, status: number, page: RenderedPage): void {
  res.status(status);
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Content-Security-Policy", page.csp);
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.end(page.html);
}

/** The investor page's rate limits (per IP), made on first use: the OpenAPI document builds these routes without a database. */
interface PageLimits {
  /** Every investor-page request counts against its IP's limits, malformed ones included (before parsing). */
  admit: (req: Request) => Promise<void>;
  /** Runs `handle`; a token no link has counts against the IP. */
  limited: <T>(req: Request, handle: () => Promise<T>) => Promise<T>;
}

function pageLimits(services: Services): PageLimits {
  let made: OnboardingRateLimiter | undefined;
  const limiter = () => (made ??= new OnboardingRateLimiter(services.db));
  return {
    admit: (req) => limiter().admit(req),
    limited: async (req, handle) => {
      try {
        return await handle();
      } catch (error) {
        if (isUnknownLink(error)) await limiter().unknownLink(req);
        throw error;
      }
    },
  };
}

/** POST /create-kyc-link */
function createKycLinkRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/create-kyc-link",
    summary:
      "Invite an investor: a single-use KYC link (e-mailed when SMTP is configured); needKyc false registers it without one",
    description:
      "Answers { email, needKyc, userCreated, invitationSent, url } (plus kycStatus and expiresAt). Calling again for a " +
      "pending investor returns a fresh link and voids the old one. Spends one invitation credit.",
    tags: ["onboarding"],
    access: ACCESS.keyEndpoint,
    response: KycLink,
    body: createKycLinkBody,
    handler: async ({ body, caller }) => createKycLink(services, caller.apiKey!, body),
  });
}

/** GET /kyc */
function kycRoute(services: Services, limits: PageLimits) {
  return defineRoute({
    method: "get",
    path: "/kyc",
    summary: "The investor's onboarding page for a link (HTML; JSON with Accept: application/json)",
    description:
      "Unknown links answer 404, used, replaced or expired ones 410, as a page or as a JSON error; the page of a used link shows where the onboarding stands (under review, approved, or rejected with the reason).",
    tags: ["onboarding"],
    access: ACCESS.public,
    response: {
      200: {
        description: "The page (text/html); with Accept: application/json, the link's state",
        schema: KycLinkState,
        content: { mediaType: "text/html", schema: { type: "string" } },
      },
    },
    query: z.object({ token: z.string().optional().meta({ description: "The link's token" }) }),
    rateLimited: true,
    admit: limits.admit,
    handler: async ({ query, req, res }) => {
      const wantsJson = req.accepts(["html", "json"]) === "json";
      try {
        const { link, investor } = await limits.limited(req, () => liveLink(services, query.token ?? ""));
        if (wantsJson) return { email: investor.email, kycStatus: investor.status, expiresAt: link.expiresAt };
        const basePath = new URL(services.baseUrl).pathname.replace(/\/$/, "");
        sendPage(
          res,
          200,
          onboardingPage({ token: query.token!, email: investor.email, expiresAt: link.expiresAt, basePath }),
        );
      } catch (error) {
        if (wantsJson || !(error instanceof ApiError)) throw error;
        // A used link shows where the onboarding stands: under review, approved, or rejected with the reason.
        const outcome = error.code === "LINK_USED" ? await outcomeOfUsedLink(services, query.token ?? "") : undefined;
        if (outcome) return void sendPage(res, 200, outcomePage(outcome));
        const problem = error as Partial<LinkProblem> & ApiError;
        sendPage(
          res,
          error.status,
          linkProblemPage(problem.title ?? "Investor onboarding", problem.explanation ?? error.message),
        );
      }
    },
  });
}

/** POST /kyc/message */
function kycMessageRoute(services: Services, limits: PageLimits) {
  return defineRoute({
    method: "post",
    path: "/kyc/message",
    summary: "The sign-in message (EIP-4361) the investor's wallet signs for its details; writes nothing",
    tags: ["onboarding"],
    access: ACCESS.public,
    response: SignInMessage,
    body: messageRequest,
    rateLimited: true,
    admit: limits.admit,
    handler: async ({ body, req }) => limits.limited(req, () => issueSignInMessage(services, body)),
  });
}

/** POST /kyc/submit */
function kycSubmitRoute(services: Services, limits: PageLimits) {
  return defineRoute({
    method: "post",
    path: "/kyc/submit",
    summary:
      "The investor's details and the signed message: verified, then the link is used and the investor awaits review",
    tags: ["onboarding"],
    access: ACCESS.public,
    response: KycSubmitted,
    body: submitRequest,
    rateLimited: true,
    admit: limits.admit,
    handler: async ({ body, req }) => limits.limited(req, () => submitWalletProof(services, body)),
  });
}

/**
 * Investor onboarding: the issuer's KYC link (API key, invitation credits) and the investor's page, which is public and
 * protected by the link's single-use token.
 */
export function onboardingRoutes(services: Services) {
  const limits = pageLimits(services);
  return [
    createKycLinkRoute(services),
    kycRoute(services, limits),
    kycMessageRoute(services, limits),
    kycSubmitRoute(services, limits),
  ];
}

/** The 404 of a token no link has (linkError("unknown")). */
const isUnknownLink = (error: unknown) =>
  error instanceof ApiError && error.status === 404 && error.details?.field === "token";
