import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What the database did for one kind of work: trips to it (each one answer awaited), statements, time awaited, and
 * the service's thread's CPU time meanwhile (on the embedded database, the engine's own cost: it runs on this thread).
 */
export interface DbWorkFigures {
  trips: number;
  statements: number;
  ms: number;
  cpuMs: number;
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

  /** One trip of `statements` statements that took `ms` from asking to the answer, `cpuMs` of this thread's CPU. */
  record(statements: number, ms: number, cpuMs: number): void {
    const kind = current.getStore() ?? BACKGROUND_WORK;
    let figures = this.byKind.get(kind);
    if (!figures) this.byKind.set(kind, (figures = { trips: 0, statements: 0, ms: 0, cpuMs: 0 }));
    figures.trips++;
    figures.statements += statements;
    figures.ms += ms;
    figures.cpuMs += cpuMs;
  }

  /** A copy of the figures so far, per kind. */
  snapshot(): Record<string, DbWorkFigures> {
    return Object.fromEntries([...this.byKind].map(([kind, f]) => [kind, { ...f }]));
  }
}

/** Times one trip of `statements` statements into `work`. */
export async function timedTrip<T>(work: DbWork, statements: number, trip: () => Promise<T>): Promise<T> {
  const clock = startClock();
  try {
    return await trip();
  } finally {
    clock.record(work, statements);
  }
}

/**
 * Times one trip that runs on this thread from the call to the answer (the embedded engine's), so that nothing else
 * of the process is counted in it.
 */
export function timedSyncTrip<T>(work: DbWork, statements: number, trip: () => T): T {
  const clock = startClock();
  try {
    return trip();
  } finally {
    clock.record(work, statements);
  }
}

/**
 * This thread's CPU time (Node 23.9+; the whole process's before it). The process's figure sums every thread's, which
 * the kernel reads from each of them: in the lanes bench it cost 20-45 µs a call, a tenth of the database time it was
 * measuring per paid operation; the thread's own costs under a microsecond (bench/results/embedded-db-time.md).
 */
const threadCpu: (since?: NodeJS.CpuUsage) => NodeJS.CpuUsage =
  "threadCpuUsage" in process
    ? (since) => (process as unknown as { threadCpuUsage: typeof process.cpuUsage }).threadCpuUsage(since)
    : (since) => process.cpuUsage(since);

function startClock() {
  // The CPU read outside the wall clock's span, so that the clock does not time itself.
  const cpu = threadCpu();
  const started = performance.now();
  return {
    record(work: DbWork, statements: number) {
      const ms = performance.now() - started;
      const used = threadCpu(cpu);
      work.record(statements, ms, (used.user + used.system) / 1000);
    },
  };
}
