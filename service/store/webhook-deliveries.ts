import { toEnvelope } from "./outbox";
import type { EventEnvelope } from "./outbox";
import type { Db } from "./db";
import { iso, isoOrNull } from "./columns";

export type DeliveryStatus = "pending" | "delivering" | "delivered" | "failed";

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  durationMs: number;
  statusCode: number | null;
  response: string | null;
  error: string | null;
}

export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  txId: string | null;
  manual: boolean;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** A delivery an instance claimed: what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  attempt: number;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: string | null;
  event: EventEnvelope;
}

/** The outcome of one attempt, as the delivery code saw it. */
export interface AttemptOutcome {
  ok: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** The first KiB of the answer's body (text), if any. */
  response: string | null;
  error: string | null;
}

/**
 * Webhook deliveries: created by the database when an event commits (migration 010), one per endpoint the event is
 * for; instances claim due ones with FOR UPDATE SKIP LOCKED and a lease, so no two deliver one at once, and record
 * each attempt. The endpoints they go to are Webhooks' (webhooks.ts).
 */
export class WebhookDeliveries {
  constructor(private readonly db: Db) {}

  /**
   * Claims up to `limit` due deliveries for `instance` until now + leaseMs: pending ones whose time came, and ones whose
   * lease ran out (their instance died mid-attempt). A delivery waits while an earlier one of its endpoint and ordering
   * key (its txId) is not done, so each receiver gets a txId's events in order. Rows another instance is claiming are
   * skipped, never waited for.
   */
  async claim(instance: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const rows = await this.db.query<ClaimRow>(
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
         WHERE w.disabled_at IS NULL
           AND ((d.status = 'pending' AND d.next_attempt_at <= now()) OR (d.status = 'delivering' AND d.lease_until < now()))
           AND (d.manual OR d.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM webhook_deliveries p
             WHERE p.endpoint_id = d.endpoint_id AND p.ordering_key = d.ordering_key AND p.position < d.position
               AND NOT p.manual AND p.status IN ('pending', 'delivering')))
         ORDER BY d.position, d.id LIMIT $2
         FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries d SET status = 'delivering', attempts = d.attempts + 1, claimed_by = $1,
           lease_until = now() + $3::bigint * interval '1 millisecond'
         FROM due WHERE d.id = due.id
         RETURNING d.id, d.endpoint_id, d.event_id, d.attempts
       )
       SELECT c.id::text AS id, c.endpoint_id, c.attempts, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at,
              e.position::text AS position, e.type, e.tx_id, e.chain_id, e.hash, e.data, e.created_at
       FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
       ORDER BY e.position`,
      [instance, limit, leaseMs],
    );
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      attempt: r.attempts,
      url: r.url,
      secretSealed: r.secret_sealed,
      previousSecretSealed: r.previous_secret_sealed,
      previousSecretExpiresAt: isoOrNull(r.previous_secret_expires_at),
      event: toEnvelope(r),
    }));
  }

  /**
   * Records an attempt of a delivery this instance holds (nothing, if its lease was lost meanwhile): delivered; or
   * pending again after the schedule's next delay; or failed once the schedule is spent. The endpoint's failures are
   * tracked: a success clears them, and an endpoint failing for `disableAfterMs` is disabled.
   */
  async recordAttempt(
    instance: string,
    d: ClaimedDelivery,
    outcome: AttemptOutcome,
    schedule: number[],
    disableAfterMs: number,
  ): Promise<DeliveryStatus | undefined> {
    const retryIn = schedule[d.attempt - 1];
    const status: DeliveryStatus = outcome.ok ? "delivered" : retryIn === undefined ? "failed" : "pending";
    // One statement: the delivery (only while this instance holds it), its attempt, the endpoint's failure record, and a
    // wake-up for every instance at commit (the next delivery of this txId may be claimed now).
    const [row] = await this.db.query<{ held: number }>(
      `WITH held AS (
         UPDATE webhook_deliveries SET status = $4, lease_until = NULL, claimed_by = NULL, last_attempt_at = $5, last_status_code = $6, last_error = $7,
           next_attempt_at = CASE WHEN $4 = 'pending' THEN now() + $8::bigint * interval '1 millisecond' ELSE next_attempt_at END,
           delivered_at = CASE WHEN $4 = 'delivered' THEN now() ELSE NULL END
         WHERE id = $1 AND status = 'delivering' AND claimed_by = $2 AND attempts = $3 RETURNING id, endpoint_id
       ), attempt AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, response_body, error, instance)
         SELECT id, $3, $5, $9, $6, $10, $7, $2 FROM held
       ), endpoint AS (
         UPDATE webhook_endpoints w SET
           failing_since = CASE WHEN $11::boolean THEN NULL ELSE COALESCE(w.failing_since, $5::timestamptz) END,
           disabled_at = CASE WHEN NOT $11::boolean AND w.disabled_at IS NULL AND COALESCE(w.failing_since, $5::timestamptz) <= now() - $12::bigint * interval '1 millisecond'
             THEN now() ELSE w.disabled_at END,
           disabled_reason = CASE WHEN NOT $11::boolean AND w.disabled_at IS NULL AND COALESCE(w.failing_since, $5::timestamptz) <= now() - $12::bigint * interval '1 millisecond'
             THEN 'every delivery failed for ' || $13 ELSE w.disabled_reason END
         FROM held WHERE w.id = held.endpoint_id AND (NOT $11::boolean OR w.failing_since IS NOT NULL)
       )
       SELECT count(*)::int AS held FROM held, LATERAL (SELECT pg_notify('tak_events', '')) AS woken`,
      [
        d.id,
        instance,
        d.attempt,
        status,
        outcome.startedAt.toISOString(),
        outcome.statusCode,
        outcome.error,
        retryIn ?? 0,
        outcome.durationMs,
        outcome.response,
        outcome.ok,
        disableAfterMs,
        describeMs(disableAfterMs),
      ],
    );
    return row.held > 0 ? status : undefined;
  }

  /** On the embedded database only one process delivers: claims left by a killed one are taken back at start. */
  async releaseAllClaims(): Promise<number> {
    return (
      await this.db.query(
        "UPDATE webhook_deliveries SET status = 'pending', lease_until = NULL, claimed_by = NULL WHERE status = 'delivering' RETURNING id",
      )
    ).length;
  }

  /** Whether any endpoint is enabled (none: no delivery can be claimed). */
  async anyEnabledEndpoint(): Promise<boolean> {
    const [row] = await this.db.query<{ any: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE disabled_at IS NULL) AS any",
    );
    return row.any;
  }

  /** When the next pending delivery is due (of endpoints not disabled), if any. */
  async nextDue(): Promise<Date | undefined> {
    const [row] = await this.db.query<{ at: Date | string | null }>(
      `SELECT min(CASE WHEN d.status = 'pending' THEN d.next_attempt_at ELSE d.lease_until END) AS at
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
       WHERE d.status IN ('pending', 'delivering') AND w.disabled_at IS NULL`,
    );
    return row?.at ? new Date(row.at) : undefined;
  }

  /** The endpoint's most recent deliveries (optionally one status), newest first, each with its attempts. */
  async deliveries(endpointId: string, options: { limit: number; status?: DeliveryStatus }): Promise<DeliveryRecord[]> {
    const rows = await this.db.query<DeliveryRow>(
      `SELECT d.id::text AS id, d.endpoint_id, e.position::text AS event_id, e.type AS event_type, e.tx_id, d.manual, d.status, d.next_attempt_at, d.delivered_at, d.created_at,
         (SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.started_at, 'durationMs', a.duration_ms, 'statusCode', a.status_code,
            'response', a.response_body, 'error', a.error) ORDER BY a.attempt) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.status = $2) ORDER BY d.id DESC LIMIT $3`,
      [endpointId, options.status ?? null, options.limit],
    );
    return rows.map(toDelivery);
  }

  /**
   * A new delivery of a delivery's event to its endpoint, due now and outside the ordering (the receiver or the operator
   * asked for it), which remembers the delivery it replays.
   */
  async redeliver(endpointId: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    if (!/^\d{1,18}$/.test(deliveryId)) return undefined;
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, position, ordering_key, manual, replay_of)
       SELECT endpoint_id, event_id, position, ordering_key, true, id FROM webhook_deliveries WHERE id = $2 AND endpoint_id = $1
       RETURNING id::text AS id`,
      [endpointId, deliveryId],
    );
    if (!row) return undefined;
    return (await this.deliveryById(row.id))!;
  }

  private async deliveryById(id: string): Promise<DeliveryRecord | undefined> {
    const [row] = await this.db.query<DeliveryRow>(
      `SELECT d.id::text AS id, d.endpoint_id, e.position::text AS event_id, e.type AS event_type, e.tx_id, d.manual, d.status, d.next_attempt_at, d.delivered_at, d.created_at,
         NULL AS attempts
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
      [id],
    );
    return row && toDelivery(row);
  }

  /** Deliveries by state and the age of the oldest one not delivered yet (metrics). */
  async backlog(): Promise<{ pending: number; delivering: number; oldestUndeliveredSeconds: number }> {
    const [row] = await this.db.query<{ pending: number; delivering: number; oldest: number | string | null }>(
      `SELECT count(*) FILTER (WHERE d.status = 'pending')::int AS pending, count(*) FILTER (WHERE d.status = 'delivering')::int AS delivering,
              extract(epoch FROM now() - min(e.created_at)) AS oldest
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.status IN ('pending', 'delivering')`,
    );
    return {
      pending: row.pending,
      delivering: row.delivering,
      oldestUndeliveredSeconds: row.oldest === null ? 0 : Number(row.oldest),
    };
  }
}

interface ClaimRow {
  id: string;
  endpoint_id: string;
  attempts: number;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | string | null;
  position: string;
  type: EventEnvelope["type"];
  tx_id: string | null;
  chain_id: number | null;
  hash: string | null;
  data: unknown;
  created_at: Date | string;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  tx_id: string | null;
  manual: boolean;
  status: DeliveryStatus;
  next_attempt_at: Date | string;
  delivered_at: Date | string | null;
  created_at: Date | string;
  attempts: DeliveryAttempt[] | string | null;
}

function toDelivery(r: DeliveryRow): DeliveryRecord {
  const attempts: DeliveryAttempt[] = (typeof r.attempts === "string" ? JSON.parse(r.attempts) : r.attempts) ?? [];
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.event_type,
    txId: r.tx_id,
    manual: r.manual,
    status: r.status,
    attempts: attempts.map((a) => ({ ...a, at: iso(a.at) })),
    nextAttemptAt: r.status === "pending" ? iso(r.next_attempt_at) : null,
    deliveredAt: isoOrNull(r.delivered_at),
    createdAt: iso(r.created_at),
  };
}

function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}
