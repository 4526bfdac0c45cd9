import type { Queryable } from "./db";
import { KEYLESS_EVENT_TYPES, type StoreEventType } from "./keyless-events";

/**
 * An event to write. `type` names an entry of the catalogue (events/types.ts: the types, their payload schemas, what
 * the OpenAPI document shows), whose schema `data` follows; `apiKeyId` names the tenant (null for a batch prepared
 * without a key: only KEYLESS_EVENT_TYPES are then delivered, to its txId's subscribers). `orderingKey` defaults to
 * `txId`: events with one key reach each receiver in the order they were committed.
 */
export interface NewEvent<T extends string = StoreEventType> {
  type: T;
  apiKeyId: string | null;
  txId?: string | null;
  chainId?: number | null;
  hash?: string | null;
  orderingKey?: string | null;
  data: unknown;
}

/** An event as written (webhook body, SSE data): its position, type, commit time, what it concerns, its data. */
export interface EventEnvelope {
  id: string;
  type: string;
  timestamp: string;
  txId: string | null;
  chainId: number | null;
  hash: string | null;
  data: unknown;
}

/**
 * The outbox's writing side: the one way an event is recorded. Call it with the Queryable of the database transaction
 * that makes the change (or inside the single statement's own transaction), so the event exists if and only if the
 * change does. At commit the database gives it its position, its webhook deliveries and a wake-up to every listener
 * (migration 010). Writing costs one INSERT for any number of events.
 *
 * ```ts
 * await emitEvent(q, { type: "transaction.replaced", apiKeyId: batch.apiKeyId, txId, chainId, hash: newHash,
 *                      data: { ...transactionEventData(batch, tx), replacedHash } });
 * ```
 */
export async function emitEvent<T extends string = StoreEventType>(
  q: Queryable,
  event: NewEvent<NoInfer<T>>,
): Promise<void> {
  await emitEvents<T>(q, [event]);
}

const keyless = new Set<string>(KEYLESS_EVENT_TYPES);

/**
 * Several events, in this order (their positions follow it). transaction.broadcast is written once per hash. The types
 * are the store's own unless the caller names the catalogue's (events/emit.ts does, for the methods' events).
 */
export async function emitEvents<T extends string = StoreEventType>(
  q: Queryable,
  events: NewEvent<NoInfer<T>>[],
): Promise<void> {
  const rows = eventRows(events);
  if (rows === null) return;
  await q.write(insertEventsSql("$1"), [rows]);
}

/**
 * The events to write as one JSON parameter for insertEventsSql (null when none is kept). An event without a tenant
 * reaches only its txId's subscribers, and only the kinds the public status already shows.
 */
export function eventRows(events: NewEvent<string>[]): string | null {
  const kept = events.filter((e) => e.apiKeyId || (e.txId && keyless.has(e.type)));
  if (!kept.length) return null;
  return JSON.stringify(
    kept.map((e) => ({
      type: e.type,
      api_key_id: e.apiKeyId,
      tx_id: e.txId?.toLowerCase() ?? null,
      chain_id: e.chainId ?? null,
      hash: e.hash?.toLowerCase() ?? null,
      ordering_key: e.orderingKey === undefined ? (e.txId?.toLowerCase() ?? null) : e.orderingKey,
      data: e.data,
    })),
  );
}

/**
 * The INSERT that writes eventRows' JSON (the parameter `param`), usable as a statement of its own or as a data-modifying
 * CTE of a larger one; `onlyIf` (a SQL condition) writes them only when it holds, e.g. when the change they tell of was made.
 */
export function insertEventsSql(param: string, onlyIf = "true"): string {
  return `INSERT INTO events (type, api_key_id, tx_id, chain_id, hash, ordering_key, data)
     SELECT e.value->>'type', e.value->>'api_key_id', e.value->>'tx_id', (e.value->>'chain_id')::integer, e.value->>'hash',
            e.value->>'ordering_key', e.value->'data'
     FROM jsonb_array_elements(${param}::jsonb) WITH ORDINALITY AS e(value, n) WHERE ${onlyIf} ORDER BY e.n
     ON CONFLICT (tx_id, hash) WHERE type = 'transaction.broadcast' DO NOTHING`;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

interface EventRow {
  position: string;
  type: string;
  tx_id: string | null;
  chain_id: number | null;
  hash: string | null;
  data: unknown;
  created_at: Date | string;
}

export const EVENT_COLUMNS = "position::text AS position, type, tx_id, chain_id, hash, data, created_at";

/** A stored event as receivers get it. */
export function toEnvelope(row: EventRow): EventEnvelope {
  return {
    id: row.position,
    type: row.type,
    timestamp: new Date(row.created_at).toISOString(),
    txId: row.tx_id,
    chainId: row.chain_id,
    hash: row.hash,
    data: typeof row.data === "string" ? JSON.parse(row.data) : row.data,
  };
}

/**
 * Whose events a stream reads: an API key's (optionally one txId's), one keyless batch's, or every tenant's (the
 * operator console's live view: `operators`, never given to a tenant's stream).
 */
export type EventAudience =
  | { apiKeyId: string; txId?: string }
  | { apiKeyId: null; txId: string }
  | { operators: true; apiKeyId?: undefined; txId?: undefined };

/**
 * Events of `audience` after position `after` (committed ones only) and, with `through`, up to that position, oldest
 * first; test events are never read here.
 */
export async function eventsAfter(
  q: Queryable,
  audience: EventAudience,
  after: string,
  options: { types?: string[]; limit?: number; through?: string } = {},
): Promise<EventEnvelope[]> {
  const rows = await q.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
     WHERE position > $1::bigint AND ($6::bigint IS NULL OR position <= $6::bigint) AND endpoint_id IS NULL
       AND ($7::boolean OR CASE WHEN $2::text IS NULL THEN api_key_id IS NULL AND tx_id = $3::text ELSE api_key_id = $2::text END)
       AND ($3::text IS NULL OR tx_id = $3::text)
       AND ($4::text[] IS NULL OR type = ANY ($4::text[]))
     ORDER BY events.position LIMIT $5`,
    [
      after,
      audience.apiKeyId ?? null,
      audience.txId?.toLowerCase() ?? null,
      options.types?.length ? options.types : null,
      options.limit ?? 500,
      options.through ?? null,
      "operators" in audience,
    ],
  );
  return rows.map(toEnvelope);
}

/** A stored event with the tenant it belongs to: what the shared feed hands every stream (events/feed.ts). */
export interface AudienceEvent extends EventEnvelope {
  apiKeyId: string | null;
}

/** Every audience's events after position `after` (committed ones only), oldest first; test events are never read here. */
export async function allEventsAfter(q: Queryable, after: string, limit = 500): Promise<AudienceEvent[]> {
  const rows = await q.query<EventRow & { api_key_id: string | null }>(
    `SELECT ${EVENT_COLUMNS}, api_key_id FROM events WHERE position > $1::bigint AND endpoint_id IS NULL ORDER BY events.position LIMIT $2`,
    [after, limit],
  );
  return rows.map((row) => ({ ...toEnvelope(row), apiKeyId: row.api_key_id }));
}

/** Whether an event belongs to a stream's audience and types: eventsAfter's filter, for events already read. */
export function inAudience(event: AudienceEvent, audience: EventAudience, types?: string[]): boolean {
  if ("operators" in audience) return !types?.length || types.includes(event.type);
  if (
    audience.apiKeyId === null
      ? event.apiKeyId !== null || event.txId !== audience.txId.toLowerCase()
      : event.apiKeyId !== audience.apiKeyId
  )
    return false;
  if (audience.txId && event.txId !== audience.txId.toLowerCase()) return false;
  return !types?.length || types.includes(event.type);
}

/** The positions a resuming stream can be checked against: the last one ever assigned, and the last one pruned. */
export async function positionBounds(q: Queryable): Promise<{ issued: bigint; prunedThrough: bigint }> {
  const [row] = await q.query<{ issued: string; pruned_through: string }>(
    `SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM event_positions)::text AS issued,
            (SELECT pruned_through FROM event_retention)::text AS pruned_through`,
  );
  return { issued: BigInt(row.issued), prunedThrough: BigInt(row.pruned_through) };
}

/**
 * Deletes events older than the retention window (and keyless endpoints as old), on schedule whatever their
 * deliveries: one still owed to an endpoint (disabled, say) goes with its event, only one being attempted right now
 * (a live lease) waits for the next sweep. Remembers the highest position pruned, so a stream resuming from before it
 * is told it may have missed events.
 */
export async function pruneEvents(q: Queryable, retentionMs: number): Promise<number> {
  const [row] = await q.query<{ pruned: number }>(
    `WITH doomed AS (
       SELECT e.id FROM events e
       WHERE e.created_at < now() - $1::bigint * interval '1 millisecond' AND e.position IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'delivering' AND d.lease_until > now())
       ORDER BY e.id LIMIT 10000
     ), gone AS (
       DELETE FROM events WHERE id IN (SELECT id FROM doomed) RETURNING position
     ), floor AS (
       UPDATE event_retention SET pruned_through = GREATEST(pruned_through, COALESCE((SELECT max(position) FROM gone), 0))
     ), endpoints AS (
       DELETE FROM webhook_endpoints WHERE tx_id IS NOT NULL AND created_at < now() - $1::bigint * interval '1 millisecond'
     )
     SELECT count(*)::int AS pruned FROM gone`,
    [retentionMs],
  );
  return row.pruned;
}
