import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ListenedEvent {
  id: string;
  type: string;
  txId: string | null;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * A local webhook receiver for `npm run demo`: each POST is verified with the standardwebhooks package and the
 * endpoint's secret (an unverifiable one is answered 400 and counted), then handed to `onEvent`.
 */
export class WebhookListener {
  readonly events: ListenedEvent[] = [];
  unverified = 0;
  private verifier?: Webhook;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly onEvent: (event: ListenedEvent) => void,
  ) {}

  static async start(onEvent: (event: ListenedEvent) => void): Promise<WebhookListener> {
    // eslint-disable-next-line prefer-const -- assigned below, read by the request handler defined first
    let listener!: WebhookListener;
    const server = http.createServer((req, res) => listener.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    listener = new WebhookListener(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/demo-webhooks`,
      onEvent,
    );
    return listener;
  }

  /** The endpoint's `whsec_` secret, from its creation's answer. */
  useSecret(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      try {
        if (!this.verifier) throw new Error("no secret yet");
        const event = this.verifier.verify(body, req.headers as Record<string, string>) as ListenedEvent;
        res.writeHead(204).end();
        if (this.events.some((e) => e.id === event.id)) return; // a redelivery: same webhook-id, already handled
        this.events.push(event);
        this.onEvent(event);
      } catch {
        this.unverified++;
        res.writeHead(400).end();
      }
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The first event GET /events streams for `query` (Server-Sent Events), or undefined after `timeoutMs`. */
export async function firstStreamedEvent(
  baseUrl: string,
  apiKey: string,
  query: Record<string, string>,
  timeoutMs = 10_000,
): Promise<ListenedEvent | undefined> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await fetch(`${baseUrl}/events?${new URLSearchParams(query).toString()}`, {
      headers: { "x-api-key": apiKey, accept: "text/event-stream" },
      signal: abort.signal,
    });
    if (res.status !== 200 || !res.body) throw new Error(`GET /events answered ${res.status}: ${await res.text()}`);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const data = /^data: (.*)$/m.exec(buffer);
      if (data) return JSON.parse(data[1]) as ListenedEvent;
    }
    return undefined;
  } catch (error) {
    if (abort.signal.aborted) return undefined;
    throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
