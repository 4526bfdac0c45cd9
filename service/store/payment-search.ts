import type { Db } from "./db";
import type { PaymentStatus } from "./payment-records";

/** An x402 payment as the operator sees it (never its signed authorization or settlement bytes). */
export interface PaymentRow {
  id: string;
  /** What it paid for: `<step>:<txId>` for a batch's prepare or send, `read:…` for a paid read, `faucet:…`. */
  subject: string;
  route: string;
  txId: string | null;
  /** The batch's method, when it paid for a batch. */
  method: string | null;
  network: string;
  asset: string;
  amount: string;
  payer: string;
  payTo: string;
  status: PaymentStatus;
  releaseReason: string | null;
  /** The transaction that settled it (or is settling it): its own, a Multicall3 batch's, or its operation's. */
  settlementTransaction: string | null;
  settledInOperation: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface PaymentFilter {
  status?: PaymentStatus;
  payer?: string;
  txId?: string;
  /** Payments settled by this transaction (the others of a Multicall3 batch). */
  settlementTransaction?: string;
  before?: { createdAt: string; id: string };
  limit: number;
}

/** The sums of settled payments for one day and one operation (what was charged), with the released ones counted. */
export interface PaymentTotal {
  day: string;
  operation: string;
  settled: number;
  /** Base units of the asset (USDC: 6 decimals), summed over settled payments. */
  amount: string;
  released: number;
}

interface Row {
  id: string;
  subject: string;
  route: string;
  tx_id: string | null;
  method: string | null;
  network: string;
  asset: string;
  amount: string;
  payer: string;
  pay_to: string;
  status: PaymentStatus;
  release_reason: string | null;
  settlement: { transaction?: string } | string | null;
  settle_tx_hash: string | null;
  settle_in_operation: boolean;
  cursor: string;
  updated_at: Date | string;
}

const COLUMNS = `p.id::text AS id, p.subject, p.route, p.tx_id, b.method, p.network, p.asset, p.amount::text AS amount, p.payer, p.pay_to, p.status,
  p.release_reason, p.settlement, p.settle_tx_hash, p.settle_in_operation, p.updated_at,
  to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor`;

function toRow(r: Row): PaymentRow {
  const settlement =
    typeof r.settlement === "string" ? (JSON.parse(r.settlement) as { transaction?: string }) : r.settlement;
  return {
    id: r.id,
    subject: r.subject,
    route: r.route,
    txId: r.tx_id,
    method: r.method,
    network: r.network,
    asset: r.asset,
    amount: r.amount,
    payer: r.payer,
    payTo: r.pay_to,
    status: r.status,
    releaseReason: r.release_reason,
    settlementTransaction: settlement?.transaction ?? r.settle_tx_hash,
    settledInOperation: r.settle_in_operation,
    createdAt: r.cursor,
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

/** x402 payments as the operator looks for them (payments.ts keeps their state machine), and their totals. */
export class PaymentSearch {
  constructor(private readonly db: Db) {}

  /** A page of payments, newest first. */
  async page(filter: PaymentFilter): Promise<PaymentRow[]> {
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM payments p LEFT JOIN batches b ON b.tx_id = p.tx_id
       WHERE ($1::text IS NULL OR p.status = $1) AND ($2::text IS NULL OR p.payer = $2) AND ($3::text IS NULL OR p.tx_id = $3)
         AND ($4::text IS NULL OR p.settle_tx_hash = $4 OR p.settlement->>'transaction' = $4)
         AND ($5::timestamptz IS NULL OR (p.created_at, p.id) < ($5::timestamptz, $6::uuid))
       ORDER BY p.created_at DESC, p.id DESC LIMIT $7`,
      [
        filter.status ?? null,
        filter.payer?.toLowerCase() ?? null,
        filter.txId?.toLowerCase() ?? null,
        filter.settlementTransaction?.toLowerCase() ?? null,
        filter.before?.createdAt ?? null,
        filter.before?.id ?? null,
        filter.limit,
      ],
    );
    return rows.map(toRow);
  }

  async get(id: string): Promise<PaymentRow | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const [row] = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM payments p LEFT JOIN batches b ON b.tx_id = p.tx_id WHERE p.id = $1::uuid`,
      [id],
    );
    return row && toRow(row);
  }

  /**
   * The last `days` days (today included, UTC), newest first: per day and operation, the settled payments and what
   * they charged, and how many were released. The operation is the batch's method, or what the subject names.
   */
  async totals(days: number): Promise<PaymentTotal[]> {
    const rows = await this.db.query<{
      day: string;
      operation: string;
      settled: number;
      amount: string;
      released: number;
    }>(
      `SELECT to_char(date_trunc('day', p.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
              COALESCE(b.method, split_part(p.route, '?', 1)) AS operation,
              count(*) FILTER (WHERE p.status = 'settled')::int AS settled,
              COALESCE(sum(p.amount) FILTER (WHERE p.status = 'settled'), 0)::text AS amount,
              count(*) FILTER (WHERE p.status = 'released')::int AS released
       FROM payments p LEFT JOIN batches b ON b.tx_id = p.tx_id
       WHERE p.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => $1 - 1)
       GROUP BY 1, 2 ORDER BY 1 DESC, 2`,
      [days],
    );
    return rows;
  }

  /** Settlement transactions of their own (not an operation's) sent and not mined yet: the settlement wallet's work in flight. */
  async settlementsInFlight(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(DISTINCT settle_tx_hash)::int AS n FROM payments WHERE status = 'settling' AND NOT settle_in_operation AND settle_tx_hash IS NOT NULL",
    );
    return row.n;
  }

  /** Payments by state (reserved, settling, settled, released). */
  async counts(): Promise<Record<PaymentStatus, number>> {
    const rows = await this.db.query<{ status: PaymentStatus; n: number }>(
      "SELECT status, count(*)::int AS n FROM payments GROUP BY status",
    );
    const counts = { reserved: 0, settling: 0, settled: 0, released: 0 };
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }
}
