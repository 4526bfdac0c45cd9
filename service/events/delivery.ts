import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { AttemptOutcome } from "../store/webhook-deliveries";
import { checkedLookup, DestinationRefused, refusalOf, type DestinationPolicy } from "./destination";

/** What is kept of a receiver's answer: its first KiB, as text. */
const KEPT_RESPONSE_BYTES = 1024;

export interface PostOptions {
  timeoutMs: number;
  /** Bytes of the answer read at most; the connection is dropped past them. */
  responseLimitBytes: number;
  policy: DestinationPolicy;
}

// Kept-alive connections to receivers (a connection is made to an address checked by checkedLookup).
const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
};

/**
 * POSTs one signed webhook and reports how it went. Success is a 2xx answer; redirects are not followed (a 3xx is a
 * failure). However the receiver behaves, the attempt ends within `timeoutMs` and reads at most `responseLimitBytes`.
 */
export function postWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const started = performance.now();
  const finish = (o: Omit<AttemptOutcome, "startedAt" | "durationMs">): AttemptOutcome => ({
    ...o,
    startedAt,
    durationMs: Math.round(performance.now() - started),
  });
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) {
    const refused = refusalOf(host, options.policy);
    if (refused)
      return Promise.resolve(
        finish({ ok: false, statusCode: null, response: null, error: `${refused}, where webhooks may not go` }),
      );
  }
  return new Promise((resolve) => {
    let settled = false;
    const done = (o: Omit<AttemptOutcome, "startedAt" | "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(finish(o));
    };
    const client = url.protocol === "https:" ? https : http;
    const request = client.request(
      url,
      {
        method: "POST",
        agent: agents[url.protocol as "http:" | "https:"],
        lookup: checkedLookup(options.policy),
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "tak-webhooks/1",
          ...headers,
        },
      },
      (response) => readAnswer(response, request, options, done),
    );
    const timer = setTimeout(() => {
      done({ ok: false, statusCode: null, response: null, error: `no complete answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (error) => {
      const reason =
        error instanceof DestinationRefused
          ? error.message
          : `${(error as NodeJS.ErrnoException).code ?? "error"}: ${error.message}`;
      done({ ok: false, statusCode: null, response: null, error: reason.slice(0, 500) });
    });
    request.end(body);
  });
}

/** Reads a receiver's answer: its status, and at most the bytes kept of its body (the rest cut off). */
function readAnswer(
  response: http.IncomingMessage,
  request: http.ClientRequest,
  options: PostOptions,
  done: (o: Omit<AttemptOutcome, "startedAt" | "durationMs">) => void,
): void {
  const status = response.statusCode ?? 0;
  const chunks: Buffer[] = [];
  let received = 0;
  const answer = (truncated: boolean) => {
    const text = Buffer.concat(chunks).subarray(0, KEPT_RESPONSE_BYTES).toString("utf8");
    const ok = status >= 200 && status < 300;
    const error = ok
      ? null
      : status >= 300 && status < 400
        ? `answered ${status}: redirects are not followed`
        : `answered ${status}`;
    done({
      ok,
      statusCode: status,
      response: text || null,
      error: truncated
        ? [error, `answer cut at ${options.responseLimitBytes} bytes`].filter(Boolean).join("; ")
        : error,
    });
  };
  response.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received <= KEPT_RESPONSE_BYTES + chunk.length) chunks.push(chunk);
    if (received > options.responseLimitBytes) {
      answer(true);
      response.destroy();
      request.destroy();
    }
  });
  response.on("end", () => answer(false));
  response.on("error", () => answer(true));
}
