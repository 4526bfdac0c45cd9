import type { Db, Queryable } from "./db";
import { keysetCount, keysetPage, type Conditions, type KeysetList } from "./keyset";

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

export interface AuditFilter {
  /** An operator's e-mail (any letter case), or ADMIN_TOOL_ACTOR. */
  actor?: string;
  action?: string;
  target?: string;
  /** Recorded at or after `from` and before `to` (ISO 8601). */
  from?: string;
  to?: string;
}

function auditList(f: AuditFilter): KeysetList {
  return {
    select: "id::text AS id, actor, action, target, before, after, at",
    from: "operator_audit",
    key: ["operator_audit.id"],
    keyTypes: ["bigint"],
    filter: (c: Conditions) => {
      if (f.actor) c.add(`actor = ${c.param(f.actor.toLowerCase())}`);
      if (f.action) c.add(`action = ${c.param(f.action)}`);
      if (f.target) c.add(`target = ${c.param(f.target)}`);
      if (f.from) c.add(`at >= ${c.param(f.from)}::timestamptz`);
      if (f.to) c.add(`at < ${c.param(f.to)}::timestamptz`);
    },
  };
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

  /**
   * Newest first, `limit` entries older than entry `before` (or newer than entry `after`) when given; optionally one
   * actor's, action's or target's, in a time range.
   */
  async list(options: AuditFilter & { limit: number; before?: string; after?: string }): Promise<AuditEntry[]> {
    const rows = await keysetPage<AuditRow>(this.db, auditList(options), {
      before: options.before === undefined ? undefined : [options.before],
      after: options.after === undefined ? undefined : [options.after],
      limit: options.limit,
    });
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

  /** How many entries the filter matches, and how many of them are newer than entry `first`. */
  count(filter: AuditFilter, first?: string): Promise<{ total: number; newer: number }> {
    return keysetCount(this.db, auditList(filter), first === undefined ? undefined : [first]);
  }

  /** The actions recorded so far (for the filter's choices). */
  async actions(): Promise<string[]> {
    return (await this.db.query<{ action: string }>("SELECT DISTINCT action FROM operator_audit ORDER BY action")).map(
      (r) => r.action,
    );
  }
}
