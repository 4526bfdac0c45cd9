/** Something SQL can run on: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * A statement whose rows nobody reads. In a transaction on the embedded database it may wait and run with the
   * transaction's next statement or its COMMIT (one trip into the engine instead of two); if it fails, the
   * transaction fails there. Everywhere else it runs at once.
   */
  write(sql: string, params?: readonly unknown[]): Promise<void>;
  /**
   * A transaction's last statement, sent with its COMMIT (one trip instead of two): nothing may follow it in the
   * transaction. Its rows once committed; if the COMMIT rolls back, it throws. Outside a transaction, `query`.
   */
  finalQuery<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Statements none of which needs another's rows, each issued by `issue` through a store method whose first step is
   * its statement (e.g. `() => [a.lock(q), b.take(q)] as const`). In a transaction on the embedded database they travel
   * in one trip into the engine; everywhere else they run as issued. If one fails, the transaction fails.
   */
  together<T extends readonly unknown[]>(issue: () => { readonly [K in keyof T]: Promise<T[K]> }): Promise<T>;
  /**
   * A statement whose rows are read later. In a transaction it waits as a `write` does and travels with the
   * transaction's next statement or its COMMIT, at the latest at the end of this turn of the event loop (so awaiting
   * it alone never hangs); its promise answers once that trip ran. If it fails, the transaction fails there: the
   * statements after it in that trip do not run, and its promise and the carrier's reject with the error. Outside a
   * transaction, `query`.
   */
  ahead<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** `together` where statements run as issued: the promises, awaited. */
export function allIssued<T extends readonly unknown[]>(
  issue: () => { readonly [K in keyof T]: Promise<T[K]> },
): Promise<T> {
  return Promise.all(issue() as readonly Promise<unknown>[]) as Promise<unknown> as Promise<T>;
}

/** Thrown by a transaction whose COMMIT rolled back: a statement in it had failed (and its error was caught). */
export const TRANSACTION_ROLLED_BACK = "the transaction was rolled back: a statement in it failed";

/** Thrown by a statement issued in a transaction after its finalQuery (which committed it). */
export const AFTER_FINAL_QUERY = "the transaction was committed by its final query: nothing may follow it";
