import { errorFacts, type Logger } from "../logger";
import type { Db } from "./db";

/**
 * How often the embedded database's tables are looked at (and at start): a look costs ~1 ms, an ANALYZE only follows
 * enough changes, and a fresh database's tables grow from nothing in its first minutes.
 */
const ANALYZE_EVERY_MS = 10_000;

/**
 * The tables PostgreSQL's autovacuum would analyze now: changed by more than 50 rows + 10 % of their size since their
 * last ANALYZE (its default autovacuum_analyze_threshold and _scale_factor), or never analyzed though they hold rows.
 */
const CHANGED_TABLES = `SELECT relname FROM pg_stat_user_tables
  WHERE schemaname = current_schema()
    AND (n_mod_since_analyze > 50 + 0.1 * n_live_tup OR (last_analyze IS NULL AND last_autoanalyze IS NULL AND n_live_tup > 0))
  ORDER BY relname`;

/**
 * Planner statistics of the embedded database, which has no autovacuum. Without them its planner guesses each table's
 * rows from its pages, and a statement it planned once (PreparedStatements) keeps that plan while the table grows:
 * the outbox's claim sorted every delivery owed, a lookup planned over an empty table kept scanning it whole. ANALYZE
 * gives the planner the numbers and makes it plan the statements on those tables again. A PostgreSQL server's own
 * autovacuum does this there: nothing runs on it.
 */
export class PlannerStatistics {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Analyzes the tables that changed enough since their last ANALYZE; answers their names. */
  async refresh(): Promise<string[]> {
    // This connection's own counts reach pg_stat_user_tables at most once a second, when it is idle: now, before the next statement.
    await this.db.query("SELECT pg_stat_force_next_flush()");
    const tables = (await this.db.query<{ relname: string }>(CHANGED_TABLES)).map((r) => r.relname);
    if (tables.length) await this.db.query(`ANALYZE ${tables.map(quoteIdentifier).join(", ")}`);
    return tables;
  }

  async start(): Promise<void> {
    if (this.db.kind !== "pglite" || this.timer) return;
    await this.tick();
    this.timer = setInterval(() => void this.tick(), ANALYZE_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.refresh()
      .then((tables) => tables.length && this.log.debug({ tables }, "planner statistics refreshed"))
      .catch((error) => this.log.warn({ err: errorFacts(error) }, "planner statistics not refreshed"))
      .finally(() => (this.running = undefined));
    await this.running;
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
