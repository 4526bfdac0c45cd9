import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  /** The request's path (endpoints of one receiver differ by path). */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Date.now() when the request's body had arrived. */
  at: number;
  /** The parsed body. */
  event: any;
  status: number;
}

export interface Answer {
  status: number;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
}

/**
 * A real HTTP receiver on an ephemeral loopback port: records every webhook POSTed to it (headers, raw body, when),
 * answers what `answer` says, and notes any webhook-id that arrives while a delivery of the same id is still in
 * flight (two deliveries of one event at once).
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  readonly overlaps: string[] = [];
  answer: (event: any, headers: Record<string, string>) => Answer = () => ({ status: 200 });
  private readonly inFlight = new Set<string>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    // eslint-disable-next-line prefer-const -- assigned below, read by the request handler defined first
    let receiver!: WebhookReceiver;
    const server = http.createServer((req, res) => receiver.handle(req, res));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const id = headers["webhook-id"] ?? "";
      if (this.inFlight.has(id)) this.overlaps.push(id);
      this.inFlight.add(id);
      let event: any;
      try {
        event = JSON.parse(body);
      } catch {
        event = undefined;
      }
      const answer = this.answer(event, headers);
      const reply = () => {
        this.inFlight.delete(id);
        this.received.push({ path: req.url ?? "/", headers, body, at: Date.now(), event, status: answer.status });
        if (!res.destroyed) res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body ?? "ok");
        for (const w of [...this.waiters]) w();
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  }

  /** The deliveries answered 2xx (one per attempt; a redelivery or a retry after a lost answer appears again). */
  delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  /** Resolves once `predicate` holds over what was received; rejects after `timeoutMs` saying what was there. */
  async waitFor(label: string, predicate: (received: Received[]) => boolean, timeoutMs = 30_000): Promise<void> {
    if (predicate(this.received)) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate(this.received)) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `${label}: not received within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((r) => [r.event?.id, r.event?.type, r.status]))}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies a received webhook with the standardwebhooks package (throws when no signature verifies). */
export function verifyWith(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, {
    "webhook-id": r.headers["webhook-id"],
    "webhook-timestamp": r.headers["webhook-timestamp"],
    "webhook-signature": r.headers["webhook-signature"],
  });
}
