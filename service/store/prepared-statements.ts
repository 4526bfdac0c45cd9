import type { PGlite } from "@electric-sql/pglite";
import { escapeLiteral } from "pg";
import { timedTrip, type DbWork } from "./db-work";
import type { PgliteProtocol, PreparedStatement, Step, StepResult } from "./pglite-protocol";

/** Statements kept prepared: those a service runs with parameters (DDL, SET, BEGIN… run as given). */
const PREPARABLE = /^\s*(select|insert|update|delete|with|values)\b/i;

/**
 * Parameterised queries on the embedded database, each planned once. PGlite's own `query` parses, describes and plans
 * a statement on every call (six trips into its WASM engine); a statement prepared once under a name (as a server
 * driver's named statement) runs with Bind + Execute: one trip, no parsing or planning, its parameters as values
 * (PgliteProtocol). Prepared statements belong to the session and survive a rolled-back transaction.
 */
export class PreparedStatements {
  /** SQL text → its statement (a preparation under way is awaited by whoever asks meanwhile). */
  private readonly names = new Map<string, Promise<PreparedStatement>>();
  /** SQL text → its statement, once prepared. */
  private readonly ready = new Map<string, PreparedStatement>();

  /** `max` bounds how many statements are kept; SQL beyond it runs unprepared. */
  constructor(
    private readonly pg: PGlite,
    private readonly protocol: PgliteProtocol,
    private readonly max = 1_000,
  ) {}

  /** One statement in a trip of its own: prepared (the first time, a trip more), or through PGlite's `query`. */
  async run<T>(sql: string, params: readonly unknown[], work: DbWork): Promise<T[]> {
    const step = await this.step(sql, params, work);
    if (!step) return this.unprepared<T>(sql, params, work);
    const [result] = await this.trip([step], work);
    return result.rows as T[];
  }

  /** Runs `steps` in one trip (PgliteProtocol.run), counted in `work`. */
  trip(steps: readonly Step[], work: DbWork): Promise<StepResult[]> {
    return timedTrip(work, steps.length, () => this.protocol.run(steps));
  }

  /** A statement through PGlite's own `query`: parsed and planned for this call (see step). */
  async unprepared<T>(sql: string, params: readonly unknown[], work: DbWork): Promise<T[]> {
    return (await timedTrip(work, 1, () => this.pg.query<T>(sql, params as unknown[]))).rows;
  }

  /**
   * The statement as a step of a trip (its prepared form with its parameters' text), so that it can travel with other
   * statements; undefined when it runs through `unprepared` instead (no parameters, not preparable, or the cache is
   * full). Prepares the statement the first time.
   */
  async step(sql: string, params: readonly unknown[], work: DbWork): Promise<Step | undefined> {
    if (!params.length || !PREPARABLE.test(sql) || (!this.names.has(sql) && this.names.size >= this.max))
      return undefined;
    const values = params.map(parameterText);
    return { prepared: await this.prepared(sql, work), values };
  }

  /** step()'s answer, without waiting, for a statement already prepared; undefined for any other. */
  readyStep(sql: string, params: readonly unknown[]): Step | undefined {
    const prepared = params.length ? this.ready.get(sql) : undefined;
    return prepared && { prepared, values: params.map(parameterText) };
  }

  private prepared(sql: string, work: DbWork): Promise<PreparedStatement> {
    let prepared = this.names.get(sql);
    if (!prepared) {
      const name = `tak_${this.names.size + 1}`;
      prepared = timedTrip(work, 1, () => this.protocol.prepare(name, sql)).then((statement) => {
        this.ready.set(sql, statement);
        return statement;
      });
      this.names.set(sql, prepared);
      // A statement that cannot be prepared fails here as it would have failed unprepared; it is tried anew next time.
      prepared.catch(() => this.names.delete(sql));
    }
    return prepared;
  }
}

/** A parameter as PostgreSQL's text form (what node-postgres sends for it); null for SQL NULL. */
function parameterText(value: unknown): string | null {
  return value === null || value === undefined ? null : textOf(value);
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
