import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { ApiError } from "../errors";
import { clientSubject } from "./client-address";
import type { Db } from "../store/db";
import type { ClientAddress } from "../wire/request";

/**
 * Limits on POST /prepare-transactions (docs/wire-conventions.md, Access, credits and prices), kept in the database
 * through rate-limiter-flexible's Postgres store so every service instance on one database shares the counters. The
 * embedded database belongs to one process, so there the counters stay in that process's memory (three statements fewer
 * per prepare).
 *
 *                 burst          per minute                 concurrent
 *   without key   30 per IP      10 per IP, 5 per wallet    20 per IP          (IP: an IPv4 address or an IPv6 /64)
 *   with a key    120 per key    60 per key                 500 per key
 *
 * "Burst over per-minute" is a token bucket: the per-minute limiter refills every minute, and a burst allowance on top
 * of it refills over the time the steady rate needs to earn it back.
 */
export interface PrepareLimits {
  burst: number;
  perMinute: number;
  perWalletPerMinute?: number;
  concurrent: number;
}

export const ANONYMOUS_LIMITS: PrepareLimits = { burst: 30, perMinute: 10, perWalletPerMinute: 5, concurrent: 20 };
export const KEYED_LIMITS: PrepareLimits = { burst: 120, perMinute: 60, concurrent: 500 };

const RETRY_AFTER_SECONDS = "60";
/** A request that never finishes (crashed process) stops counting against concurrency after this long. */
const CONCURRENCY_LEASE_SECONDS = 120;

/**
 * A counter of `points` per `duration` seconds: in the database (table rate_limits) on a PostgreSQL server, shared by
 * every instance; in this process's memory on the embedded database, which belongs to one process. `lazy`: its
 * statements ride with the next rate-limit trip (Db.rateLimiterClient), for points given back that nobody waits for.
 */
export function limiterStore(
  db: Db,
  keyPrefix: string,
  points: number,
  duration: number,
  options: { lazy?: boolean } = {},
): RateLimiterAbstract {
  return db.kind === "pglite"
    ? new RateLimiterMemory({ keyPrefix, points, duration })
    : new RateLimiterPostgres({
        storeClient: db.rateLimiterClient(options),
        storeType: "client",
        tableName: "rate_limits",
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix,
        points,
        duration,
      });
}

function rateLimited(limit: string): ApiError {
  return new ApiError(
    "RATE_LIMITED",
    `Too many requests: ${limit} exceeded; retry after 60 seconds`,
    { limit },
    {
      "Retry-After": RETRY_AFTER_SECONDS,
    },
  );
}

interface Tier {
  rate: BurstyRateLimiter;
  wallet?: RateLimiterAbstract;
  concurrency: RateLimiterAbstract;
  /**
   * The same counter, for a finished request's slot given back: on PostgreSQL that statement rides with the next
   * rate-limit trip of this instance (ahead of it: this instance never counts a slot given back), or goes alone within
   * 2 s; other instances may count the slot that long after the request ended.
   */
  concurrencyRelease: RateLimiterAbstract;
}

export class PrepareRateLimiter {
  private readonly anonymous: Tier;
  private readonly keyed: Tier;

  constructor(db: Db) {
    const store = (keyPrefix: string, points: number, duration: number, lazy = false) =>
      limiterStore(db, keyPrefix, points, duration, { lazy });
    const tier = (name: string, limits: PrepareLimits): Tier => {
      const extra = limits.burst - limits.perMinute;
      const refillSeconds = Math.ceil((extra / limits.perMinute) * 60);
      const concurrency = store(`${name}_conc`, limits.concurrent, CONCURRENCY_LEASE_SECONDS);
      return {
        rate: new BurstyRateLimiter(
          store(`${name}_min`, limits.perMinute, 60),
          store(`${name}_burst`, extra, refillSeconds),
        ),
        wallet: limits.perWalletPerMinute ? store(`${name}_wallet`, limits.perWalletPerMinute, 60) : undefined,
        concurrency,
        // In memory the counter is the limiter object itself: the same one takes and gives back.
        concurrencyRelease:
          db.kind === "pglite"
            ? concurrency
            : store(`${name}_conc`, limits.concurrent, CONCURRENCY_LEASE_SECONDS, true),
      };
    };
    this.anonymous = tier("prep_anon", ANONYMOUS_LIMITS);
    this.keyed = tier("prep_key", KEYED_LIMITS);
  }

  /**
   * Counts one prepare against the caller's limits (the validated key when there is one, else the client IP, plus
   * the signer wallet without a key) and holds a concurrency slot. Returns the release function (it gives the slot back
   * without waiting for the database); throws a 429.
   */
  async admit(
    client: ClientAddress,
    apiKeyId: string | undefined,
    wallet: string | undefined,
  ): Promise<() => Promise<void>> {
    const tier = apiKeyId ? this.keyed : this.anonymous;
    const subject = apiKeyId ? `key:${apiKeyId}` : clientSubject(client);
    // The rate and the concurrency slot are asked at once (on PostgreSQL, one trip): a slot taken by a request that is
    // then refused is given back, as a refused slot is, or every refusal would shrink the limit.
    const [rate, slot] = await Promise.allSettled([
      consume(tier.rate, subject, apiKeyId ? "per-key request rate" : "per-IP request rate"),
      consume(tier.concurrency, subject, "concurrent requests"),
    ]);
    try {
      if (rate.status === "rejected") throw rate.reason;
      if (tier.wallet && wallet)
        await consume(tier.wallet, `wallet:${wallet.toLowerCase()}`, "per-wallet request rate");
      if (slot.status === "rejected") throw slot.reason;
    } catch (error) {
      await tier.concurrency.reward(subject, 1).catch(() => undefined);
      throw error;
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      // Not awaited: the request's answer does not wait for its slot's statement (see Tier.concurrencyRelease).
      void tier.concurrencyRelease.reward(subject, 1).catch(() => undefined);
    };
  }
}

async function consume(limiter: BurstyRateLimiter | RateLimiterAbstract, key: string, limit: string): Promise<void> {
  try {
    await limiter.consume(key, 1);
  } catch (error) {
    if (error instanceof RateLimiterRes || (error as { msBeforeNext?: number })?.msBeforeNext !== undefined)
      throw rateLimited(limit);
    throw error;
  }
}
