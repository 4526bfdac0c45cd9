import { formatEther } from "ethers";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { nonceAheadRetryCount } from "./chains/broadcast";
import type { Stores } from "./store/stores";
import type { DbWorkFigures } from "./store/db-work";
import type { ChainRegistry } from "./chains/registry";
import type { Config } from "./config";
import type { EventStreams } from "./events/stream";
import type { Relayer } from "./engine/relayer";
import type { WalletBalances } from "./wallet-balances";
import type { WebhookDispatcher } from "./events/dispatcher";
import type { PaymentRefunder } from "./payments/refunds";
import type { X402 } from "./payments/x402";
import { poolOf, readChains, type ChainFacts } from "./metrics-readings";

/** What the metrics read. */
export type MetricsSources = Pick<Stores, "db" | "webhookDeliveries" | "paymentRefunds"> & {
  chains: ChainRegistry;
  config: Config;
  eventStreams: EventStreams;
  relayer: Relayer;
  walletBalances?: Pick<WalletBalances, "current">;
  webhookDispatcher: WebhookDispatcher;
  x402?: Pick<X402, "failures">;
  paymentRefunder?: Pick<PaymentRefunder, "outcomes">;
};

/**
 * Prometheus metrics (GET /metrics), one registry per service instance (tests run several in one process):
 *
 * | metric                                   | type      | labels                 | from                                   |
 * |------------------------------------------|-----------|------------------------|----------------------------------------|
 * | tak_http_requests_total                  | counter   | method, route, status  | every answer (route = the template)    |
 * | tak_http_request_duration_seconds        | histogram | method, route, status  | every answer                           |
 * | tak_batches                              | gauge     | status                 | the database, on scrape                |
 * | tak_payments                             | gauge     | state                  | the database, on scrape (x402)         |
 * | tak_x402_settlement_failures_total       | counter   | cause (ours/payer)     | this process's failed settlements: ours stay owed, the payer's release |
 * | tak_x402_refunds                         | gauge     | state (owed/sending/refunded) | the database, on scrape: payments owed back after a failure of ours |
 * | tak_x402_refunds_total                   | counter   | outcome                | this process: owed (recorded), sent, refunded (confirmed), failed (not sendable, or reverted) |
 * | tak_relayer_balance_eth                  | gauge     | chain_id, address      | each chain, on scrape                  |
 * | tak_relayer_nonce_lag                    | gauge     | chain_id, address      | database counter − chain pending nonce |
 * | tak_wallet_balance_eth                   | gauge     | chain_id, wallet, address | wallet-balances.ts (relayer, settlement, refund) |
 * | tak_wallet_balance_low                   | gauge     | chain_id, wallet, address | 1 below 100 transactions at current fees |
 * | tak_chain_up                             | gauge     | chain_id               | 1 when the chain answered the scrape   |
 * | tak_db_pool_connections                  | gauge     | state (total/idle/waiting) | the PostgreSQL pool; PGlite: total 1 |
 * | tak_db_round_trips_total                 | counter   | work                   | trips to the database by route template (work a request started, its runner's included) or background |
 * | tak_db_statements_total                  | counter   | work                   | statements those trips carried         |
 * | tak_db_seconds_total                     | counter   | work                   | time spent awaiting those trips (embedded: the engine's call, run on this thread) |
 * | tak_broadcast_nonce_ahead_retries        | gauge     |                        | re-sends after "nonce too high" (process) |
 * | tak_reorgs_total                         | counter   | chain_id, depth        | transactions a reorg took off the chain: before or after their confirmations |
 * | tak_rpc_calls_total                      | counter   | chain_id, endpoint, outcome | RPC requests per URL (scheme and host only): ok, failed, throttled |
 * | tak_info                                 | gauge     | version, environment, database | 1                              |
 * | tak_webhook_deliveries_total             | counter   | outcome                | this process's attempts: delivered, retry, failed, lost_lease |
 * | tak_webhook_deliveries_owed              | gauge     | state (pending/delivering) | the database, on scrape            |
 * | tak_events_oldest_undelivered_seconds    | gauge     |                        | age of the oldest event still owed to an endpoint |
 * | tak_event_streams                        | gauge     |                        | open GET /events streams of this process |
 * | tak_mcp_tool_calls_total                 | counter   | tool, outcome          | MCP tool calls (POST /mcp): ok, error, payment_required, refused (not this connection's) |
 * | tak_mcp_tool_call_duration_seconds       | histogram | tool                   | every MCP tool call                    |
 * | tak_process_* , tak_nodejs_*             | (default) |                        | prom-client's process metrics          |
 *
 * Route labels are route templates (/documents/{sha256}), never raw paths; unmatched paths count as "(unmatched)".
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route" | "status">;
  private readonly toolCalls: Counter<"tool" | "outcome">;
  private readonly toolDuration: Histogram<"tool">;

  constructor(services: MetricsSources, version: string) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "tak_" });
    this.requests = new Counter({
      name: "tak_http_requests_total",
      help: "HTTP requests answered, by route template and status",
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "tak_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by route template and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.toolCalls = new Counter({
      name: "tak_mcp_tool_calls_total",
      help: "MCP tool calls answered, by tool and outcome (ok, error, payment_required, refused)",
      labelNames: ["tool", "outcome"],
      registers,
    });
    this.toolDuration = new Histogram({
      name: "tak_mcp_tool_call_duration_seconds",
      help: "Time to answer an MCP tool call, by tool",
      labelNames: ["tool"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    dbWorkCounters(registers, services);
    new Gauge({
      name: "tak_broadcast_nonce_ahead_retries",
      help: "Transactions of this process re-sent after the node answered nonce too high (a predecessor not in the node yet)",
      registers,
      collect() {
        this.set(nonceAheadRetryCount());
      },
    });
    new Gauge({
      name: "tak_reorgs_total",
      help: "Transactions a reorg took off the chain, by chain and depth: before their confirmations (sent again) or after them (deep: logged, status pending until back)",
      labelNames: ["chain_id", "depth"],
      registers,
      collect() {
        this.reset();
        for (const chain of services.chains.list()) {
          this.set({ chain_id: String(chain.chainId), depth: "before_confirmations" }, chain.shallowReorgs);
          this.set({ chain_id: String(chain.chainId), depth: "after_confirmations" }, chain.reorgWatch.deepReorgs);
        }
      },
    });
    new Gauge({
      name: "tak_rpc_calls_total",
      help: "RPC requests per chain and URL (scheme and host only), by outcome: ok, failed (error, timeout, reset: tried again elsewhere), throttled (429)",
      labelNames: ["chain_id", "endpoint", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const chain of services.chains.list()) {
          for (const e of chain.provider.endpoints) {
            const labels = { chain_id: String(chain.chainId), endpoint: `${e.priority}:${e.label}` };
            this.set({ ...labels, outcome: "ok" }, e.answered);
            this.set({ ...labels, outcome: "failed" }, e.failed);
            this.set({ ...labels, outcome: "throttled" }, e.throttled);
          }
        }
      },
    });
    new Gauge({
      name: "tak_info",
      help: "This service: API version, environment, database kind",
      labelNames: ["version", "environment", "database"],
      registers,
      collect() {
        this.set({ version, environment: services.config.ENVIRONMENT, database: services.db.kind }, 1);
      },
    });
    new Counter({
      name: "tak_webhook_deliveries_total",
      help: "Webhook delivery attempts of this process by outcome: delivered (2xx), retry (failed, another attempt scheduled), failed (schedule spent), lost_lease (answer not recorded: another instance took the delivery)",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const outcome of ["delivered", "retry", "failed", "lost_lease"] as const)
          this.inc({ outcome }, services.webhookDispatcher?.outcomes[outcome] ?? 0);
      },
    });
    // The two outbox gauges share one read per scrape.
    let backlogRead:
      | { at: number; done: Promise<{ pending: number; delivering: number; oldestUndeliveredSeconds: number }> }
      | undefined;
    const backlog = () => {
      if (!backlogRead || Date.now() - backlogRead.at > 1000)
        backlogRead = { at: Date.now(), done: services.webhookDeliveries.backlog() };
      return backlogRead.done;
    };
    new Gauge({
      name: "tak_webhook_deliveries_owed",
      help: "Webhook deliveries not done yet: pending (due now or later) and delivering (an attempt in flight), all instances",
      labelNames: ["state"],
      registers,
      async collect() {
        const b = await backlog();
        this.set({ state: "pending" }, b.pending);
        this.set({ state: "delivering" }, b.delivering);
      },
    });
    new Gauge({
      name: "tak_events_oldest_undelivered_seconds",
      help: "Age of the oldest event still owed to a webhook endpoint (0 when none is)",
      registers,
      async collect() {
        this.set((await backlog()).oldestUndeliveredSeconds);
      },
    });
    new Gauge({
      name: "tak_event_streams",
      help: "Open event streams (GET /events) of this process",
      registers,
      collect() {
        this.set(services.eventStreams?.size ?? 0);
      },
    });
    new Gauge({
      name: "tak_batches",
      help: "Prepared batches by status (prepared, sending, success, rejected)",
      labelNames: ["status"],
      registers,
      async collect() {
        const rows = await services.db.query<{ status: string; n: string }>(
          "SELECT status, count(*)::text AS n FROM batches GROUP BY status",
        );
        this.reset();
        for (const status of ["prepared", "sending", "success", "rejected"]) this.set({ status }, 0);
        for (const row of rows) this.set({ status: row.status }, Number(row.n));
      },
    });
    new Gauge({
      name: "tak_payments",
      help: "x402 payments by state (reserved, settling, settled, released)",
      labelNames: ["state"],
      registers,
      async collect() {
        const rows = await services.db.query<{ status: string; n: string }>(
          "SELECT status, count(*)::text AS n FROM payments GROUP BY status",
        );
        this.reset();
        for (const state of ["reserved", "settling", "settled", "released"]) this.set({ state }, 0);
        for (const row of rows) this.set({ state: row.status }, Number(row.n));
      },
    });
    new Counter({
      name: "tak_x402_settlement_failures_total",
      help: "Settlements this process could not make: cause=ours (the settlement wallet without gas, a chain that did not answer: the payment stays owed and is tried again) or payer (its authorization could no longer be used: released)",
      labelNames: ["cause"],
      registers,
      collect() {
        this.reset();
        this.inc({ cause: "ours" }, services.x402?.failures.ours ?? 0);
        this.inc({ cause: "payer" }, services.x402?.failures.payer ?? 0);
      },
    });
    new Gauge({
      name: "tak_x402_refunds",
      help: "x402 payments owed back after a failure of the service's, by state: owed (to be paid: by the refund wallet, or by an operator), sending, refunded",
      labelNames: ["state"],
      registers,
      async collect() {
        const { counts } = await services.paymentRefunds.totals();
        this.reset();
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    });
    new Counter({
      name: "tak_x402_refunds_total",
      help: "Refunds this process recorded (owed), sent with the refund wallet, saw confirmed (refunded), or could not send or saw revert (failed: tried again)",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const outcome of ["owed", "sent", "refunded", "failed"] as const)
          this.inc({ outcome }, services.paymentRefunder?.outcomes[outcome] ?? 0);
      },
    });
    // The chain gauges share one read of the chains per scrape (prom-client collects every metric concurrently).
    let chainRead: { at: number; done: Promise<ChainFacts[]> } | undefined;
    const chainFacts = () => {
      if (!chainRead || Date.now() - chainRead.at > 1000) chainRead = { at: Date.now(), done: readChains(services) };
      return chainRead.done;
    };
    new Gauge({
      name: "tak_chain_up",
      help: "1 when the chain's RPC answered this scrape (within 3 s), else 0",
      labelNames: ["chain_id"],
      registers,
      async collect() {
        const facts = await chainFacts();
        this.reset();
        for (const f of facts) this.set({ chain_id: f.chainId }, f.up ? 1 : 0);
      },
    });
    new Gauge({
      name: "tak_relayer_balance_eth",
      help: "Native balance of the service's relayer wallet per chain",
      labelNames: ["chain_id", "address"],
      registers,
      async collect() {
        const facts = await chainFacts();
        this.reset();
        for (const f of facts)
          for (const r of f.relayers)
            if (r.balance !== undefined) this.set({ chain_id: f.chainId, address: r.address }, r.balance);
      },
    });
    new Gauge({
      name: "tak_relayer_nonce_lag",
      help: "Relayer nonces taken but not yet seen by the chain: the database's next nonce minus the chain's pending nonce",
      labelNames: ["chain_id", "address"],
      registers,
      async collect() {
        const facts = await chainFacts();
        this.reset();
        for (const f of facts)
          for (const r of f.relayers)
            if (r.nonceLag !== undefined) this.set({ chain_id: f.chainId, address: r.address }, r.nonceLag);
      },
    });
    // Read in the background: a scrape waits at most 1 s for a stale reading.
    const walletReadings = () => services.walletBalances?.current() ?? Promise.resolve([]);
    new Gauge({
      name: "tak_wallet_balance_eth",
      help: "Native balance of the service's relayer, x402 settlement and refund wallets per chain (last reading)",
      labelNames: ["chain_id", "wallet", "address"],
      registers,
      async collect() {
        const readings = await walletReadings();
        this.reset();
        for (const b of readings)
          if (b.wei !== undefined)
            this.set({ chain_id: String(b.chainId), wallet: b.role, address: b.address }, Number(formatEther(b.wei)));
      },
    });
    new Gauge({
      name: "tak_wallet_balance_low",
      help: "1 when the wallet could pay for fewer than 100 transactions of 200,000 gas at the chain's current max fee",
      labelNames: ["chain_id", "wallet", "address"],
      registers,
      async collect() {
        const readings = await walletReadings();
        this.reset();
        for (const b of readings)
          if (b.low !== undefined)
            this.set({ chain_id: String(b.chainId), wallet: b.role, address: b.address }, b.low ? 1 : 0);
      },
    });
    new Gauge({
      name: "tak_db_pool_connections",
      help: "Database connections: the PostgreSQL pool's total, idle and waiting clients (the embedded PGlite: one, in process)",
      labelNames: ["state"],
      registers,
      collect() {
        this.reset();
        const pool = poolOf(services);
        if (!pool) return void this.set({ state: "total" }, 1);
        this.set({ state: "total" }, pool.totalCount);
        this.set({ state: "idle" }, pool.idleCount);
        this.set({ state: "waiting" }, pool.waitingCount);
      },
    });
  }

  /** Counts one answered request. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  /** One MCP tool call (`tool` is a name of the generated tool list: a bounded label). */
  observeTool(tool: string, outcome: "ok" | "error" | "payment_required" | "refused", seconds: number): void {
    this.toolCalls.inc({ tool, outcome });
    this.toolDuration.observe({ tool }, seconds);
  }
}

/** The database's trips, statements and time per kind of work, read on scrape. */
function dbWorkCounters(registers: Registry[], services: MetricsSources): void {
  const figures: [string, string, (f: DbWorkFigures) => number][] = [
    [
      "tak_db_round_trips_total",
      "Trips to the database (one message and its answer), by the work that made them: the route template of the request (with what its runner did for it) or background",
      (f) => f.trips,
    ],
    [
      "tak_db_statements_total",
      "Statements the database ran, by the work that asked for them (several may share a trip)",
      (f) => f.statements,
    ],
    ["tak_db_seconds_total", "Time spent awaiting the database's answers, by the work that asked", (f) => f.ms / 1000],
  ];
  for (const [name, help, read] of figures)
    new Counter({
      name,
      help,
      labelNames: ["work"],
      registers,
      collect() {
        this.reset();
        for (const [work, f] of Object.entries(services.db.work.snapshot())) this.inc({ work }, read(f));
      },
    });
}

const instances = new WeakMap<MetricsSources, Metrics>();

/** The metrics of a service instance (created on first use). */
export function metricsOf(services: MetricsSources, version: string): Metrics {
  let metrics = instances.get(services);
  if (!metrics) instances.set(services, (metrics = new Metrics(services, version)));
  return metrics;
}
