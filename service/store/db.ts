import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { Pool, types as pgTypes, type PoolClient } from "pg";
import { PreparedStatements } from "./prepared-statements";
import { openPglite } from "./pglite-template";
import { makePrivate, privateDirectory } from "./private-files";

/** Something SQL can run on: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/**
 * The one small interface both backends satisfy: the embedded PGlite (default, in-process, on disk) and a PostgreSQL
 * server through `pg` (DATABASE_URL; several service instances may share it). Postgres dialect everywhere.
 */
export interface Db extends Queryable {
  readonly kind: "pglite" | "postgres";
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
  /** An object with the `query({ text, values })` shape that rate-limiter-flexible's Postgres store expects. */
  rateLimiterClient(): { query(q: { text: string; values?: unknown[] }): Promise<{ rows: unknown[] }> };
  close(): Promise<void>;
}

/** A connection held apart from the pool (see Db.session). */
export interface DbSession extends Queryable {
  release(error?: Error): void;
}

// int8 and numeric come back as strings from both backends: amounts never pass through JS numbers.
pgTypes.setTypeParser(20, (v) => v);

class PgliteDb implements Db {
  readonly kind = "pglite" as const;
  private readonly statements = new PreparedStatements();
  private constructor(
    private readonly pg: PGlite,
    private readonly dataDir?: string,
  ) {}

  /** On disk, the database's directory and its parent are private to the service's user (0700, files 0600). */
  static async open(dataDir?: string): Promise<PgliteDb> {
    if (dataDir) {
      privateDirectory(path.dirname(dataDir));
      privateDirectory(dataDir);
    }
    const pg = await openPglite(dataDir);
    // This connection runs every transaction, one after the other: events are numbered as they are inserted (migration 013).
    await pg.exec("SET tak.single_writer = 'on'");
    if (dataDir) makePrivate(dataDir);
    return new PgliteDb(pg, dataDir);
  }

  query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.statements.run<T>(this.pg, sql, params);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.pg.transaction(async (tx) => fn({ query: <R>(sql: string, params: readonly unknown[] = []) => this.statements.run<R>(tx, sql, params) }));
  }

  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    return this.pg.listen(channel, () => onNotify());
  }

  rateLimiterClient() {
    return { query: async (q: { text: string; values?: unknown[] }) => this.pg.query(q.text, q.values ?? []) };
  }

  async close() {
    if (!this.pg.closed) await this.pg.close();
    if (this.dataDir) makePrivate(this.dataDir);
  }
}

class PostgresDb implements Db {
  readonly kind = "postgres" as const;
  constructor(private readonly pool: Pool) {}

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await this.pool.query(sql, params as unknown[]);
    return result.rows as T[];
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const value = await fn({
        query: async <R>(sql: string, params: readonly unknown[] = []) =>
          (await client.query(sql, params as unknown[])).rows as R[],
      });
      await client.query("COMMIT");
      return value;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async session(): Promise<DbSession> {
    const client = await this.pool.connect();
    return {
      query: async <R>(sql: string, params: readonly unknown[] = []) => (await client.query(sql, params as unknown[])).rows as R[],
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
      if (c) await c.query(`UNLISTEN ${channel}`).then(() => c.release(), (error: Error) => c.release(error));
    };
  }

  rateLimiterClient() {
    return { query: (q: { text: string; values?: unknown[] }) => this.pool.query(q.text, q.values) };
  }

  async close() {
    await this.pool.end();
  }
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
