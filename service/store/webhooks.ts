import { randomBytes } from "node:crypto";
import type { Sealer } from "../crypto/sealed";
import { newWebhookSecret } from "../crypto/webhook-signing";
import type { Db, Queryable } from "./db";
import type { ClaimedDelivery } from "./webhook-deliveries";
import { arrayColumn, iso, isoOrNull } from "./columns";

export interface WebhookEndpointRecord {
  id: string;
  apiKeyId: string | null;
  /** A keyless endpoint's batch (see migration 010). */
  txId: string | null;
  url: string;
  description: string | null;
  /** Empty: every type the endpoint may receive. */
  eventTypes: string[];
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
  /** Until when the previous secret (after a rotation) still signs; null when there is none. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const ENDPOINT_COLUMNS = `id, api_key_id, tx_id, url, description, event_types, disabled_at, disabled_reason, failing_since,
  previous_secret_expires_at, created_at, updated_at`;

interface EndpointRow {
  id: string;
  api_key_id: string | null;
  tx_id: string | null;
  url: string;
  description: string | null;
  event_types: string[] | string;
  disabled_at: Date | string | null;
  disabled_reason: string | null;
  failing_since: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const toEndpoint = (r: EndpointRow): WebhookEndpointRecord => ({
  id: r.id,
  apiKeyId: r.api_key_id,
  txId: r.tx_id,
  url: r.url,
  description: r.description,
  eventTypes: arrayColumn(r.event_types),
  disabledAt: isoOrNull(r.disabled_at),
  disabledReason: r.disabled_reason,
  failingSince: isoOrNull(r.failing_since),
  previousSecretExpiresAt:
    r.previous_secret_expires_at && new Date(r.previous_secret_expires_at) > new Date()
      ? iso(r.previous_secret_expires_at)
      : null,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/** Bound into each sealed secret, so a sealed value cannot be moved to another endpoint's row. */
export const secretPurpose = (endpointId: string) => `webhook-secret:${endpointId}`;

/**
 * Webhook endpoints (per API key, or per keyless txId): created, changed, their secrets rotated, a test event sent.
 * Their deliveries (claimed, attempted, listed, redelivered) are WebhookDeliveries' (webhook-deliveries.ts).
 */
export class Webhooks {
  /** Counts this process's endpoint creations and changes (a dispatcher's "no endpoint" knowledge is older when it moved). */
  endpointChanges = 0;

  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

  /** Creates an endpoint; its secret is returned here only (stored sealed). */
  async create(e: {
    apiKeyId: string | null;
    txId: string | null;
    url: string;
    description: string | null;
    eventTypes: string[];
  }): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const id = `wh_${randomBytes(12).toString("hex")}`;
    const secret = newWebhookSecret();
    const [row] = await this.db.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, api_key_id, tx_id, url, description, event_types, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6::text[], $7) RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id,
        e.apiKeyId,
        e.txId?.toLowerCase() ?? null,
        e.url,
        e.description,
        e.eventTypes,
        this.sealer.seal(secret, secretPurpose(id)),
      ],
    );
    this.endpointChanges++; // after the write: a dispatcher that looked before it looks again
    return { endpoint: toEndpoint(row), secret };
  }

  async listForKey(apiKeyId: string): Promise<WebhookEndpointRecord[]> {
    const rows = await this.db.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE api_key_id = $1 ORDER BY created_at, id`,
      [apiKeyId],
    );
    return rows.map(toEndpoint);
  }

  /** The key's endpoint `id`, or undefined (another key's endpoint is as unknown as a missing one). */
  async getForKey(id: string, apiKeyId: string, q: Queryable = this.db): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await q.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND api_key_id = $2`,
      [id, apiKeyId],
    );
    return row && toEndpoint(row);
  }

  async countForTx(txId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_endpoints WHERE tx_id = $1",
      [txId.toLowerCase()],
    );
    return row.n;
  }

  /** Changes an endpoint; `enabled: true` re-enables a disabled one (and forgets its failures), false disables it. */
  async update(
    id: string,
    apiKeyId: string,
    patch: { url?: string; description?: string | null; eventTypes?: string[]; enabled?: boolean },
  ): Promise<WebhookEndpointRecord | undefined> {
    const [row] = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET
         url = COALESCE($3, url),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         event_types = COALESCE($6::text[], event_types),
         disabled_at = CASE WHEN $7::boolean IS NULL THEN disabled_at WHEN $7 THEN NULL ELSE COALESCE(disabled_at, now()) END,
         disabled_reason = CASE WHEN $7::boolean IS NULL THEN disabled_reason WHEN $7 THEN NULL ELSE COALESCE(disabled_reason, 'disabled by its owner') END,
         failing_since = CASE WHEN $7::boolean THEN NULL ELSE failing_since END,
         updated_at = now()
       WHERE id = $1 AND api_key_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [
        id,
        apiKeyId,
        patch.url ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.eventTypes ?? null,
        patch.enabled ?? null,
      ],
    );
    this.endpointChanges++;
    return row && toEndpoint(row);
  }

  async delete(id: string, apiKeyId: string): Promise<boolean> {
    return (
      (
        await this.db.query("DELETE FROM webhook_endpoints WHERE id = $1 AND api_key_id = $2 RETURNING id", [
          id,
          apiKeyId,
        ])
      ).length > 0
    );
  }

  /** A new secret (returned once); the current one keeps signing, beside it, for `graceMs`. */
  async rotateSecret(
    id: string,
    apiKeyId: string,
    graceMs: number,
  ): Promise<{ endpoint: WebhookEndpointRecord; secret: string } | undefined> {
    const secret = newWebhookSecret();
    const [row] = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = now() + $3::bigint * interval '1 millisecond',
         secret_sealed = $4, updated_at = now()
       WHERE id = $1 AND api_key_id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [id, apiKeyId, graceMs, this.sealer.seal(secret, secretPurpose(id))],
    );
    return row && { endpoint: toEndpoint(row), secret };
  }

  /** The secrets that sign a delivery now: the current one, and the previous one during its grace period. */
  secretsOf(
    d: Pick<ClaimedDelivery, "endpointId" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt">,
    now = new Date(),
  ): string[] {
    const purpose = secretPurpose(d.endpointId);
    const secrets = [this.sealer.open(d.secretSealed, purpose)];
    if (d.previousSecretSealed && d.previousSecretExpiresAt && new Date(d.previousSecretExpiresAt) > now)
      secrets.push(this.sealer.open(d.previousSecretSealed, purpose));
    return secrets;
  }

  /** Pending deliveries per endpoint, for listings. */
  async pendingCounts(endpointIds: string[]): Promise<Map<string, number>> {
    if (!endpointIds.length) return new Map();
    const rows = await this.db.query<{ endpoint_id: string; n: number }>(
      "SELECT endpoint_id, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ANY ($1::text[]) AND status IN ('pending', 'delivering') GROUP BY endpoint_id",
      [endpointIds],
    );
    return new Map(rows.map((r) => [r.endpoint_id, r.n]));
  }

  /**
   * A webhook.test event addressed to this endpoint alone (it never reaches the stream). Resolves once committed, with
   * the event's id and its delivery's.
   */
  async sendTest(endpoint: WebhookEndpointRecord, message: string): Promise<{ eventId: string; deliveryId: string }> {
    const [inserted] = await this.db.query<{ id: string }>(
      "INSERT INTO events (type, api_key_id, endpoint_id, data) VALUES ('webhook.test', $1, $2, $3) RETURNING id::text AS id",
      [endpoint.apiKeyId, endpoint.id, JSON.stringify({ endpointId: endpoint.id, message })],
    );
    const [row] = await this.db.query<{ position: string; delivery_id: string }>(
      "SELECT e.position::text AS position, d.id::text AS delivery_id FROM events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.id = $1",
      [inserted.id],
    );
    return { eventId: row.position, deliveryId: row.delivery_id };
  }
}
