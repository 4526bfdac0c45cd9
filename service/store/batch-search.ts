import type { BatchStatus } from "../model/batch";
import type { Db } from "./db";
import { EVENT_COLUMNS, toEnvelope, type EventEnvelope } from "./outbox";
import { isoOrNull } from "./columns";

/** A batch as a list shows it (its transactions' hashes, not their bytes). */
export interface BatchRow {
  txId: string;
  chainId: number;
  method: string;
  executionMode: string;
  signer: string;
  apiKeyId: string | null;
  status: BatchStatus;
  error: string | null;
  hashes: string[];
  createdAt: string;
  sentAt: string | null;
  completedAt: string | null;
}

export interface BatchFilter {
  /** One batch (a search by txId or hash found it). */
  txId?: string;
  status?: BatchStatus;
  apiKeyId?: string;
  /** The signer, or any address a transaction of the batch is from or to (lower-case). */
  address?: string;
  /** The page after this cursor (a row's `createdAt` and `txId`), newest first. */
  before?: { createdAt: string; txId: string };
  limit: number;
}

interface Row {
  tx_id: string;
  chain_id: number;
  method: string;
  execution_mode: string;
  signer: string;
  api_key_id: string | null;
  status: BatchStatus;
  error: string | null;
  hashes: (string | null)[] | string | null;
  created_at: Date | string;
  sent_at: Date | string | null;
  completed_at: Date | string | null;
}

/** A timestamptz cursor, as ISO text with microseconds, so rows of one millisecond are not skipped. */
const CURSOR = "to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

const toRow = (r: Row & { cursor?: string }): BatchRow => {
  const hashes =
    typeof r.hashes === "string"
      ? r.hashes
          .replace(/^\{|\}$/g, "")
          .split(",")
          .filter((h) => h && h !== "NULL")
      : (r.hashes ?? []).filter((h): h is string => !!h);
  return {
    txId: r.tx_id,
    chainId: r.chain_id,
    method: r.method,
    executionMode: r.execution_mode,
    signer: r.signer,
    apiKeyId: r.api_key_id,
    status: r.status,
    error: r.error,
    hashes,
    createdAt: r.cursor ?? isoOrNull(r.created_at)!,
    sentAt: isoOrNull(r.sent_at),
    completedAt: isoOrNull(r.completed_at),
  };
};

/** One bucket of the activity charts: batches ended by outcome, time to confirmed, payments ended. */
export interface ActivityBucket {
  /** The bucket's start. */
  at: string;
  success: number;
  rejected: number;
  /** Time from send to success, in ms (p50, p95), of the batches that succeeded in the bucket; null without any. */
  p50Ms: number | null;
  p95Ms: number | null;
  settled: number;
  released: number;
}

/**
 * Batches as the operator looks for them (batches.ts keeps the engine's write-ahead log): pages newest first by
 * status, key or address; a batch's events; and the figures of the console's overview, all from the same tables.
 */
export class BatchSearch {
  constructor(private readonly db: Db) {}

  async page(filter: BatchFilter): Promise<BatchRow[]> {
    const rows = await this.db.query<Row & { cursor: string }>(
      `SELECT b.tx_id, b.chain_id, b.method, b.execution_mode, b.signer, b.api_key_id, b.status, b.error, ${CURSOR} AS cursor,
              b.created_at, b.sent_at, b.completed_at,
              (SELECT array_agg(t.tx_hash ORDER BY t.index) FROM batch_transactions t WHERE t.tx_id = b.tx_id) AS hashes
       FROM batches b
       WHERE ($1::text IS NULL OR b.status = $1)
         AND ($2::text IS NULL OR b.api_key_id = $2)
         AND ($3::text IS NULL OR lower(b.signer) = $3 OR EXISTS (
               SELECT 1 FROM batch_transactions t WHERE t.tx_id = b.tx_id AND (lower(t.unsigned->>'to') = $3 OR lower(t.unsigned->>'from') = $3)))
         AND ($4::timestamptz IS NULL OR (b.created_at, b.tx_id) < ($4::timestamptz, $5::text))
         AND ($7::text IS NULL OR b.tx_id = $7)
       ORDER BY b.created_at DESC, b.tx_id DESC LIMIT $6`,
      [
        filter.status ?? null,
        filter.apiKeyId ?? null,
        filter.address?.toLowerCase() ?? null,
        filter.before?.createdAt ?? null,
        filter.before?.txId ?? null,
        filter.limit,
        filter.txId?.toLowerCase() ?? null,
      ],
    );
    return rows.map(toRow);
  }

  /** When a batch was handed to the engine and when it ended (the batch model keeps only its creation). */
  async times(txId: string): Promise<{ sentAt: string | null; completedAt: string | null } | undefined> {
    const [row] = await this.db.query<{ sent_at: Date | string | null; completed_at: Date | string | null }>(
      "SELECT sent_at, completed_at FROM batches WHERE tx_id = $1",
      [txId],
    );
    return row && { sentAt: isoOrNull(row.sent_at), completedAt: isoOrNull(row.completed_at) };
  }

  /** A batch's events as they were written (oldest first; pruned after EVENT_RETENTION_DAYS). */
  async events(txId: string, limit = 200): Promise<EventEnvelope[]> {
    const rows = await this.db.query<Parameters<typeof toEnvelope>[0]>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE tx_id = $1 AND endpoint_id IS NULL AND position IS NOT NULL ORDER BY position LIMIT $2`,
      [txId.toLowerCase(), limit],
    );
    return rows.map(toEnvelope);
  }

  /** Batches waiting on the engine: prepared (not sent yet), and sending (in flight). */
  async queueDepth(): Promise<{ prepared: number; sending: number }> {
    const [row] = await this.db.query<{ prepared: number; sending: number }>(
      "SELECT count(*) FILTER (WHERE status = 'prepared')::int AS prepared, count(*) FILTER (WHERE status = 'sending')::int AS sending FROM batches WHERE status IN ('prepared', 'sending')",
    );
    return row;
  }

  /** Transactions a wallet has signed and not yet seen mined, per chain (a service wallet's work in flight). */
  async inFlight(chainId: number, address: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM batches b JOIN batch_transactions t ON t.tx_id = b.tx_id
       WHERE b.status = 'sending' AND b.chain_id = $1 AND lower(t.unsigned->>'from') = $2 AND t.status IN ('signed', 'broadcast')`,
      [chainId, address.toLowerCase()],
    );
    return row.n;
  }

  /**
   * The last `buckets` × `bucketMinutes` minutes, oldest bucket first: batches ended per outcome, the p50 and p95 time
   * from send to success, and x402 payments settled and released.
   */
  async activity(buckets: number, bucketMinutes: number): Promise<ActivityBucket[]> {
    const rows = await this.db.query<{
      at: Date | string;
      success: number;
      rejected: number;
      p50: number | null;
      p95: number | null;
      settled: number;
      released: number;
    }>(
      `WITH edges AS (
         SELECT date_bin(make_interval(mins => $2), now(), 'epoch'::timestamptz) - make_interval(mins => $2 * ($1 - 1)) AS first
       ), slots AS (
         SELECT first + make_interval(mins => $2 * i) AS at FROM edges, generate_series(0, $1 - 1) i
       ), ended AS (
         SELECT date_bin(make_interval(mins => $2), completed_at, 'epoch'::timestamptz) AS at,
                count(*) FILTER (WHERE status = 'success')::int AS success, count(*) FILTER (WHERE status = 'rejected')::int AS rejected,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - sent_at) * 1000) FILTER (WHERE status = 'success' AND sent_at IS NOT NULL) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - sent_at) * 1000) FILTER (WHERE status = 'success' AND sent_at IS NOT NULL) AS p95
         FROM batches, edges WHERE completed_at >= edges.first AND status IN ('success', 'rejected') GROUP BY 1
       ), paid AS (
         SELECT date_bin(make_interval(mins => $2), updated_at, 'epoch'::timestamptz) AS at,
                count(*) FILTER (WHERE status = 'settled')::int AS settled, count(*) FILTER (WHERE status = 'released')::int AS released
         FROM payments, edges WHERE updated_at >= edges.first AND status IN ('settled', 'released') GROUP BY 1
       )
       SELECT s.at, COALESCE(e.success, 0) AS success, COALESCE(e.rejected, 0) AS rejected, e.p50, e.p95,
              COALESCE(p.settled, 0) AS settled, COALESCE(p.released, 0) AS released
       FROM slots s LEFT JOIN ended e ON e.at = s.at LEFT JOIN paid p ON p.at = s.at
       ORDER BY s.at`,
      [buckets, bucketMinutes],
    );
    const ms = (v: number | string | null) => (v === null ? null : Math.round(Number(v)));
    return rows.map((r) => ({
      at: isoOrNull(r.at)!,
      success: r.success,
      rejected: r.rejected,
      p50Ms: ms(r.p50),
      p95Ms: ms(r.p95),
      settled: r.settled,
      released: r.released,
    }));
  }
}
