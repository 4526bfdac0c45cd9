import type { Db } from "./db";

/** How long an answer is kept for retries with the same Idempotency-Key (as Stripe keeps its keys). */
const KEPT_HOURS = 24;
/** A request under a key that has not finished after this long died with its process: the key may be taken again. */
const ABANDONED_AFTER_MINUTES = 5;
/** Old keys are swept at most this often, by the request that finds it due. */
const SWEEP_EVERY_MS = 60_000;

/** The first answer to an Idempotency-Key, as stored (what the API answered; never the request itself). */
export interface KeptAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** What a request under an Idempotency-Key finds. */
export type IdempotentStart =
  /** The key is this request's now: run it, then keep its answer (or let the key go). */
  | { kind: "new" }
  /** The same request was answered: that answer again. */
  | { kind: "replay"; answer: KeptAnswer }
  /** The key was used for another request, or the same one is still running. */
  | { kind: "conflict"; reason: "another request" | "in progress" };

/**
 * Requests made with an Idempotency-Key (the paid write routes): per scope (the API key, or every keyless caller) and
 * key, a hash of the request and, once it succeeded, its answer. A retry of the same request gets the first answer and
 * is charged once; another request under the key is refused. Answers that are not a success are not kept: the key is
 * let go, so a retry runs again (a 402 quote is followed by the paid call under the same key).
 */
export class IdempotentRequests {
  private sweptAt = 0;

  constructor(private readonly db: Db) {}

  async start(scope: string, key: string, route: string, requestHash: string): Promise<IdempotentStart> {
    await this.sweep();
    const [taken] = await this.db.query<{ taken: boolean }>(
      `INSERT INTO idempotent_requests (scope, idempotency_key, route, request_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope, idempotency_key) DO UPDATE SET route = EXCLUDED.route, request_hash = EXCLUDED.request_hash, created_at = now()
         WHERE idempotent_requests.completed_at IS NULL AND idempotent_requests.created_at < now() - make_interval(mins => ${ABANDONED_AFTER_MINUTES})
       RETURNING true AS taken`,
      [scope, key, route, requestHash],
    );
    if (taken) return { kind: "new" };
    const [row] = await this.db.query<{
      route: string;
      request_hash: string;
      status: number | null;
      body: unknown;
      headers: Record<string, string> | string | null;
    }>(
      "SELECT route, request_hash, status, body, headers FROM idempotent_requests WHERE scope = $1 AND idempotency_key = $2",
      [scope, key],
    );
    if (!row) return this.start(scope, key, route, requestHash); // let go meanwhile
    if (row.route !== route || row.request_hash !== requestHash) return { kind: "conflict", reason: "another request" };
    if (row.status === null) return { kind: "conflict", reason: "in progress" };
    const headers = typeof row.headers === "string" ? JSON.parse(row.headers) : (row.headers ?? {});
    return {
      kind: "replay",
      answer: { status: row.status, body: typeof row.body === "string" ? JSON.parse(row.body) : row.body, headers },
    };
  }

  /** Keeps the answer of the request that holds the key. */
  async keep(scope: string, key: string, answer: KeptAnswer): Promise<void> {
    await this.db.query(
      "UPDATE idempotent_requests SET status = $3, body = $4, headers = $5, completed_at = now() WHERE scope = $1 AND idempotency_key = $2 AND completed_at IS NULL",
      [scope, key, answer.status, JSON.stringify(answer.body ?? null), JSON.stringify(answer.headers)],
    );
  }

  /** Lets the key go (the request did not succeed): a retry runs again. */
  async letGo(scope: string, key: string): Promise<void> {
    await this.db.query(
      "DELETE FROM idempotent_requests WHERE scope = $1 AND idempotency_key = $2 AND completed_at IS NULL",
      [scope, key],
    );
  }

  private async sweep(): Promise<void> {
    if (Date.now() - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = Date.now();
    await this.db.query(
      `DELETE FROM idempotent_requests WHERE created_at < now() - make_interval(hours => ${KEPT_HOURS})`,
    );
  }
}
