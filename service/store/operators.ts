import { createHash, randomBytes } from "node:crypto";
import type { Db, Queryable } from "./db";

/** What an operator may do in the console: viewer reads, reviewer also decides KYC reviews, admin changes anything. */
export const OPERATOR_ROLES = ["viewer", "reviewer", "admin"] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** Whether `role` may do what `needed` may (roles are ordered: admin ⊃ reviewer ⊃ viewer). */
export const roleAllows = (role: OperatorRole, needed: OperatorRole) =>
  OPERATOR_ROLES.indexOf(role) >= OPERATOR_ROLES.indexOf(needed);

export interface OperatorRecord {
  id: string;
  email: string;
  role: OperatorRole;
  /** Signs in with a password (else only with one-time links). */
  hasPassword: boolean;
  createdAt: string;
}

interface OperatorRow {
  id: string;
  email: string;
  role: OperatorRole;
  password_hash: string | null;
  created_at: Date | string;
}

const toRecord = (r: OperatorRow): OperatorRecord => ({
  id: r.id,
  email: r.email,
  role: r.role,
  hasPassword: r.password_hash !== null,
  createdAt: new Date(r.created_at).toISOString(),
});

/**
 * How console tokens (sign-in links, sessions) are kept: their SHA-256, hex. A token is 32 random bytes, so nobody can
 * find it from its hash, and a reader of the database cannot sign in with what it finds there.
 */
export const consoleTokenHash = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

/** Why a sign-in link does not sign anyone in. */
export type LinkRefusal = "unknown" | "used" | "expired";

/** Operator accounts (`npm run admin -- operators …`) and their one-time sign-in links. */
export class Operators {
  constructor(private readonly db: Db) {}

  /** A new operator; undefined when an operator with this e-mail exists already. */
  async add(input: {
    email: string;
    role: OperatorRole;
    passwordHash: string | null;
  }): Promise<OperatorRecord | undefined> {
    const [row] = await this.db.query<OperatorRow>(
      `INSERT INTO operators (id, email, role, password_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (email) WHERE removed_at IS NULL DO NOTHING RETURNING *`,
      [randomBytes(8).toString("hex"), input.email.toLowerCase(), input.role, input.passwordHash],
    );
    return row && toRecord(row);
  }

  async byEmail(email: string): Promise<OperatorRecord | undefined> {
    return (await this.withPassword(email))?.record;
  }

  /** The operator and its password hash (for a sign-in; never shown). */
  async withPassword(email: string): Promise<{ record: OperatorRecord; passwordHash: string | null } | undefined> {
    const [row] = await this.db.query<OperatorRow>("SELECT * FROM operators WHERE email = $1 AND removed_at IS NULL", [
      email.toLowerCase(),
    ]);
    return row && { record: toRecord(row), passwordHash: row.password_hash };
  }

  async list(): Promise<OperatorRecord[]> {
    return (
      await this.db.query<OperatorRow>("SELECT * FROM operators WHERE removed_at IS NULL ORDER BY created_at, email")
    ).map(toRecord);
  }

  /** Removes an operator: its sessions end and its unused links stop working, in the same transaction. */
  async remove(email: string): Promise<OperatorRecord | undefined> {
    return this.db.transaction(async (q) => {
      const [row] = await q.query<OperatorRow>(
        "UPDATE operators SET removed_at = now() WHERE email = $1 AND removed_at IS NULL RETURNING *",
        [email.toLowerCase()],
      );
      if (!row) return undefined;
      await q.query("UPDATE operator_sessions SET revoked_at = now() WHERE operator_id = $1 AND revoked_at IS NULL", [
        row.id,
      ]);
      await q.query("UPDATE operator_sign_in_links SET used_at = now() WHERE operator_id = $1 AND used_at IS NULL", [
        row.id,
      ]);
      return toRecord(row);
    });
  }

  async setPassword(id: string, passwordHash: string, q: Queryable = this.db): Promise<boolean> {
    return (
      (
        await q.query("UPDATE operators SET password_hash = $2 WHERE id = $1 AND removed_at IS NULL RETURNING id", [
          id,
          passwordHash,
        ])
      ).length > 0
    );
  }

  /** Stores a one-time sign-in link by its token's hash. */
  async addLink(operatorId: string, token: string, expiresAt: Date): Promise<void> {
    await this.db.query(
      "INSERT INTO operator_sign_in_links (token_hash, operator_id, expires_at) VALUES ($1, $2, $3)",
      [consoleTokenHash(token), operatorId, expiresAt.toISOString()],
    );
  }

  /**
   * Uses a sign-in link, once: the operator it signs in, or why not (with the e-mail of the operator a used or expired
   * link was made for). Inside `q` (the transaction that also opens the session), so a link is used only if the
   * session is made.
   */
  async useLink(q: Queryable, token: string): Promise<OperatorRecord | { refused: LinkRefusal; email?: string }> {
    const [row] = await q.query<OperatorRow & { used: boolean; expired: boolean }>(
      `WITH link AS (SELECT * FROM operator_sign_in_links WHERE token_hash = $1 FOR UPDATE),
       used AS (UPDATE operator_sign_in_links l SET used_at = now() FROM link WHERE l.token_hash = link.token_hash AND link.used_at IS NULL AND link.expires_at > now())
       SELECT o.*, link.used_at IS NOT NULL AS used, link.expires_at <= now() AS expired
       FROM link JOIN operators o ON o.id = link.operator_id`,
      [consoleTokenHash(token)],
    );
    if (!row) return { refused: "unknown" };
    if (row.used) return { refused: "used", email: row.email };
    if (row.expired) return { refused: "expired", email: row.email };
    return toRecord(row);
  }
}
