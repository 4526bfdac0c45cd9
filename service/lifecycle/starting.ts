import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../errors";

/** How long a client told "starting" waits before it asks again (Retry-After). */
const RETRY_AFTER_SECONDS = 1;

/**
 * What the port answers between the moment it opens and the moment the service is composed (the database opened and
 * migrated, the chains checked, the relayer synced: seconds, or a minute on a first start that delegates the relayer
 * on a public network). `GET /health` is liveness and answers 200 with `status: "starting"` (a supervisor does not
 * kill a process that is still starting); every other request, `/ready` included, gets 503 UNAVAILABLE with
 * Retry-After, so a load balancer sends no traffic and a client knows to ask again.
 */
export function startingResponder(
  environment: string,
  since = Date.now(),
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0].replace(/\/$/, "").toLowerCase();
    if ((req.method === "GET" || req.method === "HEAD") && path === "/health") {
      return send(res, 200, {
        status: "starting",
        environment,
        uptimeSeconds: Math.round((Date.now() - since) / 1000),
      });
    }
    const error = new ApiError("UNAVAILABLE", "The service is starting: try again in a moment", {
      starting: true,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
    });
    send(res, error.status, error.toBody(), { "Retry-After": String(RETRY_AFTER_SECONDS) });
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "X-Content-Type-Options": "nosniff",
    "Access-Control-Allow-Origin": "*",
  });
  res.end(res.req.method === "HEAD" ? undefined : text);
}
