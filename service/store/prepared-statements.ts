import { escapeLiteral } from "pg";
import { timedTrip, type DbWork } from "./db-work";

/** What runs SQL on the embedded database: PGlite itself or one of its open transactions. */
interface PgliteTarget {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  exec(sql: string): Promise<{ rows: unknown[] }[]>;
}

/** Statements that PREPARE accepts; anything else (DDL, SET, BEGIN…) runs as given. */
const PREPARABLE = /^\s*(select|insert|update|delete|with|values)\b/i;

/**
 * Parameterised queries on the embedded database, each planned once. PGlite's own `query` parses, describes and plans
 * a statement on every call (six trips into its WASM engine); a statement PREPAREd once and run with EXECUTE takes one
 * trip and no planning: about a third of the CPU for the engine's typical statements. PGlite has no named-statement
 * API, so EXECUTE gets its parameters as literals: the text the wire protocol would carry, quoted by node-postgres'
 * escapeLiteral. Prepared statements belong to the session and survive a rolled-back transaction.
 */
export class PreparedStatements {
  /** SQL text → its statement's name (a preparation under way is awaited by whoever asks meanwhile). */
  private readonly names = new Map<string, Promise<string>>();
  /** SQL text → its statement's name, once prepared. */
  private readonly ready = new Map<string, string>();

  /** `max` bounds how many statements are kept; SQL beyond it runs unprepared. */
  constructor(private readonly max = 1_000) {}

  async run<T>(target: PgliteTarget, sql: string, params: readonly unknown[], work: DbWork): Promise<T[]> {
    const text = await this.executable(target, sql, params, work);
    if (text === undefined) return (await timedTrip(work, 1, () => target.query<T>(sql, params as unknown[]))).rows;
    const [result] = await timedTrip(work, 1, () => target.exec(text));
    return result.rows as T[];
  }

  /**
   * The statement as SQL text that `exec` runs (an EXECUTE of its prepared form, parameters as literals), so that it
   * can travel with other statements in one trip; undefined when it runs through `query` instead (no parameters, not
   * preparable, or the cache is full). Prepares the statement the first time.
   */
  async executable(
    target: PgliteTarget,
    sql: string,
    params: readonly unknown[],
    work: DbWork,
  ): Promise<string | undefined> {
    if (!params.length || !PREPARABLE.test(sql) || (!this.names.has(sql) && this.names.size >= this.max))
      return undefined;
    const args = params.map(literal).join(", ");
    return `EXECUTE ${await this.nameOf(target, sql, work)}(${args})`;
  }

  /** executable()'s text, without waiting, for a statement already prepared; undefined for any other. */
  readyText(sql: string, params: readonly unknown[]): string | undefined {
    const name = params.length ? this.ready.get(sql) : undefined;
    return name && `EXECUTE ${name}(${params.map(literal).join(", ")})`;
  }

  private nameOf(target: PgliteTarget, sql: string, work: DbWork): Promise<string> {
    let name = this.names.get(sql);
    if (!name) {
      const chosen = `tak_${this.names.size + 1}`;
      name = timedTrip(work, 1, () => target.exec(`PREPARE ${chosen} AS ${sql}`)).then(() => {
        this.ready.set(sql, chosen);
        return chosen;
      });
      this.names.set(sql, name);
      // A statement that cannot be prepared fails here as it would have failed unprepared; it is tried anew next time.
      name.catch(() => this.names.delete(sql));
    }
    return name;
  }
}

/** A parameter as a SQL literal: what node-postgres would send as its text form, quoted. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  return escapeLiteral(textOf(value));
}

function textOf(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "bigint") text = String(value);
  else if (typeof value === "boolean") text = value ? "true" : "false";
  else if (value instanceof Date) text = value.toISOString();
  else if (value instanceof Uint8Array) text = "\\x" + Buffer.from(value).toString("hex");
  else if (Array.isArray(value)) text = arrayText(value);
  else text = JSON.stringify(value);
  // A NUL cannot be in PostgreSQL text; in the simple protocol it would end the statement early. Refuse it as the
  // server refuses it.
  if (text.includes("\0"))
    throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: "22021" });
  return text;
}

/** PostgreSQL's array input form: {"a","b",NULL}, each element quoted and escaped. */
function arrayText(values: unknown[]): string {
  const element = (v: unknown): string => {
    if (v === null || v === undefined) return "NULL";
    if (Array.isArray(v)) return arrayText(v);
    return `"${textOf(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  };
  return `{${values.map(element).join(",")}}`;
}
