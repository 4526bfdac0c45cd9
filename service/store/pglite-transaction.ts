import type { DbWork } from "./db-work";
import { AFTER_FINAL_QUERY, allIssued, TRANSACTION_ROLLED_BACK, type Queryable } from "./queryable";
import type { PreparedStatements } from "./prepared-statements";
import type { Step, StepResult } from "./pglite-protocol";
import { WaitingStatements } from "./waiting-statements";

/** Runs one job at a time, in the order they were asked for: the embedded database has one connection. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * One transaction on the embedded database, with fewer trips into its engine than BEGIN, each statement and COMMIT
 * apart (each trip costs ~0.05–0.3 ms of the request's thread whatever the statement does):
 * - BEGIN travels with the transaction's first statement;
 * - a statement nobody reads the rows of (`write`) waits and travels with the next statement, or with COMMIT;
 * - so does a statement whose rows are read later (`ahead`), at the latest at the end of the event loop's turn.
 * A statement that fails in a combined trip fails the transaction there, as it would have alone: the statements after
 * it in that trip do not run, the transaction is rolled back and the error is thrown from the `query` (or the
 * commit) that carried it. The caller (PgliteDb) holds the connection for the transaction's whole length.
 */
export class PgliteTransaction implements Queryable {
  /**
   * Statements to run ahead of the next one (BEGIN until it was sent, then deferred writes and `ahead` ones); a promise
   * while a statement is prepared on its first run: the trip waits for it, in its place.
   */
  private readonly waiting = new WaitingStatements<Step | Promise<Step>>([BEGIN]);
  private begun = false;
  /** A finalQuery carried the COMMIT. */
  private committed = false;
  /** While `together` issues its statements: those gathered for its one trip. */
  private gathering?: { step: Step; resolve(rows: unknown[]): void; reject(error: unknown): void }[];

  constructor(
    private readonly statements: PreparedStatements,
    private readonly work: DbWork,
  ) {}

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const gathered = this.gathering && this.statements.readyStep(sql, params);
    if (gathered)
      return new Promise<T[]>((resolve, reject) =>
        this.gathering!.push({ step: gathered, resolve: (rows) => resolve(rows as T[]), reject }),
      );
    const step = await this.statements.step(sql, params, this.work);
    if (step === undefined) return this.unprepared<T>(sql, params);
    const results = await this.send([step]);
    return results[results.length - 1].rows as T[];
  }

  async finalQuery<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const step = await this.statements.step(sql, params, this.work);
    if (step === undefined) {
      const rows = await this.unprepared<T>(sql, params);
      await this.commit();
      return rows;
    }
    const results = await this.commit([step]);
    return results[results.length - 2].rows as T[];
  }

  async write(sql: string, params: readonly unknown[] = []): Promise<void> {
    if (this.committed) throw new Error(AFTER_FINAL_QUERY);
    const step = await this.statements.step(sql, params, this.work);
    if (step === undefined) await this.unprepared(sql, params);
    else this.waiting.add(step);
  }

  ahead<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    if (this.committed) return Promise.reject(new Error(AFTER_FINAL_QUERY));
    if (!this.statements.preparable(sql, params)) return this.query<T>(sql, params);
    // Its place is taken now: a statement prepared on its first run keeps its turn while it is prepared.
    const step = this.statements.step(sql, params, this.work) as Promise<Step>;
    return this.waiting.addAhead<T>(step, () => this.send([]));
  }

  /**
   * The statements `issue` starts, gathered into one trip (after what waits). A statement not prepared yet runs on its
   * own, as `query` runs it: the statements are independent, so their order does not matter.
   */
  together<T extends readonly unknown[]>(issue: () => { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
    const gathered: NonNullable<PgliteTransaction["gathering"]> = [];
    this.gathering = gathered;
    let issued: { readonly [K in keyof T]: Promise<T[K]> };
    try {
      issued = issue();
    } finally {
      this.gathering = undefined;
    }
    if (gathered.length) {
      this.send(gathered.map((g) => g.step)).then(
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
      if (this.committed || (!this.begun && this.waiting.length === 1)) return value; // committed, or nothing ran
      await this.commit();
      return value;
    } catch (error) {
      this.waiting.failAll(error);
      if (this.begun && !this.committed) await this.statements.trip([ROLLBACK], this.work).catch(() => undefined);
      throw error;
    }
  }

  /** One trip: what waits, `steps`, then COMMIT; throws when the COMMIT rolled back (a statement in it had failed). */
  private async commit(steps: Step[] = []) {
    const results = await this.send([...steps, COMMIT]);
    this.committed = true;
    // COMMIT of a transaction that failed earlier (an error caught inside `fn`) answers ROLLBACK.
    if (results[results.length - 1].command === "ROLLBACK") throw new Error(TRANSACTION_ROLLED_BACK);
    return results;
  }

  /** A statement that runs through PGlite's own `query` (see PreparedStatements.step), after what waits. */
  private async unprepared<T>(sql: string, params: readonly unknown[]): Promise<T[]> {
    if (this.waiting.length) await this.send([]);
    return this.statements.unprepared<T>(sql, params, this.work);
  }

  /** One trip: what waits, then `steps`. */
  private async send(steps: Step[]): Promise<StepResult[]> {
    if (this.committed) throw new Error(AFTER_FINAL_QUERY);
    const ahead = this.waiting.take();
    // BEGIN is in this trip: whatever fails in it, the transaction is open (aborted) and must be rolled back.
    this.begun = true;
    let results: StepResult[];
    try {
      const before = await Promise.all(ahead.statements.map((step) => Promise.resolve(step)));
      results = await this.statements.trip([...before, ...steps], this.work);
    } catch (error) {
      ahead.failed(error);
      throw error;
    }
    ahead.answered((i) => results[i].rows);
    return results;
  }
}

const BEGIN: Step = { text: "BEGIN" };
const COMMIT: Step = { text: "COMMIT" };
const ROLLBACK: Step = { text: "ROLLBACK" };
