import type { PoolClient, QueryResult } from "pg";
import { timedTrip, type DbWork } from "./db-work";
import { inlineParameters } from "./inline-parameters";
import { AFTER_FINAL_QUERY, allIssued, TRANSACTION_ROLLED_BACK, type Queryable } from "./queryable";
import { WaitingStatements } from "./waiting-statements";

/**
 * A statement a transaction sends right after its BEGIN, in its first trip (a session lock taken with the transaction's
 * first statements: store/wallet-locks.ts). `onFirstTrip` hears how that trip went: undefined, or its error.
 */
export interface LeadStatement {
  text: string;
  onFirstTrip(error?: unknown): void;
}

/**
 * One transaction on a PostgreSQL server connection, in as few trips as the embedded database's (pglite-transaction.ts):
 * - BEGIN travels with the transaction's first statement;
 * - a statement nobody reads the rows of (`write`) waits and travels with the next statement, or with COMMIT;
 * - statements issued `together` travel in one trip;
 * - a statement whose rows are read later (`ahead`) waits as a write does, at the latest to the end of the event loop's
 *   turn.
 * The statements of one trip go as one text in the simple query protocol, their parameters written in as literals
 * (inline-parameters.ts). A statement that fails in a combined trip fails the transaction there, as it would have alone:
 * the statements after it in that text do not run, the transaction is rolled back and the error is thrown from the
 * `query` (or the commit) that carried it.
 */
export class PostgresTransaction implements Queryable {
  /** Statements (SQL text) to run ahead of the next one (BEGIN until it was sent, then deferred writes and `ahead` ones). */
  private readonly waiting = new WaitingStatements<string>(["BEGIN"]);
  private begun = false;
  /** A finalQuery carried the COMMIT. */
  private committed = false;
  /** While `together` issues its statements: those gathered for its one trip. */
  private gathering?: { text: string; resolve(rows: unknown[]): void; reject(error: unknown): void }[];

  /** How many statements wait before anything was sent (BEGIN, and a lead statement). */
  private readonly unsent: number;

  constructor(
    private readonly client: PoolClient,
    private readonly work: DbWork,
    private readonly lead?: LeadStatement,
  ) {
    if (lead) this.waiting.add(lead.text);
    this.unsent = this.waiting.length;
  }

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const text = inlineParameters(sql, params);
    if (this.gathering)
      return new Promise<T[]>((resolve, reject) =>
        this.gathering!.push({ text, resolve: (rows) => resolve(rows as T[]), reject }),
      );
    const results = await this.send([text]);
    return results[results.length - 1].rows as T[];
  }

  async finalQuery<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const results = await this.commit([inlineParameters(sql, params)]);
    return results[results.length - 2].rows as T[];
  }

  async write(sql: string, params: readonly unknown[] = []): Promise<void> {
    if (this.committed) throw new Error(AFTER_FINAL_QUERY);
    this.waiting.add(inlineParameters(sql, params));
  }

  ahead<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    if (this.committed) return Promise.reject(new Error(AFTER_FINAL_QUERY));
    return this.waiting.addAhead<T>(inlineParameters(sql, params), () => this.send([]));
  }

  /** The statements `issue` starts, gathered into one trip (after what waits). */
  together<T extends readonly unknown[]>(issue: () => { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
    const gathered: NonNullable<PostgresTransaction["gathering"]> = [];
    this.gathering = gathered;
    let issued: { readonly [K in keyof T]: Promise<T[K]> };
    try {
      issued = issue();
    } finally {
      this.gathering = undefined;
    }
    if (gathered.length) {
      this.send(gathered.map((g) => g.text)).then(
        (results) => gathered.forEach((g, i) => g.resolve(results[results.length - gathered.length + i].rows)),
        (error: unknown) => gathered.forEach((g) => g.reject(error)),
      );
    }
    return allIssued(() => issued);
  }

  /** Runs `fn` in this transaction: commits what it did, or rolls it back and throws what it threw. */
  async run<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      const value = await fn(this);
      if (this.committed || (!this.begun && this.waiting.length === this.unsent)) return value; // committed, or nothing ran
      await this.commit();
      return value;
    } catch (error) {
      this.waiting.failAll(error);
      if (this.begun && !this.committed)
        await timedTrip(this.work, 1, () => this.client.query("ROLLBACK")).catch(() => undefined);
      throw error;
    }
  }

  /** One trip: what waits, `texts`, then COMMIT; throws when the COMMIT rolled back (a statement in it had failed). */
  private async commit(texts: string[] = []) {
    const results = await this.send([...texts, "COMMIT"]);
    this.committed = true;
    // COMMIT of a transaction that failed earlier (an error caught inside `fn`) answers ROLLBACK.
    if (results[results.length - 1].command === "ROLLBACK") throw new Error(TRANSACTION_ROLLED_BACK);
    return results;
  }

  /** One trip: what waits, then `texts`; the answer of each statement, in order. */
  private async send(texts: string[]): Promise<QueryResult[]> {
    if (this.committed) throw new Error(AFTER_FINAL_QUERY);
    const ahead = this.waiting.take();
    const batch = [...ahead.statements, ...texts];
    // BEGIN is in this trip: whatever fails in it, the transaction is open (aborted) and must be rolled back.
    const first = !this.begun;
    this.begun = true;
    let answer: QueryResult | QueryResult[];
    try {
      answer = await timedTrip(this.work, batch.length, () => this.client.query(batch.join(";\n")));
    } catch (error) {
      if (first) this.lead?.onFirstTrip(error);
      ahead.failed(error);
      throw error;
    }
    if (first) this.lead?.onFirstTrip();
    const results = (Array.isArray(answer) ? answer : [answer]) as QueryResult[];
    ahead.answered((i) => results[i].rows);
    return results;
  }
}

/** A statement gathered `lazily` waits at most this long for a trip to ride in before it goes alone. */
export const LAZY_STATEMENT_MS = 2_000;

/**
 * Statements outside any transaction, gathered for one turn of the event loop and sent as one text (one trip). They
 * run as one implicit transaction: if one fails, none took effect and each is answered with that error. Only for
 * statements whose failure together is harmless (the rate limits' counters).
 * A `lazy` statement (one nobody waits for: a concurrency slot given back) does not start a trip: it rides ahead of the
 * next statements gathered, or goes alone after LAZY_STATEMENT_MS. Ahead of them, it has taken effect for every
 * statement of this process that follows it.
 */
export class StatementGatherer {
  private waiting: { text: string; resolve(result: QueryResult): void; reject(error: unknown): void }[] = [];
  private flushScheduled = false;
  private lazyTimer?: NodeJS.Timeout;

  constructor(private readonly trip: (texts: string[]) => Promise<QueryResult | QueryResult[]>) {}

  run(text: string, options: { lazy?: boolean } = {}): Promise<QueryResult> {
    if (options.lazy) this.lazyTimer ??= setTimeout(() => void this.flush(), LAZY_STATEMENT_MS).unref();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => void this.flush());
    }
    return new Promise((resolve, reject) => this.waiting.push({ text, resolve, reject }));
  }

  /** Sends what waits now (lazy statements included); resolves once it was answered. */
  async flush(): Promise<void> {
    this.flushScheduled = false;
    clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (!batch.length) return;
    await this.trip(batch.map((s) => s.text)).then(
      (answer) => {
        const results = Array.isArray(answer) ? answer : [answer];
        batch.forEach((s, i) => s.resolve(results[i]));
      },
      (error: unknown) => batch.forEach((s) => s.reject(error)),
    );
  }
}
