import type { BatchStatus } from "../model/batch";
import type { Db } from "./db";
import { EVENT_COLUMNS, toEnvelope, type EventEnvelope } from "./outbox";
import { isoOrNull } from "./columns";
import { keysetCount, keysetPage, type Conditions, type KeysetList } from "./keyset";

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

/**
 * When an in-flight transaction of a chain counts as stuck (the console's triage): first broadcast at or before block
 * `maxBroadcastBlock`, or, when its block was not recorded, before `sentBefore`; or its fee cap below `baseFeePerGas`.
 */
export interface StuckBound {
  chainId: number;
  maxBroadcastBlock: number | null;
  sentBefore: string;
  /** Decimal wei; null when the chain's base fee is not known. */
  baseFeePerGas: string | null;
}

export interface BatchFilter {
  /** One batch (a search by txId or hash found it). */
  txId?: string;
  status?: BatchStatus;
  apiKeyId?: string;
  /** The signer, or any address a transaction of the batch is from or to (lower-case). */
  address?: string;
  chainId?: number;
  method?: string;
  /** Prepared at or after `from` and before `to` (ISO 8601). */
  from?: string;
  to?: string;
  /** In flight with a transaction stuck by one of these bounds (its chain's). */
  stuck?: StuckBound[];
}

/** A page of a filtered list: after or before a row's cursor (its `createdAt` and `txId`), newest first. */
export interface BatchPage extends BatchFilter {
  before?: { createdAt: string; txId: string };
  after?: { createdAt: string; txId: string };
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

const COLUMNS = `b.tx_id, b.chain_id, b.method, b.execution_mode, b.signer, b.api_key_id, b.status, b.error, ${CURSOR} AS cursor,
  b.created_at, b.sent_at, b.completed_at,
  (SELECT array_agg(t.tx_hash ORDER BY t.index) FROM batch_transactions t WHERE t.tx_id = b.tx_id) AS hashes`;

/** A transaction of the batch not mined yet, stuck by its chain's bound (see StuckBound). */
const STUCK = (bounds: string) => `b.status = 'sending' AND EXISTS (
  SELECT 1 FROM batch_transactions t, jsonb_to_recordset(${bounds}::jsonb) AS s(chain_id integer, max_block bigint, sent_before timestamptz, base_fee numeric)
  WHERE t.tx_id = b.tx_id AND t.status IN ('signed', 'broadcast') AND s.chain_id = b.chain_id
    AND (COALESCE(t.broadcast_block <= s.max_block, t.broadcast_at <= s.sent_before)
         OR (t.unsigned->>'maxFeePerGas')::numeric < s.base_fee))`;

/** The batches list with a filter's conditions, keyed newest first by (created_at, tx_id). */
function batchList(f: BatchFilter): KeysetList {
  return {
    select: COLUMNS,
    from: "batches b",
    key: ["b.created_at", "b.tx_id"],
    keyTypes: ["timestamptz", "text"],
    filter: (c: Conditions) => {
      if (f.txId) c.add(`b.tx_id = ${c.param(f.txId.toLowerCase())}`);
      if (f.status) c.add(`b.status = ${c.param(f.status)}`);
      if (f.apiKeyId) c.add(`b.api_key_id = ${c.param(f.apiKeyId)}`);
      if (f.chainId !== undefined) c.add(`b.chain_id = ${c.param(f.chainId)}`);
      if (f.method) c.add(`b.method = ${c.param(f.method)}`);
      if (f.from) c.add(`b.created_at >= ${c.param(f.from)}::timestamptz`);
      if (f.to) c.add(`b.created_at < ${c.param(f.to)}::timestamptz`);
      if (f.address) {
        const a = c.param(f.address.toLowerCase());
        // The few batches it names, each side found by its own index (migration 080), then ordered: never a walk of
        // every batch testing each.
        c.add(`b.tx_id IN (SELECT s.tx_id FROM batches s WHERE lower(s.signer) = ${a}
               UNION SELECT t.tx_id FROM batch_transactions t WHERE lower(t.unsigned->>'to') = ${a}
               UNION SELECT t.tx_id FROM batch_transactions t WHERE lower(t.unsigned->>'from') = ${a})`);
      }
      if (f.stuck) {
        const bounds = f.stuck.map((s) => ({
          chain_id: s.chainId,
          max_block: s.maxBroadcastBlock,
          sent_before: s.sentBefore,
          base_fee: s.baseFeePerGas,
        }));
        c.add(STUCK(c.param(JSON.stringify(bounds))));
      }
    },
  };
}

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

  async page(page: BatchPage): Promise<BatchRow[]> {
    const rows = await keysetPage<Row & { cursor: string }>(this.db, batchList(page), {
      before: page.before && [page.before.createdAt, page.before.txId],
      after: page.after && [page.after.createdAt, page.after.txId],
      limit: page.limit,
    });
    return rows.map(toRow);
  }

  /** How many batches the filter matches, and how many of them are newer than `first` (a page's first row). */
  count(filter: BatchFilter, first?: { createdAt: string; txId: string }): Promise<{ total: number; newer: number }> {
    return keysetCount(this.db, batchList(filter), first && [first.createdAt, first.txId]);
  }

  /**
   * Gas a wallet's mined transactions used on a chain since `hours` ago (confirmed or reverted; decimal), and how many
   * they were: what the relayer spends, for the console's "a day of recent spend".
   */
  async gasUsedSince(chainId: number, address: string, hours: number): Promise<{ gas: string; transactions: number }> {
    const [row] = await this.db.query<{ gas: string; n: number }>(
      `SELECT COALESCE(sum(t.gas_used), 0)::text AS gas, count(*)::int AS n
       FROM batches b JOIN batch_transactions t ON t.tx_id = b.tx_id
       WHERE b.chain_id = $1 AND b.execution_mode = 'service-relayed' AND b.completed_at >= now() - make_interval(hours => $3)
         AND t.gas_used IS NOT NULL AND lower(t.unsigned->>'from') = $2`,
      [chainId, address.toLowerCase(), hours],
    );
    return { gas: row.gas, transactions: row.n };
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

  /** Per chain, the transactions signed and not mined yet, and the oldest one's first broadcast (block and time). */
  async inFlightByChain(): Promise<
    { chainId: number; transactions: number; oldestBroadcastBlock: number | null; oldestBroadcastAt: string | null }[]
  > {
    const rows = await this.db.query<{ chain_id: number; n: number; block: string | null; at: Date | string | null }>(
      `SELECT b.chain_id, count(*)::int AS n, min(t.broadcast_block)::text AS block, min(t.broadcast_at) AS at
       FROM batches b JOIN batch_transactions t ON t.tx_id = b.tx_id
       WHERE b.status = 'sending' AND t.status IN ('signed', 'broadcast') GROUP BY b.chain_id`,
    );
    return rows.map((r) => ({
      chainId: r.chain_id,
      transactions: r.n,
      oldestBroadcastBlock: r.block === null ? null : Number(r.block),
      oldestBroadcastAt: isoOrNull(r.at),
    }));
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
