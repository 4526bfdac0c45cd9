import type { PaymentPayload } from "@x402/core/types";
import { IDEMPOTENCY_HEADER } from "../http/idempotency";
import { x402Http } from "../payments/x402-modules";
import { IDEMPOTENCY_ARGUMENT, type RouteTool, type ToolErrorBody } from "./tool";

/**
 * A tool call as the HTTP request of its route, and the route's answer as the tool's result. The MCP endpoint and the
 * stdio server both speak through these two functions, so a tool means the same request wherever it is called.
 *
 * x402 over MCP (the x402 specification's MCP transport, tool-result binding): the client's payment comes in
 * `params._meta["x402/payment"]` (a PaymentPayload) and goes on as the X-PAYMENT header; a 402 comes back as a tool
 * result with `isError: true` and the PaymentRequired of its PAYMENT-REQUIRED header in `structuredContent` and as the
 * JSON text of `content[0]`; a PAYMENT-RESPONSE header comes back in `result._meta["x402/payment-response"]`.
 */

export const PAYMENT_META = "x402/payment";
export const PAYMENT_RESPONSE_META = "x402/payment-response";
/** The answer's request id (x-request-id), which finds the call in the service's logs. */
export const REQUEST_ID_META = "tak/request-id";
/** The answer's HTTP status (a send answers 202 while its batch is still pending). */
export const STATUS_META = "tak/http-status";

export interface HttpCall {
  method: string;
  /** Path and query string, e.g. /get-token-info?tokenSymbol=ACME. */
  url: string;
  headers: Record<string, string>;
  /** The JSON body (POST, PATCH). */
  body?: Record<string, unknown>;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body text. */
  text: string;
}

export interface CallToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A tool's arguments that cannot make a request: a clear error naming the argument, before anything is called. */
export class ArgumentError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

const text = (value: unknown): string =>
  typeof value === "string"
    ? value
    : Array.isArray(value)
      ? value.map(text).join(",")
      : typeof value === "object" && value !== null
        ? JSON.stringify(value)
        : String(value);

/**
 * The request a call of `tool` makes: path parameters into the path, query fields into the query string (arrays
 * comma-joined, as the API's clients send them), the rest as the JSON body; the Idempotency-Key argument and the
 * x402 payment as headers. `credentials` are the caller's own headers (x-api-key), passed on unchanged.
 */
export function httpCallOf(
  tool: RouteTool,
  args: Record<string, unknown> | undefined,
  meta: Record<string, unknown> | undefined,
  credentials: Record<string, string>,
): HttpCall {
  const rest: Record<string, unknown> = { ...(args ?? {}) };
  const headers: Record<string, string> = { "content-type": "application/json", ...credentials };
  const idempotencyKey = rest[IDEMPOTENCY_ARGUMENT];
  delete rest[IDEMPOTENCY_ARGUMENT];
  if (tool.call.idempotent && idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = text(idempotencyKey);
  const payment = meta?.[PAYMENT_META];
  if (payment !== undefined) {
    if (typeof payment !== "object" || payment === null)
      throw new ArgumentError(
        `_meta["${PAYMENT_META}"] must be an x402 PaymentPayload object`,
        `_meta.${PAYMENT_META}`,
      );
    headers["x-payment"] = x402Http().encodePaymentSignatureHeader(payment as PaymentPayload);
  }
  let path = tool.call.path;
  for (const name of tool.call.pathParameters) {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || text(value) === "")
      throw new ArgumentError(`${name} is required`, name);
    path = path.replace(`{${name}}`, encodeURIComponent(text(value)));
  }
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined || value === null) continue;
    if (tool.call.queryFields === "all" || tool.call.queryFields.includes(key)) {
      query.append(key, text(value));
      delete rest[key];
    }
  }
  const qs = query.toString();
  const url = qs ? `${path}?${qs}` : path;
  const hasBody = tool.call.method === "post" || tool.call.method === "patch";
  return { method: tool.call.method.toUpperCase(), url, headers, ...(hasBody ? { body: rest } : {}) };
}

function header(answer: HttpAnswer, name: string): string | undefined {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function parsed(answer: HttpAnswer): unknown {
  try {
    return answer.text ? JSON.parse(answer.text) : undefined;
  } catch {
    return answer.text;
  }
}

/** The result of a tool error: the API's error body, as structured content and as "CODE: message". */
export function errorResult(body: ToolErrorBody, meta: Record<string, unknown> = {}): CallToolResult {
  return {
    isError: true,
    structuredContent: body,
    content: [{ type: "text", text: `${body.error.code}: ${body.error.message}` }],
    ...(Object.keys(meta).length ? { _meta: meta } : {}),
  };
}

/** A tool error made here (not by a route): `code` one of the API's error codes. */
export function toolError(
  code: string,
  message: string,
  param?: string,
  details?: Record<string, unknown>,
): CallToolResult {
  return errorResult({
    error: { code, message, ...(param ? { param } : {}), ...(details ? { details } : {}) },
    message,
  });
}

/** A route's answer as the tool's result (see the module's comment for x402). */
export function toolResultOf(answer: HttpAnswer): CallToolResult {
  const meta: Record<string, unknown> = { [STATUS_META]: answer.status };
  const requestId = header(answer, "x-request-id");
  if (requestId) meta[REQUEST_ID_META] = requestId;
  const settlement = header(answer, "payment-response");
  if (settlement) meta[PAYMENT_RESPONSE_META] = x402Http().decodePaymentResponseHeader(settlement);
  const body = parsed(answer);
  if (answer.status >= 200 && answer.status < 300) {
    const structured =
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : { value: body };
    return {
      structuredContent: structured,
      content: [{ type: "text", text: JSON.stringify(structured) }],
      _meta: meta,
    };
  }
  const required = answer.status === 402 ? header(answer, "payment-required") : undefined;
  if (required) {
    const paymentRequired = x402Http().decodePaymentRequiredHeader(required) as unknown as Record<string, unknown>;
    const reason = (body as { message?: string } | undefined)?.message;
    return {
      isError: true,
      structuredContent: paymentRequired,
      content: [
        { type: "text", text: JSON.stringify(paymentRequired) },
        ...(reason ? [{ type: "text" as const, text: reason }] : []),
      ],
      _meta: meta,
    };
  }
  const error = (body as Partial<ToolErrorBody> | undefined)?.error;
  if (error?.code && error.message) return errorResult(body as ToolErrorBody, meta);
  return errorResult(
    {
      error: { code: "INTERNAL_ERROR", message: `The route answered ${answer.status} without an error body` },
      message: `The route answered ${answer.status}`,
    },
    meta,
  );
}

/** The PaymentRequired a tool result carries (x402 over MCP), if it is one: structured content first, else its text. */
export function paymentRequiredOf(result: {
  isError?: boolean;
  structuredContent?: unknown;
  content?: unknown;
}): { x402Version: number; accepts: Record<string, unknown>[]; error?: string } | undefined {
  if (!result.isError) return undefined;
  const looksRight = (v: unknown): v is { x402Version: number; accepts: Record<string, unknown>[] } =>
    typeof v === "object" &&
    v !== null &&
    typeof (v as { x402Version?: unknown }).x402Version === "number" &&
    Array.isArray((v as { accepts?: unknown }).accepts);
  if (looksRight(result.structuredContent)) return result.structuredContent;
  const first = Array.isArray(result.content) ? (result.content[0] as { text?: unknown } | undefined)?.text : undefined;
  if (typeof first !== "string") return undefined;
  try {
    const value: unknown = JSON.parse(first);
    return looksRight(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
