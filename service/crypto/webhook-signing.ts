import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A fresh signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The Standard Webhooks headers of one delivery: webhook-id (the event's id, the same on every retry, so receivers can
 * drop duplicates), webhook-timestamp (seconds) and webhook-signature, one `v1,<base64 HMAC-SHA256>` per secret,
 * space-separated (during a rotation the previous secret signs too; a receiver accepts any signature it can verify).
 */
export function signedHeaders(id: string, at: Date, body: string, secrets: string[]): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(id, at, body));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
