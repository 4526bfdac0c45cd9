import type { Db } from "./db";
import { keysetCount, keysetPage, type Conditions, type KeysetList } from "./keyset";
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
  /** Paid on this chain (the payment's network, eip155:<chainId>). */
  chainId?: number;
  /** What it paid for: the batch's method, or the paid route's path (/get-agents). */
  operation?: string;
  /** Reserved at or after `from` and before `to` (ISO 8601). */
  from?: string;
  to?: string;
}

/** A page of a filtered list: after or before a row's cursor (its `createdAt` and `id`), newest first. */
export interface PaymentPage extends PaymentFilter {
  before?: { createdAt: string; id: string };
  after?: { createdAt: string; id: string };
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

const OPERATION = "COALESCE(b.method, split_part(p.route, '?', 1))";

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

/** The payments list with a filter's conditions, keyed newest first by (created_at, id). */
function paymentList(f: PaymentFilter): KeysetList {
  return {
    select: COLUMNS,
    from: "payments p LEFT JOIN batches b ON b.tx_id = p.tx_id",
    key: ["p.created_at", "p.id"],
    keyTypes: ["timestamptz", "uuid"],
    filter: (c: Conditions) => {
      if (f.status) c.add(`p.status = ${c.param(f.status)}`);
      if (f.payer) c.add(`p.payer = ${c.param(f.payer.toLowerCase())}`);
      if (f.txId) c.add(`p.tx_id = ${c.param(f.txId.toLowerCase())}`);
      if (f.settlementTransaction) {
        const h = c.param(f.settlementTransaction.toLowerCase());
        c.add(`(p.settle_tx_hash = ${h} OR p.settlement->>'transaction' = ${h})`);
      }
      if (f.chainId !== undefined) c.add(`p.network = ${c.param(`eip155:${f.chainId}`)}`);
      // OPERATION's two sides apart: a method through its batches (their index), a route among payments of no batch.
      if (f.operation?.startsWith("/"))
        c.add(`b.method IS NULL AND split_part(p.route, '?', 1) = ${c.param(f.operation)}`);
      else if (f.operation) c.add(`b.method = ${c.param(f.operation)}`);
      if (f.from) c.add(`p.created_at >= ${c.param(f.from)}::timestamptz`);
      if (f.to) c.add(`p.created_at < ${c.param(f.to)}::timestamptz`);
    },
  };
}

/** x402 payments as the operator looks for them (payments.ts keeps their state machine), and their totals. */
export class PaymentSearch {
  constructor(private readonly db: Db) {}

  /** A page of payments, newest first. */
  async page(page: PaymentPage): Promise<PaymentRow[]> {
    const rows = await keysetPage<Row>(this.db, paymentList(page), {
      before: page.before && [page.before.createdAt, page.before.id],
      after: page.after && [page.after.createdAt, page.after.id],
      limit: page.limit,
    });
    return rows.map(toRow);
  }

  /** How many payments the filter matches, and how many of them are newer than `first` (a page's first row). */
  count(filter: PaymentFilter, first?: { createdAt: string; id: string }): Promise<{ total: number; newer: number }> {
    return keysetCount(this.db, paymentList(filter), first && [first.createdAt, first.id]);
  }

  /**
   * Payments waiting on something of ours, by state: reserved (the work not done yet) and settling (the settlement not
   * mined yet), each with its oldest's last change.
   */
  async owed(): Promise<Record<"reserved" | "settling", { count: number; oldestAt: string | null }>> {
    const rows = await this.db.query<{ status: "reserved" | "settling"; n: number; oldest: Date | string | null }>(
      "SELECT status, count(*)::int AS n, min(updated_at) AS oldest FROM payments WHERE status IN ('reserved', 'settling') GROUP BY status",
    );
    const owed = { reserved: { count: 0, oldestAt: null }, settling: { count: 0, oldestAt: null } } as Record<
      "reserved" | "settling",
      { count: number; oldestAt: string | null }
    >;
    for (const r of rows)
      owed[r.status] = { count: r.n, oldestAt: r.oldest === null ? null : new Date(r.oldest).toISOString() };
    return owed;
  }

  /** Settlement transactions of its own the facilitator sent in the last `hours` (what the settlement wallet spends on). */
  async settlementTransactionsSince(hours: number): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(DISTINCT settle_tx_hash)::int AS n FROM payments
       WHERE settle_tx_hash IS NOT NULL AND NOT settle_in_operation AND updated_at >= now() - make_interval(hours => $1)`,
      [hours],
    );
    return row.n;
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
              ${OPERATION} AS operation,
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
