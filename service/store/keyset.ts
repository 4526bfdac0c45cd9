import type { Queryable } from "./db";

/**
 * The WHERE clause of a list's filters, built condition by condition with numbered parameters: only the conditions a
 * request uses are in the SQL, so each combination gets a plan that uses its own index (a catch-all `$1 IS NULL OR …`
 * plan cannot).
 */
export class Conditions {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];

  /** The placeholder of `value` ($1, $2, …). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(sql: string): this {
    this.parts.push(sql);
    return this;
  }

  get where(): string {
    return this.parts.length ? `WHERE ${this.parts.join(" AND ")}` : "";
  }
}

/** A row's place in a list ordered newest first: the values of the list's key columns (its time and id, say). */
export type KeysetCursor = string[];

/** A list's SQL: what it selects from what, the filters (added to fresh Conditions), and its unique ordering key. */
export interface KeysetList {
  select: string;
  from: string;
  /** What counting needs of `from`, when less (a join only the selected columns need). */
  countFrom?: string;
  filter: (c: Conditions) => void;
  /** The ordering key's columns and their SQL types, e.g. ["b.created_at", "b.tx_id"], ["timestamptz", "text"]. */
  key: string[];
  keyTypes: string[];
}

const bound = (list: KeysetList, c: Conditions, cursor: KeysetCursor, op: "<" | ">") =>
  `(${list.key.join(", ")}) ${op} (${cursor.map((v, i) => `${c.param(v)}::${list.keyTypes[i]}`).join(", ")})`;

/**
 * A page of `limit` rows, newest first: the rows older than `before`, or the rows newer than `after` (read oldest first
 * from the cursor, then turned around), or the newest ones. Costs the same deep in the list as at its top.
 */
export async function keysetPage<R>(
  db: Queryable,
  list: KeysetList,
  page: { before?: KeysetCursor; after?: KeysetCursor; limit: number },
): Promise<R[]> {
  const c = new Conditions();
  list.filter(c);
  if (page.before) c.add(bound(list, c, page.before, "<"));
  if (page.after) c.add(bound(list, c, page.after, ">"));
  const dir = page.after ? "ASC" : "DESC";
  const rows = await db.query<R>(
    `SELECT ${list.select} FROM ${list.from} ${c.where} ORDER BY ${list.key.map((k) => `${k} ${dir}`).join(", ")} LIMIT ${c.param(page.limit)}`,
    c.params,
  );
  return page.after ? rows.reverse() : rows;
}

/** How many rows the filters match, and how many of them are newer than `first` (where a page starts in the list). */
export async function keysetCount(
  db: Queryable,
  list: KeysetList,
  first?: KeysetCursor,
): Promise<{ total: number; newer: number }> {
  const c = new Conditions();
  list.filter(c);
  const newer = first ? `count(*) FILTER (WHERE ${bound(list, c, first, ">")})::int` : "0";
  const [row] = await db.query<{ total: number; newer: number }>(
    `SELECT count(*)::int AS total, ${newer} AS newer FROM ${list.countFrom ?? list.from} ${c.where}`,
    c.params,
  );
  return { total: row.total, newer: row.newer };
}
