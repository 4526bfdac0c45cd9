import type { Db, Queryable } from "./db";
import { consoleTokenHash, type OperatorRecord, type OperatorRole } from "./operators";
import { iso } from "./columns";

export interface SessionRecord {
  operator: OperatorRecord;
  via: "password" | "link";
  createdAt: string;
  expiresAt: string;
  /** When a request last came with it (written at most every few seconds: auth/console-session.ts). */
  lastSeenAt: string;
  revokedAt: string | null;
}

interface SessionRow {
  id: string;
  email: string;
  role: OperatorRole;
  has_password: boolean;
  operator_created_at: Date | string;
  via: "password" | "link";
  created_at: Date | string;
  expires_at: Date | string;
  last_seen_at: Date | string;
  revoked_at: Date | string | null;
  removed_at: Date | string | null;
}

/** Console sessions, each kept by its cookie token's hash (operators.ts consoleTokenHash). */
export class OperatorSessions {
  constructor(private readonly db: Db) {}

  /** Opens a session for `token` that ends after `ttlMs` (inside `q`: the sign-in's transaction). */
  async open(
    q: Queryable,
    operatorId: string,
    token: string,
    via: "password" | "link",
    ttlMs: number,
  ): Promise<{ expiresAt: string }> {
    const [row] = await q.query<{ expires_at: Date | string }>(
      "INSERT INTO operator_sessions (token_hash, operator_id, via, expires_at) VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond') RETURNING expires_at",
      [consoleTokenHash(token), operatorId, via, ttlMs],
    );
    return { expiresAt: iso(row.expires_at) };
  }

  /**
   * The session a cookie's token names, as stored (expired and revoked ones included: the caller says which it is);
   * undefined when the token is unknown or its operator was removed.
   */
  async find(token: string): Promise<SessionRecord | undefined> {
    const [row] = await this.db.query<SessionRow>(
      `SELECT o.id, o.email, o.role, o.password_hash IS NOT NULL AS has_password, o.created_at AS operator_created_at, o.removed_at,
              s.via, s.created_at, s.expires_at, s.last_seen_at, s.revoked_at
       FROM operator_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.token_hash = $1`,
      [consoleTokenHash(token)],
    );
    if (!row || row.removed_at) return undefined;
    return {
      operator: {
        id: row.id,
        email: row.email,
        role: row.role,
        hasPassword: row.has_password,
        createdAt: iso(row.operator_created_at),
      },
      via: row.via,
      createdAt: iso(row.created_at),
      expiresAt: iso(row.expires_at),
      lastSeenAt: iso(row.last_seen_at),
      revokedAt: row.revoked_at === null ? null : iso(row.revoked_at),
    };
  }

  /** The session was used now (its idle time starts again). */
  async touch(token: string): Promise<void> {
    await this.db.query("UPDATE operator_sessions SET last_seen_at = now() WHERE token_hash = $1", [
      consoleTokenHash(token),
    ]);
  }

  /** Ends one session (sign-out). */
  async revoke(token: string): Promise<boolean> {
    return (
      (
        await this.db.query(
          "UPDATE operator_sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL RETURNING token_hash",
          [consoleTokenHash(token)],
        )
      ).length > 0
    );
  }

  /** Ends every session of an operator but the one of `except` (a token), if given; answers how many were open. */
  async revokeAll(operatorId: string, except?: string, q: Queryable = this.db): Promise<number> {
    const rows = await q.query(
      "UPDATE operator_sessions SET revoked_at = now() WHERE operator_id = $1 AND revoked_at IS NULL AND expires_at > now() AND token_hash <> $2 RETURNING token_hash",
      [operatorId, except === undefined ? "" : consoleTokenHash(except)],
    );
    return rows.length;
  }
}
