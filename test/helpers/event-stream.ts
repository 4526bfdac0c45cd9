import http from "node:http";

export interface StreamedEvent {
  id: string;
  event: string;
  data: any;
}

/**
 * A Server-Sent Events client of GET /events over node's http (no EventSource): parses `id:`, `event:`, `data:` frames
 * and comment lines (heartbeats), and records the answer's status and headers.
 */
export class EventStreamClient {
  readonly events: StreamedEvent[] = [];
  heartbeats = 0;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** The body of an answer that is not a stream (an error). */
  errorBody = "";
  private request?: http.ClientRequest;
  private readonly waiters = new Set<() => void>();
  private ended = false;

  static open(
    baseUrl: string,
    query: Record<string, string | undefined>,
    headers: Record<string, string> = {},
  ): Promise<EventStreamClient> {
    const client = new EventStreamClient();
    const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][]);
    const url = `${baseUrl}/events${params.size ? `?${params.toString()}` : ""}`;
    return new Promise((resolve, reject) => {
      client.request = http.get(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (client.status !== 200) {
            client.errorBody += chunk;
            return;
          }
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            client.frame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        });
        res.on("end", () => {
          client.ended = true;
          client.notify();
        });
        res.on("close", () => {
          client.ended = true;
          client.notify();
        });
        if (client.status !== 200) res.on("end", () => resolve(client));
        else resolve(client);
      });
      client.request.on("error", (error) => (client.status ? undefined : reject(error)));
    });
  }

  private frame(text: string): void {
    const fields: Record<string, string> = {};
    for (const line of text.split("\n")) {
      if (line.startsWith(":")) {
        if (line.includes("heartbeat")) this.heartbeats++;
        continue;
      }
      const colon = line.indexOf(":");
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, "");
      fields[name] = fields[name] === undefined ? value : `${fields[name]}\n${value}`;
    }
    if (fields.data !== undefined)
      this.events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  get closed(): boolean {
    return this.ended;
  }

  async waitFor(label: string, predicate: (events: StreamedEvent[]) => boolean, timeoutMs = 30_000): Promise<void> {
    if (predicate(this.events)) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate(this.events)) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `${label}: not streamed within ${timeoutMs} ms; got ${JSON.stringify(this.events.map((e) => [e.id, e.event]))}`,
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

  close(): void {
    this.request?.destroy();
  }
}
