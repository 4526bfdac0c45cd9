import type { Db } from "./db";
import type { DeliveryAttempt, DeliveryRecord, DeliveryStatus } from "./webhook-deliveries";
import { arrayColumn, isoOrNull } from "./columns";

/** A webhook endpoint as the operator sees it across tenants (never its secret). */
export interface EndpointRow {
  id: string;
  apiKeyId: string | null;
  /** The key's e-mail (who the tenant is), when the endpoint belongs to a key. */
  keyEmail: string | null;
  txId: string | null;
  url: string;
  description: string | null;
  eventTypes: string[];
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  pending: number;
  failed: number;
  delivered: number;
  createdAt: string;
}

/** A delivery with every attempt made of it. */
export type DeliveryRow = Omit<DeliveryRecord, "endpointId">;

/**
 * Webhook endpoints and deliveries as the operator looks at them, every tenant's (webhooks.ts serves the tenants and
 * the dispatcher): the endpoints with their backlog, a page of an endpoint's deliveries with their attempts, the failed
 * ones of a time range (to deliver again through Webhooks.redeliver), and disabling an endpoint.
 */
export class WebhookAdmin {
  constructor(private readonly db: Db) {}

  async endpoints(options: {
    limit: number;
    before?: string;
    disabled?: boolean;
    id?: string;
  }): Promise<EndpointRow[]> {
    const rows = await this.db.query<Record<string, any>>(
      `SELECT w.id, w.api_key_id, k.email AS key_email, w.tx_id, w.url, w.description, w.event_types, w.disabled_at, w.disabled_reason, w.failing_since, w.created_at,
              (SELECT count(*) FILTER (WHERE d.status IN ('pending', 'delivering'))::int FROM webhook_deliveries d WHERE d.endpoint_id = w.id) AS pending,
              (SELECT count(*) FILTER (WHERE d.status = 'failed')::int FROM webhook_deliveries d WHERE d.endpoint_id = w.id) AS failed,
              (SELECT count(*) FILTER (WHERE d.status = 'delivered')::int FROM webhook_deliveries d WHERE d.endpoint_id = w.id) AS delivered
       FROM webhook_endpoints w LEFT JOIN api_keys k ON k.id = w.api_key_id
       WHERE ($2::text IS NULL OR w.id < $2) AND ($3::boolean IS NULL OR (w.disabled_at IS NOT NULL) = $3) AND ($4::text IS NULL OR w.id = $4)
       ORDER BY w.id DESC LIMIT $1`,
      [options.limit, options.before ?? null, options.disabled ?? null, options.id ?? null],
    );
    return rows.map((r) => ({
      id: r.id,
      apiKeyId: r.api_key_id,
      keyEmail: r.key_email,
      txId: r.tx_id,
      url: r.url,
      description: r.description,
      eventTypes: arrayColumn(r.event_types),
      disabledAt: isoOrNull(r.disabled_at),
      disabledReason: r.disabled_reason,
      failingSince: isoOrNull(r.failing_since),
      pending: r.pending,
      failed: r.failed,
      delivered: r.delivered,
      createdAt: isoOrNull(r.created_at)!,
    }));
  }

  async endpoint(id: string): Promise<EndpointRow | undefined> {
    return (await this.endpoints({ limit: 1, id }))[0];
  }

  /**
   * An endpoint's deliveries, newest first, with their attempts: `before` a delivery id, optionally one status and a
   * time range of their creation.
   */
  async deliveries(
    endpointId: string,
    options: { limit: number; before?: string; status?: DeliveryStatus; from?: string; to?: string },
  ): Promise<DeliveryRow[]> {
    const rows = await this.db.query<Record<string, any>>(
      `SELECT d.id::text AS id, e.position::text AS event_id, e.type AS event_type, e.tx_id, d.manual, d.status, d.next_attempt_at, d.delivered_at, d.created_at,
         (SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.started_at, 'durationMs', a.duration_ms, 'statusCode', a.status_code,
            'response', a.response_body, 'error', a.error) ORDER BY a.attempt) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.endpoint_id = $1 AND ($3::bigint IS NULL OR d.id < $3) AND ($4::text IS NULL OR d.status = $4)
         AND ($5::timestamptz IS NULL OR d.created_at >= $5) AND ($6::timestamptz IS NULL OR d.created_at < $6)
       ORDER BY d.id DESC LIMIT $2`,
      [
        endpointId,
        options.limit,
        options.before ?? null,
        options.status ?? null,
        options.from ?? null,
        options.to ?? null,
      ],
    );
    return rows.map((r) => {
      const attempts: DeliveryAttempt[] = (typeof r.attempts === "string" ? JSON.parse(r.attempts) : r.attempts) ?? [];
      return {
        id: r.id,
        eventId: r.event_id,
        eventType: r.event_type,
        txId: r.tx_id,
        manual: r.manual,
        status: r.status,
        attempts: attempts.map((a) => ({ ...a, at: isoOrNull(a.at)! })),
        nextAttemptAt: r.status === "pending" ? isoOrNull(r.next_attempt_at) : null,
        deliveredAt: isoOrNull(r.delivered_at),
        createdAt: isoOrNull(r.created_at)!,
      };
    });
  }

  /** The ids of an endpoint's failed deliveries created in [from, to), oldest first (at most `limit`). */
  async failedIn(endpointId: string, from: string, to: string, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      "SELECT id::text AS id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3 ORDER BY id LIMIT $4",
      [endpointId, from, to, limit],
    );
    return rows.map((r) => r.id);
  }

  /** Disables an endpoint (no delivery is claimed for it until its owner enables it again); false when it was already. */
  async disable(endpointId: string, reason: string): Promise<boolean> {
    const rows = await this.db.query(
      "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2, updated_at = now() WHERE id = $1 AND disabled_at IS NULL RETURNING id",
      [endpointId, reason],
    );
    return rows.length > 0;
  }
}
