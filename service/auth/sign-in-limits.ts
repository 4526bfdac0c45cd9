import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { ApiError } from "../errors";
import type { Db } from "../store/db";
import { clientSubject } from "./client-address";
import { limiterStore } from "./rate-limits";
import type { ClientAddress } from "../wire/request";

/**
 * Limits on the console's sign-in (POST /console/api/session):
 *
 *   attempts            20 per minute per client IP (an IPv4 address or an IPv6 /64)
 *   refused passwords   5 per 15 minutes per operator e-mail: from then on that e-mail's password sign-ins answer 429
 *                       until the window ends, wherever they come from (a guessing botnet gets 5 guesses per account)
 *   refused links       10 per 15 minutes per client IP (a link token nobody has, used or expired)
 *
 * Refusals are 429 with Retry-After (seconds).
 */
export const SIGN_IN_LIMITS = { attemptsPerMinute: 20, refusedPasswords: 5, refusedLinks: 10, windowSeconds: 15 * 60 };

export class SignInLimiter {
  private readonly attempts: RateLimiterAbstract;
  private readonly passwords: RateLimiterAbstract;
  private readonly links: RateLimiterAbstract;

  constructor(db: Db) {
    this.attempts = limiterStore(db, "console_sign_in", SIGN_IN_LIMITS.attemptsPerMinute, 60);
    this.passwords = limiterStore(
      db,
      "console_refused_password",
      SIGN_IN_LIMITS.refusedPasswords,
      SIGN_IN_LIMITS.windowSeconds,
    );
    this.links = limiterStore(db, "console_refused_link", SIGN_IN_LIMITS.refusedLinks, SIGN_IN_LIMITS.windowSeconds);
  }

  /** Counts one sign-in attempt of the caller's IP, and refuses one for an e-mail (or IP) past its refusals. */
  async admit(client: ClientAddress, email?: string): Promise<void> {
    try {
      await this.attempts.consume(clientSubject(client), 1);
    } catch (error) {
      if (error instanceof RateLimiterRes)
        throw tooMany(
          `${SIGN_IN_LIMITS.attemptsPerMinute} sign-in attempts per minute from one address`,
          error.msBeforeNext,
        );
      throw error;
    }
    const checks: [RateLimiterAbstract, string, number, string][] = [
      [this.links, clientSubject(client), SIGN_IN_LIMITS.refusedLinks, "refused sign-in links from one address"],
    ];
    if (email)
      checks.push([
        this.passwords,
        email.toLowerCase(),
        SIGN_IN_LIMITS.refusedPasswords,
        "refused passwords for one operator",
      ]);
    for (const [limiter, subject, points, what] of checks) {
      const used = await limiter.get(subject);
      if (used && used.consumedPoints >= points)
        throw tooMany(`${points} ${what} in ${SIGN_IN_LIMITS.windowSeconds / 60} minutes`, used.msBeforeNext);
    }
  }

  /** A wrong password (or an e-mail without an operator) counts against that e-mail. */
  async refusedPassword(email: string): Promise<void> {
    await this.passwords.consume(email.toLowerCase(), 1).catch(ignoreLimit);
  }

  /** A link that signs nobody in counts against the caller's IP. */
  async refusedLink(client: ClientAddress): Promise<void> {
    await this.links.consume(clientSubject(client), 1).catch(ignoreLimit);
  }
}

const ignoreLimit = (error: unknown) => {
  if (!(error instanceof RateLimiterRes)) throw error;
};

function tooMany(limit: string, msBeforeNext: number): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    "RATE_LIMITED",
    `Too many sign-in attempts: ${limit}; retry after ${seconds} seconds`,
    { limit, retryAfterSeconds: seconds },
    { "Retry-After": String(seconds) },
  );
}
