import { flag, SelectionError, selectionOf, type Selection } from "./toolsets";

/**
 * What the MCP transport asks of a request to /mcp before any message in it is handled (Streamable HTTP, 2025-06-18
 * and 2025-11-25), on plain values the route reads off the request:
 *
 * - Origin: a browser's request names the page it comes from; one from a page that is not the service's own (nor of
 *   MCP_ALLOWED_ORIGINS) is refused with 403, against DNS rebinding (a page re-pointed at a local service). A request
 *   without Origin (every non-browser client) passes. The service's own origin is PUBLIC_BASE_URL's, or the address
 *   and port it was reached on, never the Host header the request itself chose.
 * - The body: a JSON-RPC 2.0 message (-32600 otherwise), and a batch (an array) only on a protocol version that has
 *   them (2025-03-26 and before; later versions removed them).
 * - The toolsets, tools and read-only mode asked for (toolsets.ts).
 *
 * Answers that refuse are JSON-RPC errors with id null: -32700 parse error (app.ts, for a body that is not JSON),
 * -32600 invalid request.
 */

export interface JsonRpcErrorBody {
  jsonrpc: "2.0";
  id: null;
  error: { code: number; message: string };
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export function jsonRpcError(code: number, message: string): JsonRpcErrorBody {
  return { jsonrpc: "2.0", id: null, error: { code, message } };
}

/** A request /mcp answers at once with a JSON-RPC error: its HTTP status and body. */
export interface Refusal {
  status: number;
  body: JsonRpcErrorBody;
}

/** Where the service itself is, for Origin: its public URL, or the address and port the request reached. */
export interface OwnOrigin {
  publicBaseUrl?: string;
  /** The local address and port of the connection (not the Host header: a rebound page chooses that). */
  localAddress?: string;
  localPort?: number;
  /** MCP_ALLOWED_ORIGINS. */
  allowed: readonly string[];
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The origins a browser page may call /mcp from. */
export function allowedOrigins(own: OwnOrigin): Set<string> {
  const origins = new Set(own.allowed.map((o) => originOf(o) ?? o));
  const base = own.publicBaseUrl ? originOf(own.publicBaseUrl) : undefined;
  if (base) origins.add(base);
  if (own.localAddress && own.localPort) {
    const address = own.localAddress.replace(/^::ffff:/, "");
    origins.add(`http://${address.includes(":") ? `[${address}]` : address}:${own.localPort}`);
    if (LOOPBACK.test(own.localAddress)) origins.add(`http://localhost:${own.localPort}`);
  }
  return origins;
}

/** Whether a request with this Origin header may use /mcp (no Origin: yes). */
export function originAllowed(origin: string | undefined, own: OwnOrigin): boolean {
  if (origin === undefined) return true;
  return allowedOrigins(own).has(origin.trim());
}

/** The first protocol version without batches. */
const WITHOUT_BATCHES = "2025-06-18";

const isMessage = (m: unknown): boolean => {
  if (typeof m !== "object" || m === null || Array.isArray(m)) return false;
  const message = m as Record<string, unknown>;
  if (message.jsonrpc !== "2.0") return false;
  if (typeof message.method === "string") return true;
  return "id" in message && ("result" in message || "error" in message);
};

/**
 * Why a body is no request of the protocol version asked (MCP-Protocol-Version header, or the version an initialize
 * in it proposes), as the JSON-RPC error to answer; undefined when it is one.
 */
export function messageRefusal(body: unknown, protocolVersion: string | undefined): Refusal | undefined {
  const invalid = (message: string): Refusal => ({
    status: 400,
    body: jsonRpcError(INVALID_REQUEST, `Invalid Request: ${message}`),
  });
  if (!Array.isArray(body))
    return isMessage(body) ? undefined : invalid("the body is not a JSON-RPC 2.0 message (jsonrpc, method or id)");
  if (body.length === 0) return invalid("an empty batch");
  const proposed = body
    .map((m) => (m as { method?: unknown; params?: { protocolVersion?: unknown } })?.params?.protocolVersion)
    .find((v): v is string => typeof v === "string");
  const version = protocolVersion ?? proposed;
  if (version !== undefined && version >= WITHOUT_BATCHES)
    return invalid(`protocol version ${version} has no batches: send one message per request`);
  if (!body.every(isMessage)) return invalid("a message of the batch is not a JSON-RPC 2.0 message");
  return undefined;
}

/** The toolsets, tools and read-only mode a request asks for: the X-MCP-* headers, else the URL's query. */
export function requestedSelection(
  query: Record<string, unknown>,
  header: (name: string) => string | undefined,
  knownTools: ReadonlySet<string>,
): Selection | Refusal {
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  try {
    return selectionOf(
      {
        toolsets: header("x-mcp-toolsets") ?? text(query.toolsets),
        tools: header("x-mcp-tools") ?? text(query.tools),
        readOnly: flag(header("x-mcp-readonly")) || flag(text(query.readonly)),
      },
      knownTools,
    );
  } catch (error) {
    if (!(error instanceof SelectionError)) throw error;
    return { status: 400, body: jsonRpcError(INVALID_REQUEST, `Invalid Request: ${error.message}`) };
  }
}

/**
 * The answer to a body that could not be read (app.ts's error handler): -32700 when it is not JSON; JSON that is no
 * object nor array (`42`, which the body parser refuses too) and any other refusal, -32600.
 */
export function unreadableBody(status: number, parseFailed: boolean, message: string, raw?: unknown): Refusal {
  const isJson = (text: unknown) => {
    try {
      return typeof text === "string" && (JSON.parse(text), true);
    } catch {
      return false;
    }
  };
  if (parseFailed && !isJson(raw)) return { status: 400, body: jsonRpcError(PARSE_ERROR, `Parse error: ${message}`) };
  return {
    status: parseFailed ? 400 : status,
    body: jsonRpcError(
      INVALID_REQUEST,
      parseFailed ? "Invalid Request: not a JSON-RPC message" : `Invalid Request: ${message}`,
    ),
  };
}

/** Whether a path is the MCP endpoint's (matched as the router matches: any letter case, one trailing slash). */
export const isMcpPath = (path: string): boolean => /^\/mcp\/?$/i.test(path);
