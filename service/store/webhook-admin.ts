import type { Db } from "./db";
import type { DeliveryAttempt, DeliveryRecord, DeliveryStatus } from "./webhook-deliveries";
import { arrayColumn, iso, isoOrNull } from "./columns";
import { keysetCount, keysetPage, type Conditions, type KeysetList } from "./keyset";
import { toEnvelope } from "./outbox";

/** An endpoint's state, the one name the console uses for it everywhere: disabled, failing (since…), or active. */
export type EndpointState = "active" | "failing" | "disabled";

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
  state: EndpointState;
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  pending: number;
  failed: number;
  delivered: number;
  createdAt: string;
}

/** A delivery with every attempt made of it, what it sends, and how it stands among the endpoint's others. */
export type DeliveryRow = Omit<DeliveryRecord, "endpointId"> & {
  /** The delivery it is a replay of (a manual delivery asked for by the operator or the endpoint's owner). */
  replayOf: string | null;
  /** Its replays, oldest first. */
  replays: string[];
  /**
   * A pending delivery waits for this earlier one of the same batch (txId) to be done: each receiver gets a batch's
   * events in order. Null when nothing holds it.
   */
  heldBehind: string | null;
  /** The JSON body every attempt POSTs (the event), cut at REQUEST_SHOWN characters. */
  requestBody: string;
  requestBodyBytes: number;
};

/** What the console shows of a request body: its first 2 KiB. */
export const REQUEST_SHOWN = 2048;

/** Endpoint filters: one state, or those with deliveries owed (to an enabled endpoint: "owed"). */
export interface EndpointFilter {
  state?: EndpointState;
  owed?: boolean;
}

/** Delivery filters: one status, one event type, a time range of their creation. */
export interface DeliveryFilter {
  status?: DeliveryStatus;
  eventType?: string;
  from?: string;
  to?: string;
}

const STATE_SQL: Record<EndpointState, string> = {
  disabled: "w.disabled_at IS NOT NULL",
  failing: "w.disabled_at IS NULL AND w.failing_since IS NOT NULL",
  active: "w.disabled_at IS NULL AND w.failing_since IS NULL",
};

const ENDPOINT_COLUMNS = `w.id, w.api_key_id, k.email AS key_email, w.tx_id, w.url, w.description, w.event_types, w.disabled_at, w.disabled_reason, w.failing_since, w.created_at,
  n.pending, n.failed, n.delivered`;

/** An endpoint's deliveries counted by state in one pass over them. */
const ENDPOINT_FROM = `webhook_endpoints w LEFT JOIN api_keys k ON k.id = w.api_key_id
  CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE d.status IN ('pending', 'delivering'))::int AS pending,
                             count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
                             count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered
                      FROM webhook_deliveries d WHERE d.endpoint_id = w.id) n`;

function endpointList(f: EndpointFilter & { id?: string }): KeysetList {
  return {
    select: ENDPOINT_COLUMNS,
    from: ENDPOINT_FROM,
    countFrom: "webhook_endpoints w",
    key: ["w.id"],
    keyTypes: ["text"],
    filter: (c: Conditions) => {
      if (f.id) c.add(`w.id = ${c.param(f.id)}`);
      if (f.state) c.add(STATE_SQL[f.state]);
      if (f.owed)
        c.add(
          "w.disabled_at IS NULL AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status IN ('pending', 'delivering'))",
        );
    },
  };
}

const toEndpoint = (r: Record<string, any>): EndpointRow => ({
  id: r.id,
  apiKeyId: r.api_key_id,
  keyEmail: r.key_email,
  txId: r.tx_id,
  url: r.url,
  description: r.description,
  eventTypes: arrayColumn(r.event_types),
  state: r.disabled_at ? "disabled" : r.failing_since ? "failing" : "active",
  disabledAt: isoOrNull(r.disabled_at),
  disabledReason: r.disabled_reason,
  failingSince: isoOrNull(r.failing_since),
  pending: r.pending,
  failed: r.failed,
  delivered: r.delivered,
  createdAt: isoOrNull(r.created_at)!,
});

const DELIVERY_COLUMNS = `d.id::text AS id, e.position::text AS position, e.type, e.tx_id, e.chain_id, e.hash, e.data, e.created_at AS event_created_at,
  d.manual, d.status, d.next_attempt_at, d.delivered_at, d.created_at, d.replay_of::text AS replay_of,
  (SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.started_at, 'durationMs', a.duration_ms, 'statusCode', a.status_code,
     'response', a.response_body, 'error', a.error) ORDER BY a.attempt) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts,
  (SELECT json_agg(r.id::text ORDER BY r.id) FROM webhook_deliveries r WHERE r.replay_of = d.id) AS replays,
  CASE WHEN d.status = 'pending' AND NOT d.manual AND d.ordering_key IS NOT NULL THEN (
    SELECT p.id::text FROM webhook_deliveries p
    WHERE p.endpoint_id = d.endpoint_id AND p.ordering_key = d.ordering_key AND p.position < d.position
      AND NOT p.manual AND p.status IN ('pending', 'delivering')
    ORDER BY p.position LIMIT 1) END AS held_behind`;

function deliveryList(endpointId: string, f: DeliveryFilter): KeysetList {
  return {
    select: DELIVERY_COLUMNS,
    from: "webhook_deliveries d JOIN events e ON e.id = d.event_id",
    countFrom: f.eventType ? undefined : "webhook_deliveries d",
    key: ["d.id"],
    keyTypes: ["bigint"],
    filter: (c: Conditions) => {
      c.add(`d.endpoint_id = ${c.param(endpointId)}`);
      if (f.status) c.add(`d.status = ${c.param(f.status)}`);
      if (f.eventType) c.add(`e.type = ${c.param(f.eventType)}`);
      if (f.from) c.add(`d.created_at >= ${c.param(f.from)}::timestamptz`);
      if (f.to) c.add(`d.created_at < ${c.param(f.to)}::timestamptz`);
    },
  };
}

function toDelivery(r: Record<string, any>): DeliveryRow {
  const json = <T>(v: T | string | null): T | null => (typeof v === "string" ? (JSON.parse(v) as T) : v);
  const attempts = json<DeliveryAttempt[]>(r.attempts) ?? [];
  // The body the dispatcher POSTs is the event as toEnvelope makes it (events/dispatcher.ts deliver).
  const body = JSON.stringify(
    toEnvelope({ ...r, position: r.position, created_at: r.event_created_at } as Parameters<typeof toEnvelope>[0]),
  );
  return {
    id: r.id,
    eventId: r.position,
    eventType: r.type,
    txId: r.tx_id,
    manual: r.manual,
    status: r.status,
    attempts: attempts.map((a) => ({ ...a, at: iso(a.at) })),
    nextAttemptAt: r.status === "pending" ? isoOrNull(r.next_attempt_at) : null,
    deliveredAt: isoOrNull(r.delivered_at),
    createdAt: iso(r.created_at),
    replayOf: r.replay_of,
    replays: json<string[]>(r.replays) ?? [],
    heldBehind: r.held_behind ?? null,
    requestBody: body.slice(0, REQUEST_SHOWN),
    requestBodyBytes: Buffer.byteLength(body),
  };
}

/**
 * Webhook endpoints and deliveries as the operator looks at them, every tenant's (webhooks.ts serves the tenants and
 * the dispatcher): the endpoints with their backlog and state, a page of an endpoint's deliveries with their attempts,
 * what they send and what holds them, the failed ones of a time range (to deliver again through Webhooks.redeliver),
 * disabling and enabling an endpoint, and what is owed to enabled endpoints.
 */
export class WebhookAdmin {
  constructor(private readonly db: Db) {}

  async endpoints(
    options: EndpointFilter & { limit: number; before?: string; after?: string; id?: string },
  ): Promise<EndpointRow[]> {
    const rows = await keysetPage<Record<string, any>>(this.db, endpointList(options), {
      before: options.before === undefined ? undefined : [options.before],
      after: options.after === undefined ? undefined : [options.after],
      limit: options.limit,
    });
    return rows.map(toEndpoint);
  }

  countEndpoints(filter: EndpointFilter, first?: string): Promise<{ total: number; newer: number }> {
    return keysetCount(this.db, endpointList(filter), first === undefined ? undefined : [first]);
  }

  async endpoint(id: string): Promise<EndpointRow | undefined> {
    return (await this.endpoints({ limit: 1, id }))[0];
  }

  /** An endpoint's deliveries, newest first, with their attempts: before or after a delivery id, filtered. */
  async deliveries(
    endpointId: string,
    options: DeliveryFilter & { limit: number; before?: string; after?: string },
  ): Promise<DeliveryRow[]> {
    const rows = await keysetPage<Record<string, any>>(this.db, deliveryList(endpointId, options), {
      before: options.before === undefined ? undefined : [options.before],
      after: options.after === undefined ? undefined : [options.after],
      limit: options.limit,
    });
    return rows.map(toDelivery);
  }

  countDeliveries(
    endpointId: string,
    filter: DeliveryFilter,
    first?: string,
  ): Promise<{ total: number; newer: number }> {
    return keysetCount(this.db, deliveryList(endpointId, filter), first === undefined ? undefined : [first]);
  }

  /** One delivery of an endpoint. */
  async delivery(endpointId: string, id: string): Promise<DeliveryRow | undefined> {
    if (!/^\d{1,18}$/.test(id)) return undefined;
    return (await this.deliveries(endpointId, { limit: 1, before: String(BigInt(id) + 1n) })).find((d) => d.id === id);
  }

  /** The ids of an endpoint's failed deliveries created in [from, to), oldest first (at most `limit`). */
  async failedIn(endpointId: string, from: string, to: string, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      "SELECT id::text AS id FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3 ORDER BY id LIMIT $4",
      [endpointId, from, to, limit],
    );
    return rows.map((r) => r.id);
  }

  /** Disables an endpoint (no delivery is claimed for it until it is enabled again); false when it was already. */
  async disable(endpointId: string, reason: string): Promise<boolean> {
    const rows = await this.db.query(
      "UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2, updated_at = now() WHERE id = $1 AND disabled_at IS NULL RETURNING id",
      [endpointId, reason],
    );
    return rows.length > 0;
  }

  /**
   * Enables a disabled endpoint again, its failures forgotten (as its owner's PATCH { enabled: true } does): its
   * deliveries still owed are claimed again. False when it was not disabled.
   */
  async enable(endpointId: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = now()
       WHERE id = $1 AND disabled_at IS NOT NULL RETURNING id`,
      [endpointId],
    );
    return rows.length > 0;
  }

  /**
   * Deliveries owed (pending or being attempted), to enabled endpoints (`owed`, with the age of the oldest one's event)
   * and to disabled ones (`paused`: nothing is attempted until their endpoint is enabled again).
   */
  async owed(): Promise<{ owed: number; oldestOwedSeconds: number; paused: number }> {
    const [row] = await this.db.query<{ owed: number; paused: number; oldest: number | string | null }>(
      `SELECT count(*) FILTER (WHERE w.disabled_at IS NULL)::int AS owed, count(*) FILTER (WHERE w.disabled_at IS NOT NULL)::int AS paused,
              extract(epoch FROM now() - min(e.created_at) FILTER (WHERE w.disabled_at IS NULL)) AS oldest
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
       WHERE d.status IN ('pending', 'delivering')`,
    );
    return { owed: row.owed, paused: row.paused, oldestOwedSeconds: row.oldest === null ? 0 : Number(row.oldest) };
  }
}
