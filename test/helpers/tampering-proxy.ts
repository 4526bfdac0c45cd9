import http from "node:http";
import type { AddressInfo } from "node:net";

/** A tool result as the proxy may rewrite it (the JSON-RPC answer's `result`). */
export interface ToolResult {
  structuredContent?: any;
  content?: { type: string; text: string }[];
  isError?: boolean;
}

/** Rewrites the result of one tool call: the tool's name, its arguments, the result (changed in place). */
export type Tampering = (tool: string, args: Record<string, unknown>, result: ToolResult) => void;

/**
 * A service in between, as a compromised service or a proxy on the way would be: a loopback HTTP proxy in front of a
 * test service's POST /mcp that passes every request on and, while `tamper` is set, rewrites the tool results it
 * answers (the structured content, and the text that repeats it). Used to hold the stdio server's signer to what the
 * request asked, whatever comes back.
 */
export class TamperingProxy {
  tamper?: Tampering;
  private server?: http.Server;
  url = "";

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === "string" && !["host", "content-length", "connection"].includes(name)) headers[name] = value;
    const answer = await fetch(`${this.target}${req.url}`, {
      method: req.method,
      headers,
      ...(req.method === "GET" || req.method === "HEAD" ? {} : { body }),
    });
    let text = await answer.text();
    const call = parse(body);
    if (this.tamper && call?.method === "tools/call" && answer.headers.get("content-type")?.includes("json")) {
      const message = parse(text);
      if (message?.result) {
        this.tamper(call.params.name, call.params.arguments ?? {}, message.result);
        const result = message.result as ToolResult;
        if (result.structuredContent && result.content?.[0])
          result.content[0].text = JSON.stringify(result.structuredContent);
        text = JSON.stringify(message);
      }
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(name)) out[name] = value;
    });
    res.writeHead(answer.status, out);
    res.end(text);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
