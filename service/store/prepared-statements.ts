import { timedSyncTrip, timedTrip, type DbWork } from "./db-work";
import { parameterText } from "./parameter-text";
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
    private readonly protocol: PgliteProtocol,
    private readonly max = 1_000,
  ) {}

  /** One statement in a trip of its own: prepared (the first time, a trip more), or through PGlite's `query`. */
  async run<T>(sql: string, params: readonly unknown[], work: DbWork): Promise<T[]> {
    const step = this.readyStep(sql, params) ?? (await this.step(sql, params, work));
    if (!step) return this.unprepared<T>(sql, params, work);
    const [result] = await this.trip([step], work);
    return result.rows as T[];
  }

  /** Runs `steps` in one trip (PgliteProtocol.run), counted in `work`: at once, unless one of PGlite's calls runs. */
  trip(steps: readonly Step[], work: DbWork): Promise<StepResult[]> {
    return this.protocol.whenIdle(() => timedSyncTrip(work, steps.length, () => this.protocol.run(steps)));
  }

  /** A statement through PGlite's own `query`: parsed and planned for this call (see step). */
  async unprepared<T>(sql: string, params: readonly unknown[], work: DbWork): Promise<T[]> {
    return (await timedTrip(work, 1, () => this.protocol.viaPglite((pg) => pg.query<T>(sql, params as unknown[]))))
      .rows;
  }

  /**
   * The statement as a step of a trip (its prepared form with its parameters' text), so that it can travel with other
   * statements; undefined when it runs through `unprepared` instead (no parameters, not preparable, or the cache is
   * full). Prepares the statement the first time.
   */
  async step(sql: string, params: readonly unknown[], work: DbWork): Promise<Step | undefined> {
    if (!this.preparable(sql, params)) return undefined;
    const values = params.map(parameterText);
    return { prepared: await this.prepared(sql, work), values };
  }

  /** Whether `step` answers a step for this statement (else it runs through `unprepared`). */
  preparable(sql: string, params: readonly unknown[]): boolean {
    return params.length > 0 && PREPARABLE.test(sql) && (this.names.has(sql) || this.names.size < this.max);
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
      prepared = this.prepareNow(name, sql, work);
      this.names.set(sql, prepared);
      // A statement that cannot be prepared fails here as it would have failed unprepared; it is tried anew next time.
      prepared.catch(() => this.names.delete(sql));
    }
    return prepared;
  }

  private prepareNow(name: string, sql: string, work: DbWork): Promise<PreparedStatement> {
    return this.protocol.whenIdle(() => {
      const statement = timedSyncTrip(work, 1, () => this.protocol.prepare(name, sql));
      this.ready.set(sql, statement);
      return statement;
    });
  }
}
