/**
 * Identical reads asked at the same time share one round trip, without ever answering from before the question: a
 * request joins a read that has not started yet, never one already under way. Per key, at most one read runs and one
 * waits; every caller that arrives while one runs joins the waiting one, which starts when the running one ends. So
 * 50 clients asking one balance cost the chain about two calls per call's duration, and each answer was read after
 * its request arrived (a send confirmed before the request is always seen).
 */
export class CoalescedReads {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly waiting = new Map<string, Promise<unknown>>();

  /** `load`'s answer; callers of one key must load the same thing (the key names what is read). */
  read<V>(key: string, load: () => Promise<V>): Promise<V> {
    const queued = this.waiting.get(key) as Promise<V> | undefined;
    if (queued) return queued;
    const before = this.running.get(key);
    const start = async (): Promise<V> => {
      this.waiting.delete(key);
      const run = load();
      this.running.set(key, run);
      try {
        return await run;
      } finally {
        if (this.running.get(key) === run) this.running.delete(key);
      }
    };
    if (!before) return start();
    const next = before.then(start, start);
    this.waiting.set(key, next);
    return next;
  }
}
