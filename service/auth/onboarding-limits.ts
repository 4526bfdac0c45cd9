import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { ApiError } from "../errors";
import type { Db } from "../store/db";
import { clientSubject } from "./client-address";
import { limiterStore } from "./rate-limits";
import type { ClientAddress } from "../wire/request";

/**
 * Limits on the investor's onboarding routes (GET /kyc, POST /kyc/message, POST /kyc/submit), per client IP:
 *
 *   requests        60 per minute
 *   unknown links   20 per 15 minutes (answers 404: a token no link has); from then on every onboarding request of
 *                   that IP answers 429 until the window ends, so link tokens cannot be guessed at any useful rate
 *
 * Refusals are 429 with Retry-After (seconds). A link also counts the refused submissions made through it and locks
 * itself at MAX_LINK_FAILURES.
 */
export const ONBOARDING_LIMITS = { requestsPerMinute: 60, unknownLinks: 20, unknownLinksWindowSeconds: 15 * 60 };

export class OnboardingRateLimiter {
  private readonly requests: RateLimiterAbstract;
  private readonly unknownLinks: RateLimiterAbstract;

  constructor(db: Db) {
    this.requests = limiterStore(db, "kyc_req", ONBOARDING_LIMITS.requestsPerMinute, 60);
    this.unknownLinks = limiterStore(
      db,
      "kyc_unknown",
      ONBOARDING_LIMITS.unknownLinks,
      ONBOARDING_LIMITS.unknownLinksWindowSeconds,
    );
  }

  /** Counts one onboarding request of the caller's IP; throws the 429 when it is over a limit. */
  async admit(client: ClientAddress): Promise<void> {
    const subject = clientSubject(client);
    const misses = await this.unknownLinks.get(subject);
    if (misses && misses.consumedPoints >= ONBOARDING_LIMITS.unknownLinks) {
      throw tooMany(
        `${ONBOARDING_LIMITS.unknownLinks} unknown onboarding links per IP in ${ONBOARDING_LIMITS.unknownLinksWindowSeconds / 60} minutes`,
        misses.msBeforeNext,
      );
    }
    try {
      await this.requests.consume(subject, 1);
    } catch (error) {
      if (error instanceof RateLimiterRes)
        throw tooMany(
          `${ONBOARDING_LIMITS.requestsPerMinute} onboarding requests per IP per minute`,
          error.msBeforeNext,
        );
      throw error;
    }
  }

  /** Counts a request that named a link no one has (a 404). */
  async unknownLink(client: ClientAddress): Promise<void> {
    await this.unknownLinks.consume(clientSubject(client), 1).catch((error) => {
      if (!(error instanceof RateLimiterRes)) throw error;
    });
  }
}

function tooMany(limit: string, msBeforeNext: number): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    "RATE_LIMITED",
    `Too many requests: ${limit} exceeded; retry after ${seconds} seconds`,
    { limit, retryAfterSeconds: seconds },
    {
      "Retry-After": String(seconds),
    },
  );
}
