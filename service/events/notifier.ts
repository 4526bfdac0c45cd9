import type { Db } from "../store/db";

/**
 * One LISTEN per instance on the channel every committed event NOTIFYs (migration 010), fanned out to whoever waits
 * in this process: the webhook dispatcher and the open event streams.
 */
export class EventNotifier {
  private readonly subscribers = new Set<() => void>();
  private unlisten?: () => Promise<void>;

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    this.unlisten ??= await this.db.listen("tak_events", () => {
      for (const subscriber of [...this.subscribers]) subscriber();
    });
  }

  /** Calls `fn` after each commit that wrote events; returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  async stop(): Promise<void> {
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    this.subscribers.clear();
    await unlisten?.().catch(() => undefined);
  }
}
