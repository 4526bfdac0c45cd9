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
 * Refusals are 429 with Retry-After (seconds). A limit's first refusal in its window is a lockout beginning (the
 * console audits it); the refusals after it are the same lockout.
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

  /**
   * Counts one sign-in attempt of the caller's IP, and refuses one for an e-mail (or IP) past its refusals
   * (SignInLockedOut: a 429, which says whether this attempt is the one that began the address's lockout).
   */
  async admit(client: ClientAddress, email?: string): Promise<void> {
    try {
      await this.attempts.consume(clientSubject(client), 1);
    } catch (error) {
      if (error instanceof RateLimiterRes)
        throw new SignInLockedOut(
          `${SIGN_IN_LIMITS.attemptsPerMinute} sign-in attempts per minute from one address`,
          error.msBeforeNext,
          error.consumedPoints === SIGN_IN_LIMITS.attemptsPerMinute + 1,
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
        throw new SignInLockedOut(
          `${points} ${what} in ${SIGN_IN_LIMITS.windowSeconds / 60} minutes`,
          used.msBeforeNext,
          false,
        );
    }
  }

  /**
   * A wrong password (or an e-mail without an operator) counts against that e-mail. Answers the lockout it began (when
   * it was that e-mail's last refusal allowed in the window): until when sign-ins with it are refused.
   */
  async refusedPassword(email: string): Promise<{ lockedUntil: string } | undefined> {
    const counted = await this.passwords.consume(email.toLowerCase(), 1).catch(ignoreLimit);
    return counted && counted.consumedPoints === SIGN_IN_LIMITS.refusedPasswords
      ? { lockedUntil: new Date(Date.now() + counted.msBeforeNext).toISOString() }
      : undefined;
  }

  /** A link that signs nobody in counts against the caller's IP; answers the lockout it began, as refusedPassword. */
  async refusedLink(client: ClientAddress): Promise<{ lockedUntil: string } | undefined> {
    const counted = await this.links.consume(clientSubject(client), 1).catch(ignoreLimit);
    return counted && counted.consumedPoints === SIGN_IN_LIMITS.refusedLinks
      ? { lockedUntil: new Date(Date.now() + counted.msBeforeNext).toISOString() }
      : undefined;
  }
}

const ignoreLimit = (error: unknown): undefined => {
  if (!(error instanceof RateLimiterRes)) throw error;
  return undefined;
};

/** A sign-in refused by a limit (429 with Retry-After). `beginsLockout`: this attempt is the limit's first refusal. */
export class SignInLockedOut extends ApiError {
  constructor(
    readonly limit: string,
    msBeforeNext: number,
    readonly beginsLockout: boolean,
  ) {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    super(
      "RATE_LIMITED",
      `Too many sign-in attempts: ${limit}; retry after ${seconds} seconds`,
      { limit, retryAfterSeconds: seconds },
      { "Retry-After": String(seconds) },
    );
  }
}
