import http, { type IncomingMessage, type RequestListener } from "node:http";
import { Duplex } from "node:stream";
import type { HttpAnswer, HttpCall } from "./calls";

/**
 * A tool call of the MCP endpoint is an HTTP request to the service's own app, made in process over an in-memory
 * connection: Node's HTTP server and client speak to each other through a pair of streams, and the app answers the
 * request as it answers any client. Every tool call thus takes the one path a REST call takes (request id, input
 * guard, the access gate with keys, plans, credits, rate limits and x402, Idempotency-Key, the route, its events, the
 * request log and metrics), with nothing re-implemented; unlike a call to itself over loopback it needs no port, and
 * the connection carries the MCP client's address, so the per-IP limits count the agent, not the service.
 */

/**
 * Where the call comes from: the MCP request's client address and proxy headers, so that req.ip, req.protocol and the
 * host are what they are for the MCP request (TRUST_PROXY decides alike for both).
 */
export interface Origin {
  remoteAddress?: string;
  /** X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host of the MCP request, as it sent them. */
  forwarded: Record<string, string>;
  /** The MCP request's Host header: the answers name the service as its client sees it (x402 resource URLs). */
  host?: string;
  requestId: string;
}

/** One end of an in-memory connection: what Node's HTTP server and client ask of a socket, nothing more. */
class MemorySocket extends Duplex {
  peer?: MemorySocket;
  readonly remotePort = 0;

  constructor(readonly remoteAddress: string | undefined) {
    super({ allowHalfOpen: true });
  }

  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.peer?.push(chunk);
    done();
  }
  override _final(done: (error?: Error | null) => void): void {
    this.peer?.push(null);
    done();
  }
  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    if (this.peer && !this.peer.destroyed) this.peer.destroy();
    done(error);
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  address() {
    return { address: "127.0.0.1", family: "IPv4", port: 0 };
  }
}

/** The server side of the connections each tool call opens, and the tool it serves (for the request log). */
const toolOfSocket = new WeakMap<object, string>();
const servers = new WeakMap<RequestListener, http.Server>();

/** An HTTP server for `app` that never listens: it answers the connections a tool call hands it. */
function serverFor(app: RequestListener): http.Server {
  let server = servers.get(app);
  if (!server) servers.set(app, (server = http.createServer(app)));
  return server;
}

/** Opens a request to `app` for `call` on a fresh in-memory connection; resolves with the response as it starts. */
function open(
  app: RequestListener,
  call: HttpCall,
  tool: string,
  origin: Origin,
): Promise<{ request: http.ClientRequest; response: IncomingMessage }> {
  const serverEnd = new MemorySocket(origin.remoteAddress);
  const clientEnd = new MemorySocket("127.0.0.1");
  serverEnd.peer = clientEnd;
  clientEnd.peer = serverEnd;
  toolOfSocket.set(serverEnd, tool);
  serverFor(app).emit("connection", serverEnd);
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  const headers: Record<string, string> = {
    ...call.headers,
    ...origin.forwarded,
    "x-request-id": origin.requestId,
    host: origin.host ?? "localhost",
    connection: "close",
  };
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const request = http.request(
      { method: call.method, path: call.url, headers, createConnection: () => clientEnd },
      (response) => resolve({ request, response }),
    );
    request.on("error", reject);
    request.end(body);
  });
}

const headersOf = (response: IncomingMessage): HttpAnswer["headers"] => ({ ...response.headers });

/** The route's whole answer to `call`. */
export async function dispatch(
  app: RequestListener,
  call: HttpCall,
  tool: string,
  origin: Origin,
): Promise<HttpAnswer> {
  const { response } = await open(app, call, tool, origin);
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return {
    status: response.statusCode ?? 500,
    headers: headersOf(response),
    text: Buffer.concat(chunks).toString("utf8"),
  };
}

/** A streamed answer (server-sent events): its status and headers at once, the body as it comes, and a way to leave. */
export interface StreamedAnswer {
  status: number;
  headers: HttpAnswer["headers"];
  body: IncomingMessage;
  /** Leaves as a client that closes its connection does (the route's close handlers run). */
  close(): void;
}

export async function dispatchStream(
  app: RequestListener,
  call: HttpCall,
  tool: string,
  origin: Origin,
): Promise<StreamedAnswer> {
  const { request, response } = await open(app, call, tool, origin);
  return {
    status: response.statusCode ?? 500,
    headers: headersOf(response),
    body: response,
    close: () => request.destroy(),
  };
}

/** The tool an MCP call of this request serves, if it is one (only a connection a tool call opened can say so). */
export function mcpToolOf(req: IncomingMessage): string | undefined {
  return toolOfSocket.get(req.socket);
}
