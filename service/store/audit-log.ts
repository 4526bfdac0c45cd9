import type { Db, Queryable } from "./db";

/** The admin tool's name in the audit log (a command run on the server, not signed in as anyone). */
export const ADMIN_TOOL_ACTOR = "admin tool";

export interface AuditEntry {
  id: string;
  /** The operator's e-mail, or ADMIN_TOOL_ACTOR. */
  actor: string;
  /** What was done, e.g. "keys.create", "transaction.cancel". */
  action: string;
  /** What it was done to (a key id, a txId, an e-mail), if anything in particular. */
  target: string | null;
  before: unknown;
  after: unknown;
  at: string;
}

interface AuditRow {
  id: string;
  actor: string;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
  at: Date | string;
}

const json = (v: unknown) => (typeof v === "string" ? (JSON.parse(v) as unknown) : v);

/**
 * Every change an operator makes: written by the change's own code path (the admin commands, the console's actions),
 * read by the console's audit page and `npm run admin -- audit list`. Never holds a secret (an API key, a password, a
 * token): the writers leave them out.
 */
export class AuditLog {
  constructor(private readonly db: Db) {}

  async record(
    entry: { actor: string; action: string; target?: string | null; before?: unknown; after?: unknown },
    q: Queryable = this.db,
  ): Promise<void> {
    await q.query("INSERT INTO operator_audit (actor, action, target, before, after) VALUES ($1, $2, $3, $4, $5)", [
      entry.actor,
      entry.action,
      entry.target ?? null,
      entry.before === undefined ? null : JSON.stringify(entry.before),
      entry.after === undefined ? null : JSON.stringify(entry.after),
    ]);
  }

  /** Newest first, `limit` entries older than entry `before` (its id) when given; optionally one actor's, action's or target's. */
  async list(options: {
    limit: number;
    before?: string;
    actor?: string;
    action?: string;
    target?: string;
  }): Promise<AuditEntry[]> {
    const rows = await this.db.query<AuditRow>(
      `SELECT id::text AS id, actor, action, target, before, after, at FROM operator_audit
       WHERE ($2::bigint IS NULL OR id < $2) AND ($3::text IS NULL OR actor = $3) AND ($4::text IS NULL OR action = $4) AND ($5::text IS NULL OR target = $5)
       ORDER BY operator_audit.id DESC LIMIT $1`,
      [
        options.limit,
        options.before ?? null,
        options.actor?.toLowerCase() ?? null,
        options.action ?? null,
        options.target ?? null,
      ],
    );
    return rows.map((r) => ({
      id: r.id,
      actor: r.actor,
      action: r.action,
      target: r.target,
      before: json(r.before),
      after: json(r.after),
      at: new Date(r.at).toISOString(),
    }));
  }
}
