import type { Request, Response } from "express";
import { errorFacts, type Logger } from "../logger";
import { eventsAfter, type EventAudience } from "../store/outbox";
import type { EventEnvelope } from "../store/outbox";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import type { EventNotifier } from "./notifier";

/** What the event streams use. */
export type StreamServices = Pick<Stores, "db"> & { config: Config; eventNotifier: EventNotifier };

/** Events read per query while a stream catches up. */
const PAGE = 500;
/** How long a client waits before reconnecting after the stream drops (SSE `retry:`). */
const RETRY_MS = 2_000;

interface OpenStream {
  wake(): void;
  end(): void;
}

/**
 * Server-Sent Events from the outbox (GET /events). Each stream reads the committed events of its audience after its
 * cursor, writes them with their position as `id:`, and waits for the next commit (EventNotifier) or the heartbeat.
 * Positions grow in commit order (migration 008), so a client resuming with Last-Event-ID misses nothing.
 */
export class EventStreams {
  private readonly open = new Set<OpenStream>();
  private stopped = false;

  constructor(
    private readonly services: StreamServices,
    private readonly log: Logger,
  ) {}

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

  /** Streams `audience`'s events after position `after` until the client leaves or the service stops. */
  async serve(req: Request, res: Response, audience: EventAudience, options: { after: string; types?: string[] }): Promise<void> {
    const { config, db, eventNotifier } = this.services;
    res.status(200);
    res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
    res.setHeader("Cache-Control", "no-cache, no-transform");
    res.setHeader("Connection", "keep-alive");
    res.setHeader("X-Accel-Buffering", "no");
    res.flushHeaders();
    res.write(`retry: ${RETRY_MS}\n\n`);

    let cursor = options.after;
    let closed = this.stopped;
    let woken = true;
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
    this.open.add(stream);
    const unsubscribe = eventNotifier.subscribe(wake);
    const onClose = () => stream.end();
    req.on("close", onClose);
    res.on("close", onClose);
    // A heartbeat goes out when nothing was written for a heartbeat interval (wake-ups of other streams' events do not count).
    let lastWrite = Date.now();
    try {
      while (!closed) {
        if (woken) {
          woken = false;
          let page: EventEnvelope[];
          do {
            page = await eventsAfter(db, audience, cursor, { types: options.types, limit: PAGE });
            for (const event of page) {
              if (closed) break;
              if (!res.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)) await drained(res);
              cursor = event.id;
              lastWrite = Date.now();
            }
          } while (page.length === PAGE && !closed);
        }
        const quiet = Date.now() - lastWrite;
        if (quiet >= config.EVENT_STREAM_HEARTBEAT_MS) {
          res.write(": heartbeat\n\n");
          lastWrite = Date.now();
          woken = true; // also a poll, should a wake-up have been lost
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, config.EVENT_STREAM_HEARTBEAT_MS - quiet);
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
          if (woken || closed) wakeUp();
        });
        wakeUp = undefined;
      }
    } catch (error) {
      if (!closed) this.log.warn({ err: errorFacts(error) }, "event stream ended by an error");
    } finally {
      unsubscribe();
      this.open.delete(stream);
      req.off("close", onClose);
      res.off("close", onClose);
      if (!res.writableEnded) res.end();
    }
  }

  /** Ends every stream (their clients reconnect with Last-Event-ID, to this instance or another). */
  stop(): void {
    this.stopped = true;
    for (const stream of this.open) stream.end();
  }
}

function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
