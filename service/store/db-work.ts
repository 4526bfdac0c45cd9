import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What the database did for one kind of work: trips to it (each one answer awaited), statements, and time awaited (on
 * the embedded database, the engine's call and the reading of its answer: they run on this thread).
 *
 * No CPU time per trip: the process's (getrusage RUSAGE_SELF) cost 20-45 µs a call in the lanes bench, which counted
 * ~0.5 ms of its own per paid operation as the database's; the thread's (RUSAGE_THREAD) is not brought up to date for
 * the running thread, so a trip's reading is mostly zero or a whole scheduler tick (bench/results/embedded-db-time.md).
 */
export interface DbWorkFigures {
  trips: number;
  statements: number;
  ms: number;
}

/** The kind of work running now (a route template, set by the HTTP layer around its handler). */
const current = new AsyncLocalStorage<string>();

/** Work done outside any request: the runners' timers, the webhook dispatcher, the start. */
export const BACKGROUND_WORK = "background";

/** Runs `fn` with the database's trips counted as `kind` (and whatever `fn` starts that outlives it, e.g. a runner). */
export function countedAs<T>(kind: string, fn: () => T): T {
  return current.run(kind, fn);
}

/**
 * The database's trips, statements and time, per kind of work, since the service opened it: what /metrics shows, what
 * the benches divide by the operations they ran, and what test/postgres/round-trips.test.ts holds to its ceiling.
 * A trip is one message to the database and its answer: a statement alone, or several sent as one text (a transaction's
 * BEGIN with its first statement, the writes that wait for the next statement or the COMMIT).
 */
export class DbWork {
  private readonly byKind = new Map<string, DbWorkFigures>();

  /** One trip of `statements` statements that took `ms` from asking to the answer. */
  record(statements: number, ms: number): void {
    const kind = current.getStore() ?? BACKGROUND_WORK;
    let figures = this.byKind.get(kind);
    if (!figures) this.byKind.set(kind, (figures = { trips: 0, statements: 0, ms: 0 }));
    figures.trips++;
    figures.statements += statements;
    figures.ms += ms;
  }

  /** A copy of the figures so far, per kind. */
  snapshot(): Record<string, DbWorkFigures> {
    return Object.fromEntries([...this.byKind].map(([kind, f]) => [kind, { ...f }]));
  }
}

/** Times one trip of `statements` statements into `work`. */
export async function timedTrip<T>(work: DbWork, statements: number, trip: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await trip();
  } finally {
    work.record(statements, performance.now() - started);
  }
}

/**
 * Times one trip that runs on this thread from the call to the answer (the embedded engine's), so that nothing else
 * of the process is counted in it.
 */
export function timedSyncTrip<T>(work: DbWork, statements: number, trip: () => T): T {
  const started = performance.now();
  try {
    return trip();
  } finally {
    work.record(statements, performance.now() - started);
  }
}
