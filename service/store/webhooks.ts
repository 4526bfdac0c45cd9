import { randomBytes } from "node:crypto";
import type { Sealer } from "../crypto/sealed";
import { toEnvelope } from "./outbox";
import { newWebhookSecret } from "../crypto/webhook-signing";
import type { EventEnvelope } from "./outbox";
import type { Db, Queryable } from "./db";

export interface WebhookEndpointRecord {
  id: string;
  apiKeyId: string | null;
  /** A keyless endpoint's batch (see migration 010). */
  txId: string | null;
  url: string;
  description: string | null;
  /** Empty: every type the endpoint may receive. */
  eventTypes: string[];
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  /** Until when the previous secret (after a rotation) still signs; null when there is none. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

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

const iso = (v: Date | string) => new Date(v).toISOString();
const isoOrNull = (v: Date | string | null) => (v === null ? null : iso(v));
const arrayColumn = (v: string[] | string): string[] =>
  Array.isArray(v)
    ? v
    : v
        .replace(/^\{|\}$/g, "")
        .split(",")
        .filter(Boolean);

const ENDPOINT_COLUMNS = `id, api_key_id, tx_id, url, description, event_types, disabled_at, disabled_reason, failing_since,
  previous_secret_expires_at, created_at, updated_at`;

interface EndpointRow {
  id: string;
  api_key_id: string | null;
  tx_id: string | null;
  url: string;
  description: string | null;
  event_types: string[] | string;
  disabled_at: Date | string | null;
  disabled_reason: string | null;
  failing_since: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const toEndpoint = (r: EndpointRow): WebhookEndpointRecord => ({
  id: r.id,
  apiKeyId: r.api_key_id,
  txId: r.tx_id,
  url: r.url,
  description: r.description,
  eventTypes: arrayColumn(r.event_types),
  disabledAt: isoOrNull(r.disabled_at),
  disabledReason: r.disabled_reason,
  failingSince: isoOrNull(r.failing_since),
  previousSecretExpiresAt:
    r.previous_secret_expires_at && new Date(r.previous_secret_expires_at) > new Date()
      ? iso(r.previous_secret_expires_at)
      : null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** Bound into each sealed secret, so a sealed value cannot be moved to another endpoint's row. */
export const secretPurpose = (endpointId: string) => `webhook-secret:${endpointId}`;

/**
 * Webhook endpoints (per API key, or per keyless txId) and their deliveries. Deliveries are created by the database
 * when an event commits (migration 010); instances claim due ones with FOR UPDATE SKIP LOCKED and a lease, so no two
 * deliver one at once.
 */
export class Webhooks {
  /** Counts this process's endpoint creations and changes (a dispatcher's "no endpoint" knowledge is older when it moved). */
  endpointChanges = 0;

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  // -------------------------------------------------------------------------------------------------------------
  // Endpoints

  /** Creates an endpoint; its secret is returned here only (stored sealed). */
  async create(e: {
    apiKeyId: string | null;
    txId: string | null;
    url: string;
    description: string | null;
    eventTypes: string[];
  }): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const id = `wh_${randomBytes(12).toString("hex")}`;
    const secret = newWebhookSecret();
    const [row] = await this.db.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, api_key_id, tx_id, url, description, event_types, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6::text[], $7) RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id,
        e.apiKeyId,
        e.txId?.toLowerCase() ?? null,
        e.url,
        e.description,
        e.eventTypes,
        this.sealer.seal(secret, secretPurpose(id)),
      ],
    );
    this.endpointChanges++; // after the write: a dispatcher that looked before it looks again
    return { endpoint: toEndpoint(row), secret };
  }

  async listForKey(apiKeyId: string): Promise<WebhookEndpointRecord[]> {
    const rows = await this.db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE api_key_id = $1 ORDER BY created_at, id`,
      [apiKeyId],
    );
    return rows.map(toEndpoint);
  }

  /** The key's endpoint `id`, or undefined (another key's endpoint is as unknown as a missing one). */
  async getForKey(id: string, apiKeyId: string, q: Queryable = this.db): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await q.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND api_key_id = $2`,
      [id, apiKeyId],
    );
    return row && toEndpoint(row);
  }

  async countForTx(txId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_endpoints WHERE tx_id = $1",
      [txId.toLowerCase()],
    );
    return row.n;
  }

  /** Changes an endpoint; `enabled: true` re-enables a disabled one (and forgets its failures), false disables it. */
  async update(
    id: string,
    apiKeyId: string,
    patch: { url?: string; description?: string | null; eventTypes?: string[]; enabled?: boolean },
  ): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = COALESCE($3, url),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         event_types = COALESCE($6::text[], event_types),
         disabled_at = CASE WHEN $7::boolean IS NULL THEN disabled_at WHEN $7 THEN NULL ELSE COALESCE(disabled_at, now()) END,
         disabled_reason = CASE WHEN $7::boolean IS NULL THEN disabled_reason WHEN $7 THEN NULL ELSE COALESCE(disabled_reason, 'disabled by its owner') END,
         failing_since = CASE WHEN $7::boolean THEN NULL ELSE failing_since END,
         updated_at = now()
       WHERE id = $1 AND api_key_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id,
        apiKeyId,
        patch.url ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.eventTypes ?? null,
        patch.enabled ?? null,
      ],
    );
    this.endpointChanges++;
    return row && toEndpoint(row);
  }

  async delete(id: string, apiKeyId: string): Promise<boolean> {
    return (
      (
        await this.db.query("DELETE FROM webhook_endpoints WHERE id = $1 AND api_key_id = $2 RETURNING id", [
          id,
          apiKeyId,
        ])
      ).length > 0
    );
  }

  /** A new secret (returned once); the current one keeps signing, beside it, for `graceMs`. */
  async rotateSecret(
    id: string,
    apiKeyId: string,
    graceMs: number,
  ): Promise<{ endpoint: WebhookEndpointRecord; secret: string } | undefined> {
    const secret = newWebhookSecret();
    const [row] = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = now() + $3::bigint * interval '1 millisecond',
         secret_sealed = $4, updated_at = now()
       WHERE id = $1 AND api_key_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [id, apiKeyId, graceMs, this.sealer.seal(secret, secretPurpose(id))],
    );
    return row && { endpoint: toEndpoint(row), secret };
  }

  /** The secrets that sign a delivery now: the current one, and the previous one during its grace period. */
  secretsOf(
    d: Pick<ClaimedDelivery, "endpointId" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt">,
    now = new Date(),
  ): string[] {
    const purpose = secretPurpose(d.endpointId);
    const secrets = [this.sealer.open(d.secretSealed, purpose)];
    if (d.previousSecretSealed && d.previousSecretExpiresAt && new Date(d.previousSecretExpiresAt) > now)
      secrets.push(this.sealer.open(d.previousSecretSealed, purpose));
    return secrets;
  }

  /** Pending deliveries per endpoint, for listings. */
  async pendingCounts(endpointIds: string[]): Promise<Map<string, number>> {
    if (!endpointIds.length) return new Map();
    const rows = await this.db.query<{ endpoint_id: string; n: number }>(
      "SELECT endpoint_id, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ANY ($1::text[]) AND status IN ('pending', 'delivering') GROUP BY endpoint_id",
      [endpointIds],
    );
    return new Map(rows.map((r) => [r.endpoint_id, r.n]));
  }

  /**
   * A webhook.test event addressed to this endpoint alone (it never reaches the stream). Resolves once committed, with
   * the event's id and its delivery's.
   */
  async sendTest(endpoint: WebhookEndpointRecord, message: string): Promise<{ eventId: string; deliveryId: string }> {
    const [inserted] = await this.db.query<{ id: string }>(
      "INSERT INTO events (type, api_key_id, endpoint_id, data) VALUES ('webhook.test', $1, $2, $3) RETURNING id::text AS id",
      [endpoint.apiKeyId, endpoint.id, JSON.stringify({ endpointId: endpoint.id, message })],
    );
    const [row] = await this.db.query<{ position: string; delivery_id: string }>(
      "SELECT e.position::text AS position, d.id::text AS delivery_id FROM events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.id = $1",
      [inserted.id],
    );
    return { eventId: row.position, deliveryId: row.delivery_id };
  }

  // -------------------------------------------------------------------------------------------------------------
  // Deliveries

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

  /** A new delivery of a delivery's event to its endpoint, due now and outside the ordering (the receiver asked for it). */
  async redeliver(endpointId: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    if (!/^\d{1,18}$/.test(deliveryId)) return undefined;
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, position, ordering_key, manual)
       SELECT endpoint_id, event_id, position, ordering_key, true FROM webhook_deliveries WHERE id = $2 AND endpoint_id = $1
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
