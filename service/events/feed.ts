import { errorFacts, type Logger } from "../logger";
import { allEventsAfter, type AudienceEvent } from "../store/outbox";
import type { Db } from "../store/db";
import type { EventNotifier } from "./notifier";

/** Events read per query. */
const PAGE = 500;

/** A stream's share of the feed: it is handed every event committed after its subscription, in order. */
export type FeedListener = (events: AudienceEvent[]) => void;

/**
 * One reader of the outbox for every open stream of this process: after each commit that wrote events (EventNotifier),
 * and every `pollMs` while anyone listens (a lost wake-up), it reads the events committed since its position once, and
 * hands them to every listener, which keeps those of its own audience. A thousand streams cost one query per new
 * event, not a thousand; a stream is woken only by its own events. Positions grow in commit order (migration 010), so
 * reading after the last position read misses nothing.
 */
export class EventFeed {
  private readonly listeners = new Set<FeedListener>();
  /** The last position read; undefined while nobody listens (a new listener starts it at the latest position). */
  private position?: string;
  private reading?: Promise<void>;
  private again = false;
  private unsubscribe?: () => void;
  private poller?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly notifier: EventNotifier,
    private readonly log: Logger,
    private readonly pollMs: number,
  ) {}

  get listening(): number {
    return this.listeners.size;
  }

  /**
   * Listens from now on: `listener` gets every event committed after the answered position (`from`), which the caller
   * reads up to itself if it starts earlier. Returns that position and the function that stops listening.
   */
  async subscribe(listener: FeedListener): Promise<{ from: string; stop: () => void }> {
    if (this.position === undefined) {
      const [row] = await this.db.query<{ latest: string }>(
        "SELECT GREATEST(COALESCE((SELECT max(position) FROM events), 0), (SELECT pruned_through FROM event_retention))::text AS latest",
      );
      this.position ??= row.latest;
    }
    this.listeners.add(listener);
    if (!this.unsubscribe) {
      this.unsubscribe = this.notifier.subscribe(() => this.wake());
      this.poller = setInterval(() => this.wake(), this.pollMs);
      this.poller.unref();
    }
    return { from: this.position, stop: () => this.leave(listener) };
  }

  private leave(listener: FeedListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size) return;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.poller);
    // Nobody listens: the next listener starts at the position of its own time.
    if (!this.reading) this.position = undefined;
  }

  /** Reads what was committed since the last read (one read at a time; a wake-up during a read reads again after it). */
  private wake(): void {
    if (!this.listeners.size) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readAll()
      .catch((error) =>
        this.log.warn({ err: errorFacts(error) }, "event feed read failed; read again at the next event or poll"),
      )
      .finally(() => {
        this.reading = undefined;
        if (!this.listeners.size) this.position = undefined;
        else if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async readAll(): Promise<void> {
    let page: AudienceEvent[];
    do {
      if (this.position === undefined || !this.listeners.size) return;
      page = await allEventsAfter(this.db, this.position, PAGE);
      if (!page.length) return;
      this.position = page[page.length - 1].id;
      for (const listener of [...this.listeners]) listener(page);
    } while (page.length === PAGE);
  }

  /** Stops listening for everyone (the service stops). */
  stop(): void {
    this.listeners.clear();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearInterval(this.poller);
    this.position = undefined;
  }
}
