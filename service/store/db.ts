import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { Pool, types as pgTypes, type PoolClient } from "pg";
import { DbWork, timedTrip } from "./db-work";
import { PreparedStatements } from "./prepared-statements";
import { PgliteProtocol, type Wire } from "./pglite-protocol";
import { PgliteTransaction, Serial } from "./pglite-transaction";
import { PostgresTransaction, StatementGatherer, type LeadStatement } from "./postgres-transaction";
import { inlineParameters } from "./inline-parameters";
import { openPglite } from "./pglite-template";
import { makePrivate, privateDirectory } from "./private-files";
import { allIssued, type Queryable } from "./queryable";

export type { Queryable } from "./queryable";

/**
 * The one small interface both backends satisfy: the embedded PGlite (default, in-process, on disk) and a PostgreSQL
 * server through `pg` (DATABASE_URL; several service instances may share it). Postgres dialect everywhere.
 */
export interface Db extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Its trips, statements and time so far, per kind of work (db-work.ts). */
  readonly work: DbWork;
  /** Runs `fn` in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Server only: a connection of its own until released, for session state (advisory locks). `release(error)` closes
   * it instead of returning it to the pool. Absent on the embedded database (one process, nothing to coordinate).
   */
  session?(): Promise<DbSession>;
  /**
   * Calls `onNotify` whenever a committed transaction NOTIFYs `channel` (any instance on the server). Resolves with the
   * function that stops listening. On the server it holds one connection, and takes a new one if that one fails.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * An object with the `query({ text, values })` shape that rate-limiter-flexible's Postgres store expects. `lazy`: for
   * statements nobody waits for (a slot given back); on the server they ride with the next rate-limit trip, or go alone
   * within a couple of seconds (StatementGatherer).
   */
  rateLimiterClient(options?: { lazy?: boolean }): {
    query(q: { text: string; values?: unknown[] }): Promise<{ rows: unknown[] }>;
  };
  close(): Promise<void>;
}

/** A connection held apart from the pool (see Db.session). */
export interface DbSession extends Queryable {
  /** Runs `fn` in one transaction on this connection; `lead` travels right after its BEGIN, in its first trip. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, lead?: LeadStatement): Promise<T>;
  release(error?: Error): void;
}

/** The embedded database's planner cost of a page read out of order (see PgliteDb.open). */
const EMBEDDED_RANDOM_PAGE_COST = 1.1;

// int8 and numeric come back as strings from both backends: amounts never pass through JS numbers.
pgTypes.setTypeParser(20, (v) => v);

class PgliteDb implements Db {
  readonly kind = "pglite" as const;
  readonly work = new DbWork();
  private readonly protocol: PgliteProtocol;
  private readonly statements: PreparedStatements;
  /** The one connection runs one statement or transaction at a time (PgliteTransaction sends BEGIN itself). */
  private readonly turns = new Serial();
  /** Channel → who listens (see listen). */
  private readonly listeners = new Map<string, Set<() => void>>();
  private constructor(
    private readonly pg: PGlite,
    wire: Wire,
    private readonly dataDir?: string,
  ) {
    this.protocol = new PgliteProtocol(pg, wire, (channel) => this.notify(channel));
    this.statements = new PreparedStatements(this.protocol);
  }

  /** On disk, the database's directory and its parent are private to the service's user (0700, files 0600). */
  static async open(dataDir?: string): Promise<PgliteDb> {
    if (dataDir) {
      privateDirectory(path.dirname(dataDir));
      privateDirectory(dataDir);
    }
    const pg = await openPglite(dataDir);
    // This connection runs every transaction, one after the other: events are numbered as they are inserted (migration 013).
    await pg.exec("SET tak.single_writer = 'on'");
    // Its pages are always in memory (its own buffers or the OS cache): a page read out of order costs about what the
    // next page does. At PostgreSQL's default (4, for disks) the planner scanned tables of a few hundred rows whole
    // where an index finds the row (measured: bench/results/speed-runs.md, fifth session). Plans made before a table
    // grew are made again by PlannerStatistics.
    await pg.exec(`SET random_page_cost = ${EMBEDDED_RANDOM_PAGE_COST}`);
    if (dataDir) makePrivate(dataDir);
    const { protocol } = await import("@electric-sql/pglite");
    return new PgliteDb(pg, protocol, dataDir);
  }

  query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.turns.run(() => this.statements.run<T>(sql, params, this.work));
  }

  async write(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.query(sql, params);
  }

  finalQuery<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.query<T>(sql, params);
  }

  together = allIssued;

  ahead<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.query<T>(sql, params);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.turns.run(() => new PgliteTransaction(this.statements, this.work).run(fn));
  }

  /**
   * A NOTIFY reaches `onNotify` by either path into the engine: PGlite's own calls dispatch it to what `pg.listen`
   * registered, this class's trips (PgliteProtocol) to `notify`. Channels are plain lower-case names.
   */
  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    const hear = () => onNotify();
    const unlisten = await this.turns.run(() => this.protocol.viaPglite((pg) => pg.listen(channel, hear)));
    const hearing = this.listeners.get(channel) ?? new Set<() => void>();
    this.listeners.set(channel, hearing.add(hear));
    return () => {
      hearing.delete(hear);
      // Called with no argument: PGlite's unlisten takes a transaction to run UNLISTEN in as its first.
      return this.turns.run(() => this.protocol.viaPglite(() => unlisten()));
    };
  }

  /** As PGlite dispatches a notification: each listener in a microtask of its own. */
  private notify(channel: string) {
    for (const hear of this.listeners.get(channel) ?? []) queueMicrotask(hear);
  }

  rateLimiterClient() {
    return {
      query: (q: { text: string; values?: unknown[] }) =>
        this.turns.run(() =>
          timedTrip(this.work, 1, () => this.protocol.viaPglite((pg) => pg.query(q.text, q.values ?? []))),
        ),
    };
  }

  async close() {
    if (!this.pg.closed) await this.pg.close();
    if (this.dataDir) makePrivate(this.dataDir);
  }
}

class PostgresDb implements Db {
  readonly kind = "postgres" as const;
  readonly work = new DbWork();
  constructor(private readonly pool: Pool) {}

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await timedTrip(this.work, 1, () => this.pool.query(sql, params as unknown[]));
    return result.rows as T[];
  }

  async write(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.query(sql, params);
  }

  finalQuery<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.query<T>(sql, params);
  }

  together = allIssued;

  ahead<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.query<T>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      return await new PostgresTransaction(client, this.work).run(fn);
    } finally {
      client.release();
    }
  }

  async session(): Promise<DbSession> {
    const client = await this.pool.connect();
    return {
      ...clientQueryable(client, this.work),
      transaction: (fn, lead) => new PostgresTransaction(client, this.work, lead).run(fn),
      release: (error?: Error) => client.release(error),
    };
  }

  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Invalid channel name ${channel}`);
    let client: PoolClient | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (): Promise<void> => {
      try {
        const c = await this.pool.connect();
        c.on("notification", (message) => message.channel === channel && onNotify());
        c.once("error", (error) => {
          // The connection failed: a fresh one listens again (a wake-up may be lost meanwhile; listeners also poll).
          if (client === c) client = undefined;
          c.release(error);
          if (!stopped) retry = setTimeout(() => void connect(), 1000);
        });
        await c.query(`LISTEN ${channel}`);
        if (stopped) return c.release();
        client = c;
        onNotify(); // anything committed while no connection listened
      } catch {
        if (!stopped) retry = setTimeout(() => void connect(), 1000);
      }
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c)
        await c.query(`UNLISTEN ${channel}`).then(
          () => c.release(),
          (error: Error) => c.release(error),
        );
    };
  }

  /**
   * The rate limits' statements: those issued in one turn of the event loop (a request's, or requests') share a trip,
   * with the slots given back since the last trip ahead of them.
   */
  private readonly limiterStatements = new StatementGatherer((texts) =>
    timedTrip(this.work, texts.length, () => this.pool.query(texts.join(";\n"))),
  );

  rateLimiterClient(options: { lazy?: boolean } = {}) {
    return {
      query: (q: { text: string; values?: unknown[] }) =>
        this.limiterStatements.run(inlineParameters(q.text, q.values ?? []), options),
    };
  }

  async close() {
    await this.limiterStatements.flush().catch(() => undefined);
    await this.pool.end();
  }
}

/** A server connection as a Queryable: each statement runs at once. */
function clientQueryable(client: PoolClient, work: DbWork): Queryable {
  const query = async <R>(sql: string, params: readonly unknown[] = []) =>
    (await timedTrip(work, 1, () => client.query(sql, params as unknown[]))).rows as R[];
  return {
    query,
    write: async (sql, params) => void (await query(sql, params)),
    finalQuery: query,
    together: allIssued,
    ahead: query,
  };
}

export interface OpenDbOptions {
  /** postgres://… to use a server; otherwise the embedded database. */
  databaseUrl?: string;
  /** Directory of the embedded database; omit for an in-memory one (tests). */
  dataDir?: string;
  /** Server only: run every query in this schema (created if missing). Lets test runs share one database. */
  schema?: string;
}

export async function openDb(options: OpenDbOptions): Promise<Db> {
  if (!options.databaseUrl) return PgliteDb.open(options.dataDir);
  const schema = options.schema;
  if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`Invalid schema name ${schema}`);
  if (schema) {
    const bootstrap = new Pool({ connectionString: options.databaseUrl, max: 1 });
    await bootstrap.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await bootstrap.end();
  }
  const pool = new Pool({
    connectionString: options.databaseUrl,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  pool.on("error", () => undefined); // an idle client's error must not crash the process; the next query reports it
  return new PostgresDb(pool);
}
