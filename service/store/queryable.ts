/** Something SQL can run on: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * A statement whose rows nobody reads. In a transaction on the embedded database it may wait and run with the
   * transaction's next statement or its COMMIT (one trip into the engine instead of two); if it fails, the
   * transaction fails there. Everywhere else it runs at once.
   */
  write(sql: string, params?: readonly unknown[]): Promise<void>;
}

/** Thrown by a transaction whose COMMIT rolled back: a statement in it had failed (and its error was caught). */
export const TRANSACTION_ROLLED_BACK = "the transaction was rolled back: a statement in it failed";
