import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { ApiError } from "../errors";
import type { Db } from "../store/db";
import { limiterStore } from "./rate-limits";

/**
 * Limits on requests that cost the service more than a read of its own records, each counted per subject (an API key
 * or a client IP) in a fixed window, in the database shared by every instance on PostgreSQL
 * and in the process on the embedded database (limiterStore). Over a limit: 429 with Retry-After.
 *
 *   document uploads (PATCH /patch-token-docs)      20 per minute per IP, 10 per minute per key
 *   status by a hash this service never saw          30 per minute per IP or key (each asks every chain it serves)
 */
export const REQUEST_LIMITS = {
  uploadsPerIp: { points: 20, seconds: 60, label: "20 document uploads per IP per minute" },
  uploadsPerKey: { points: 10, seconds: 60, label: "10 document uploads per API key per minute" },
  unknownHashes: { points: 30, seconds: 60, label: "30 status reads of unknown transaction hashes per minute" },
} as const;

export type RequestLimitName = keyof typeof REQUEST_LIMITS;

/** One limit: `points` requests per `seconds` per subject. */
export class RequestLimit {
  private readonly store: RateLimiterAbstract;

  constructor(
    db: Db,
    private readonly name: RequestLimitName,
  ) {
    const { points, seconds } = REQUEST_LIMITS[name];
    this.store = limiterStore(db, `req_${name}`, points, seconds);
  }

  /** Counts one request of `subject`; throws the 429 (with Retry-After) when it is over the limit. */
  async admit(subject: string): Promise<void> {
    try {
      await this.store.consume(subject, 1);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      const { label } = REQUEST_LIMITS[this.name];
      throw new ApiError(
        "RATE_LIMITED",
        `Too many requests: ${label} exceeded; retry after ${seconds} seconds`,
        { limit: label, retryAfterSeconds: seconds },
        {
          "Retry-After": String(seconds),
        },
      );
    }
  }
}

/** The limits of one service, made on first use (the OpenAPI document builds the routes without a database). */
export class RequestLimits {
  private readonly made = new Map<RequestLimitName, RequestLimit>();

  constructor(private readonly db: Db) {}

  of(name: RequestLimitName): RequestLimit {
    let limit = this.made.get(name);
    if (!limit) this.made.set(name, (limit = new RequestLimit(this.db, name)));
    return limit;
  }
}
