import type { DeliveryRow, EndpointRow } from "../store/webhook-admin";

/** An attempt as a payment provider's dashboard shows one: the request it made and what came back. */
export interface AttemptView {
  attempt: number;
  at: string;
  durationMs: number;
  request: { method: "POST"; url: string; headers: Record<string, string> };
  response: { statusCode: number | null; body: string | null; error: string | null };
}

export type DeliveryView = Omit<DeliveryRow, "attempts"> & {
  /** Why a delivery that is owed is not on its way (held behind an earlier one, its endpoint disabled…), or null. */
  waiting: string | null;
  attempts: AttemptView[];
};

/** What stands in for the signature: it is made with the endpoint's secret, which the console never shows. */
export const SIGNATURE_SHOWN = "v1,… (signed with the endpoint's secret: not shown)";

/**
 * A delivery as the console shows it: each attempt's request (the URL, the headers the dispatcher sent but the
 * signature, the body every attempt shares: DeliveryRow.requestBody) and the receiver's answer (status, the first KiB
 * of its body with anything that looks like a secret hidden, or the error); and, while it is owed, what it waits for.
 */
export function deliveryView(endpoint: EndpointRow, d: DeliveryRow): DeliveryView {
  return {
    ...d,
    waiting: waitingFor(endpoint, d),
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at,
      durationMs: a.durationMs,
      request: {
        method: "POST",
        url: endpoint.url,
        headers: {
          "content-type": "application/json",
          "user-agent": "tak-webhooks/1",
          "webhook-id": d.eventId,
          "webhook-timestamp": String(Math.floor(Date.parse(a.at) / 1000)),
          "webhook-signature": SIGNATURE_SHOWN,
        },
      },
      response: {
        statusCode: a.statusCode,
        body: a.response === null ? null : hideSecrets(a.response),
        error: a.error,
      },
    })),
  };
}

function waitingFor(endpoint: EndpointRow, d: DeliveryRow): string | null {
  if (d.status !== "pending" && d.status !== "delivering") return null;
  if (endpoint.disabledAt)
    return `paused: the endpoint is disabled (${endpoint.disabledReason ?? "no reason given"}); delivered once it is enabled again`;
  if (d.status === "delivering") return "being attempted now";
  if (d.heldBehind)
    return `held behind delivery ${d.heldBehind}: the events of one batch reach a receiver in order, so it waits for that one to be delivered or to fail for good`;
  if (d.nextAttemptAt && Date.parse(d.nextAttemptAt) > Date.now())
    return d.attempts.length ? `retried at ${d.nextAttemptAt}` : `due at ${d.nextAttemptAt}`;
  return "due now";
}

/**
 * A receiver's answer with what looks like a secret hidden: a webhook secret (whsec_…), a signature header's value
 * (v1,…), a bearer token, a private key, and the value of any field named like a secret, token, password or key.
 */
export function hideSecrets(text: string): string {
  return text
    .replace(/whsec_[A-Za-z0-9+/=]+/g, "whsec_[hidden]")
    .replace(/\bv1,[A-Za-z0-9+/=]{16,}/g, "v1,[hidden]")
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [hidden]")
    .replace(
      /\b(0x)?[0-9a-fA-F]{64}\b(?![0-9a-fA-F])/g,
      (m, prefix: string | undefined, offset: number, all: string) =>
        prefix && /hash|txid|tx_id|transaction|block/i.test(all.slice(Math.max(0, offset - 24), offset))
          ? m
          : "[hidden]",
    )
    .replace(
      /(["']?[\w-]*(?:secret|token|password|passwd|api[_-]?key|private[_-]?key|authorization)[\w-]*["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;&}]+)/gi,
      "$1[hidden]",
    );
}
