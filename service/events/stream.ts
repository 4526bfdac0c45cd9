import { ApiError } from "../errors";
import { errorFacts, type Logger } from "../logger";
import { eventsAfter, inAudience, type AudienceEvent, type EventAudience, type EventEnvelope } from "../store/outbox";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import { EventFeed } from "./feed";
import type { EventNotifier } from "./notifier";

/** What the event streams use. */
export type StreamServices = Pick<Stores, "db"> & { config: Config; eventNotifier: EventNotifier };

/** Events read per query while a stream catches up. */
const PAGE = 500;
/** How long a client waits before reconnecting after the stream drops (SSE `retry:`). */
const RETRY_MS = 2_000;
/** Events a stream may have waiting for its client; past this its client is too slow and the stream ends (it resumes). */
const MAX_WAITING = 5_000;
/** Retry-After of a stream refused for the caps: streams end when their clients leave. */
const RETRY_AFTER_SECONDS = 10;

/**
 * Where a stream writes its events: the client's connection, which the http layer opens as Server-Sent Events
 * (http/event-stream-sink.ts). Nothing here knows HTTP.
 */
export interface EventSink {
  /** Starts the answer (the stream's headers go out at once). */
  start(): void;
  /** Whether the answer has started. */
  readonly started: boolean;
  /** Writes `text`; false when the connection's buffer is full (wait for `drained` before writing more). */
  write(text: string): boolean;
  /** Resolves once the connection takes more, or closed. */
  drained(): Promise<void>;
  /** Calls `listener` when the client leaves; returns the function that stops listening. */
  onClose(listener: () => void): () => void;
  /** Ends a started answer that is not ended yet. */
  end(): void;
}

interface OpenStream {
  wake(): void;
  end(): void;
}

/**
 * Server-Sent Events from the outbox (GET /events). A stream first reads its audience's events after its cursor up to
 * the shared feed's position (its own catch-up), then gets from the feed (events/feed.ts) the events committed since,
 * each written with its position as `id:`; the feed reads the outbox once per commit for every stream. Positions grow
 * in commit order (migration 010), so a client resuming with Last-Event-ID misses nothing. Streams are capped per API
 * key (EVENT_STREAMS_PER_KEY) and per client address (EVENT_STREAMS_PER_CLIENT) on each instance.
 */
export class EventStreams {
  private readonly open = new Set<OpenStream>();
  private readonly perKey = new Map<string, number>();
  private readonly perClient = new Map<string, number>();
  private stopped = false;
  readonly feed: EventFeed;

  constructor(
    private readonly services: StreamServices,
    private readonly log: Logger,
  ) {
    this.feed = new EventFeed(services.db, services.eventNotifier, log, services.config.EVENT_STREAM_HEARTBEAT_MS);
  }

  get size(): number {
    return this.open.size;
  }

  /** The last committed position: a stream without a resume id starts after it. */
  async latestPosition(): Promise<string> {
    const [row] = await this.services.db.query<{ latest: string }>(
      "SELECT GREATEST(COALESCE((SELECT max(position) FROM events), 0), (SELECT pruned_through FROM event_retention))::text AS latest",
    );
    return row.latest;
  }

  /**
   * Holds a place for one more stream of the key `keyId` (null: without a key) from client address `client`, or throws
   * the 429 (with Retry-After) when either already holds its limit. Returns the function that gives the place back.
   */
  admit(keyId: string | null, client: string): () => void {
    const { EVENT_STREAMS_PER_KEY: perKey, EVENT_STREAMS_PER_CLIENT: perClient } = this.services.config;
    const tooMany = (limit: string) =>
      new ApiError(
        "RATE_LIMITED",
        `Too many open event streams: ${limit}; close one, or retry after ${RETRY_AFTER_SECONDS} seconds`,
        { limit, retryAfterSeconds: RETRY_AFTER_SECONDS },
        {
          "Retry-After": String(RETRY_AFTER_SECONDS),
        },
      );
    if (keyId && (this.perKey.get(keyId) ?? 0) >= perKey) throw tooMany(`${perKey} per API key`);
    if ((this.perClient.get(client) ?? 0) >= perClient) throw tooMany(`${perClient} per client address`);
    const count = (map: Map<string, number>, key: string, by: number) => {
      const n = (map.get(key) ?? 0) + by;
      if (n > 0) map.set(key, n);
      else map.delete(key);
    };
    if (keyId) count(this.perKey, keyId, 1);
    count(this.perClient, client, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (keyId) count(this.perKey, keyId, -1);
      count(this.perClient, client, -1);
    };
  }

  /** Streams `audience`'s events after position `after` until the client leaves or the service stops. */
  async serve(sink: EventSink, audience: EventAudience, options: { after: string; types?: string[] }): Promise<void> {
    const { config, db } = this.services;
    let closed = this.stopped;
    let woken = false;
    let wakeUp: (() => void) | undefined;
    const wake = () => {
      woken = true;
      wakeUp?.();
    };
    const stream: OpenStream = {
      wake,
      end: () => {
        closed = true;
        wake();
      },
    };
    // The feed's events of this audience, waiting to be written (those at or before the cursor are skipped).
    const waiting: EventEnvelope[] = [];
    let overflow = false;
    const listener = (events: AudienceEvent[]) => {
      for (const event of events) if (inAudience(event, audience, options.types)) waiting.push(envelopeOf(event));
      if (waiting.length > MAX_WAITING) overflow = true;
      if (waiting.length || overflow) wake();
    };
    this.open.add(stream);
    const stopListening = sink.onClose(() => stream.end());
    let leaveFeed: (() => void) | undefined;
    try {
      const { from, stop } = await this.feed.subscribe(listener);
      leaveFeed = stop;
      sink.start();
      sink.write(`retry: ${RETRY_MS}\n\n`);
      let cursor = options.after;
      let lastWrite = Date.now();
      const write = async (event: EventEnvelope) => {
        if (closed || BigInt(event.id) <= BigInt(cursor)) return;
        if (!sink.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`))
          await sink.drained();
        cursor = event.id;
        lastWrite = Date.now();
      };
      // Catch up on its own up to where the feed took over.
      while (!closed && BigInt(cursor) < BigInt(from)) {
        const page = await eventsAfter(db, audience, cursor, { types: options.types, limit: PAGE, through: from });
        for (const event of page) await write(event);
        if (page.length < PAGE) break;
      }
      // A heartbeat goes out when nothing was written for a heartbeat interval.
      while (!closed) {
        if (overflow) {
          this.log.warn(
            { waiting: waiting.length },
            "event stream's client reads too slowly; the stream ends (it resumes with Last-Event-ID)",
          );
          break;
        }
        while (waiting.length && !closed) await write(waiting.shift()!);
        woken = false;
        const quiet = Date.now() - lastWrite;
        if (quiet >= config.EVENT_STREAM_HEARTBEAT_MS) {
          sink.write(": heartbeat\n\n");
          lastWrite = Date.now();
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, config.EVENT_STREAM_HEARTBEAT_MS - quiet);
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
          if (woken || closed || waiting.length) wakeUp();
        });
        wakeUp = undefined;
      }
    } catch (error) {
      if (!closed) this.log.warn({ err: errorFacts(error) }, "event stream ended by an error");
      if (!sink.started) throw error;
    } finally {
      leaveFeed?.();
      this.open.delete(stream);
      stopListening();
      sink.end();
    }
  }

  /** Ends every stream (their clients reconnect with Last-Event-ID, to this instance or another). */
  stop(): void {
    this.stopped = true;
    for (const stream of this.open) stream.end();
    this.feed.stop();
  }
}

/** The event as clients get it: without the tenant it belongs to. */
function envelopeOf({ apiKeyId: _tenant, ...event }: AudienceEvent): EventEnvelope {
  return event;
}
