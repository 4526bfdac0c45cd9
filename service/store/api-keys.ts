import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  FAUCET_CREDIT_METHOD,
  FAUCET_CREDITS,
  INVITATION_CREDIT_METHOD,
  PLAN_CREDITS,
  type Plan,
} from "../model/plans";
import { TtlCache } from "../cache/ttl-cache";
import type { Db, Queryable } from "./db";

/**
 * How long a verified key is trusted without asking the database again. A revocation made by this process takes
 * effect at once; one made by another process sharing the database (or the admin CLI on the server) within this bound.
 */
export const VERIFIED_KEY_TTL_MS = 1_000;

export interface ApiKeyRecord {
  id: string;
  email: string;
  plan: Plan;
  createdAt: string;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  key_hash: string;
  email: string;
  plan: Plan;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const KEY_PATTERN = /^tak_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  email: row.email,
  plan: row.plan,
  createdAt: new Date(row.created_at).toISOString(),
  revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
});

/**
 * API keys: `tak_<id>_<secret>`. Only an HMAC-SHA256 of the whole key is stored, peppered with a secret kept in this
 * deployment's database, so a key (or a copied row) is worthless against any other deployment. Compared in constant time.
 */
export class ApiKeys {
  private pepper?: Buffer;
  /**
   * Active key records by a SHA-256 fingerprint of the presented key (never the key itself: a fingerprint cannot be
   * presented), so a key verified within VERIFIED_KEY_TTL_MS costs one plain hash, not the HMAC and a database read.
   * Unknown and revoked keys are not kept.
   */
  private readonly verified = new TtlCache<string, ApiKeyRecord>(VERIFIED_KEY_TTL_MS);

  constructor(private readonly db: Db) {}

  async create(input: { email: string; plan: Plan }): Promise<{ key: string; record: ApiKeyRecord }> {
    const id = randomBytes(8).toString("hex");
    const key = `tak_${id}_${randomBytes(32).toString("base64url")}`;
    const hash = await this.hash(key);
    const row = await this.db.transaction(async (tx) => {
      const [inserted] = await tx.query<ApiKeyRow>(
        "INSERT INTO api_keys (id, key_hash, email, plan) VALUES ($1, $2, $3, $4) RETURNING *",
        [id, hash, input.email, input.plan],
      );
      await grantInitialCredits(tx, id, input.plan);
      return inserted;
    });
    return { key, record: toRecord(row) };
  }

  /** The active key record for a presented key, or undefined (unknown, malformed or revoked). */
  async verify(presented: string): Promise<ApiKeyRecord | undefined> {
    const key = presented.trim();
    const fingerprint = createHash("sha256").update(key).digest("base64");
    const known = this.verified.get(fingerprint);
    if (known) return known;
    const match = KEY_PATTERN.exec(key);
    const candidateHex = await this.hash(key);
    const candidate = Buffer.from(candidateHex, "hex");
    const rows = match ? await this.db.query<ApiKeyRow>("SELECT * FROM api_keys WHERE id = $1", [match[1]]) : [];
    const stored = Buffer.from(rows[0]?.key_hash ?? "00".repeat(32), "hex");
    const equal = timingSafeEqual(candidate, stored);
    if (!equal || !rows[0] || rows[0].revoked_at) return undefined;
    const record = toRecord(rows[0]);
    this.verified.set(fingerprint, record);
    return record;
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.db.query<ApiKeyRow>("SELECT * FROM api_keys WHERE id = $1", [id]);
    return rows[0] && toRecord(rows[0]);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await this.db.query<ApiKeyRow>("SELECT * FROM api_keys ORDER BY created_at")).map(toRecord);
  }

  /** Revokes a key; returns false when no such key exists. Revoking twice keeps the first time. */
  async revoke(id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING id",
      [id],
    );
    this.verified.deleteWhere((record) => record.id === id);
    return rows.length > 0;
  }

  private async hash(key: string): Promise<string> {
    this.pepper ??= await loadPepper(this.db);
    return createHmac("sha256", this.pepper).update(key).digest("hex");
  }
}

/**
 * The balances that are not a method's: faucet claims and invitations. Metered methods' balances are the plan's
 * credits until first used (store/credits.ts), written then.
 */
async function grantInitialCredits(tx: Queryable, keyId: string, plan: Plan) {
  await tx.query("INSERT INTO credit_balances (key_id, method, balance) VALUES ($1, $2, $3), ($1, $4, $5)", [
    keyId,
    FAUCET_CREDIT_METHOD,
    FAUCET_CREDITS,
    INVITATION_CREDIT_METHOD,
    PLAN_CREDITS[plan],
  ]);
}

/** The per-database pepper, created on first use (racing instances agree through ON CONFLICT). */
async function loadPepper(db: Db): Promise<Buffer> {
  await db.query(
    "INSERT INTO deployment_meta (key, value) VALUES ('api_key_pepper', $1) ON CONFLICT (key) DO NOTHING",
    [randomBytes(32).toString("hex")],
  );
  const [row] = await db.query<{ value: string }>("SELECT value FROM deployment_meta WHERE key = 'api_key_pepper'");
  return Buffer.from(row.value, "hex");
}
