/**
 * The statements a transaction holds for its next trip, in the order issued: BEGIN until it was sent, deferred
 * writes, and `ahead` statements (Queryable.ahead), each told its rows once the trip that carried it ran. Both
 * transaction classes (pglite-transaction.ts, postgres-transaction.ts) keep theirs in one; `S` is what a trip is made
 * of there (a protocol step, or SQL text).
 */
export class WaitingStatements<S> {
  private entries: Entry<S>[];

  constructor(first: S[]) {
    this.entries = first.map((statement) => ({ statement }));
  }

  get length(): number {
    return this.entries.length;
  }

  add(statement: S): void {
    this.entries.push({ statement });
  }

  /**
   * `statement`, whose rows the answer carries once a trip ran it. If nothing carried it by the end of this turn of
   * the event loop, `alone` sends it (awaiting the answer alone never hangs).
   */
  addAhead<T>(statement: S, alone: () => Promise<unknown>): Promise<T[]> {
    const entry: Entry<S> = { statement };
    const rows = new Promise<T[]>((resolve, reject) => {
      entry.answer = { resolve: (r) => resolve(r as T[]), reject };
    });
    this.entries.push(entry);
    rows.catch(() => undefined); // read by its caller, or by nobody when the transaction failed before it was
    setImmediate(() => {
      if (this.entries.includes(entry)) alone().catch(() => undefined); // its error reached `rows`
    });
    return rows;
  }

  /** Everything waiting, for a trip: `answered` with the trip's rows per statement (in order), or `failed`. */
  take(): { statements: S[]; answered(rows: (index: number) => unknown[]): void; failed(error: unknown): void } {
    const taken = this.entries;
    this.entries = [];
    return {
      statements: taken.map((e) => e.statement),
      answered: (rows) => taken.forEach((e, i) => e.answer?.resolve(rows(i))),
      failed: (error) => taken.forEach((e) => e.answer?.reject(error)),
    };
  }

  /** The transaction failed: statements that never ran hear why, and none waits any more. */
  failAll(error: unknown): void {
    this.take().failed(error);
  }
}

interface Entry<S> {
  statement: S;
  answer?: { resolve(rows: unknown[]): void; reject(error: unknown): void };
}
