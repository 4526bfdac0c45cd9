import type { PGlite } from "@electric-sql/pglite";

/** A result column as the engine describes it. */
interface Column {
  name: string;
  dataTypeID: number;
}

/** A statement the engine holds prepared under `name` (a protocol-level Parse), with the columns its rows have. */
export interface PreparedStatement {
  readonly name: string;
  readonly columns: readonly Column[];
}

/**
 * One statement of a trip: a prepared statement with its parameters in PostgreSQL's text form (null: SQL NULL), or
 * SQL text run as it is, without parameters (BEGIN, COMMIT).
 */
export type Step = { prepared: PreparedStatement; values: readonly (string | null)[] } | { text: string };

/** What one step answered: its rows, and the command tag's first word (INSERT, COMMIT, ROLLBACK…). */
export interface StepResult {
  rows: unknown[];
  command?: string;
}

/** PGlite's wire-protocol message builders (its exported `protocol.serialize`). */
type Serialize = (typeof import("@electric-sql/pglite"))["protocol"]["serialize"];
/** A backend message as PGlite parses it: what this module reads of them. */
interface Message {
  name: string;
  fields?: unknown[];
  text?: string;
}

/**
 * Trips into the embedded engine over the extended query protocol, as a PostgreSQL driver talks to a server: a prepared
 * statement runs as Bind + Execute of its name with its parameters as values (no SQL text to parse, no literals to
 * quote), and a trip's statements share one buffer and one Sync, so the engine runs them in order in one call. A
 * statement that fails makes the engine skip the rest up to the Sync: the statements after it in that trip do not run,
 * and the error is thrown (the transaction, if one is open, is left aborted for the caller to roll back).
 *
 * Against EXECUTE of the same prepared statement in PGlite's `exec` (the simple protocol, parameters as quoted literals),
 * 2,000 calls each: a lookup by key 0.043 vs 0.056 ms, an update of a JSON column 0.165 vs 0.198 ms; in the lanes bench
 * the difference is within the machine's noise (bench/results/embedded-db-time.md, 2026-12-06).
 */
export class PgliteProtocol {
  constructor(
    private readonly pg: PGlite,
    private readonly serialize: Serialize,
  ) {}

  /** Prepares `sql` under `name` and learns its result's columns (one trip). */
  async prepare(name: string, sql: string): Promise<PreparedStatement> {
    const s = this.serialize;
    const messages = await this.exchange([s.parse({ name, text: sql }), s.describe({ type: "S", name }), s.sync()]);
    const description = messages.find((m) => m.name === "rowDescription");
    return { name, columns: columnsOf(description) };
  }

  /** Runs `steps` in one trip; answers each one's result, in order. */
  async run(steps: readonly Step[]): Promise<StepResult[]> {
    const s = this.serialize;
    const parts: Uint8Array[] = [];
    for (const step of steps) {
      if ("text" in step)
        parts.push(s.parse({ text: step.text }), s.bind({}), s.describe({ type: "P" }), s.execute({}));
      else parts.push(s.bind({ statement: step.prepared.name, values: [...step.values] }), s.execute({}));
    }
    parts.push(s.sync());
    const messages = await this.exchange(parts);
    return this.results(steps, messages);
  }

  /** Steps' results out of the engine's answer: rows between each step's start and its command's completion. */
  private results(steps: readonly Step[], messages: Message[]): StepResult[] {
    const results: StepResult[] = [];
    const parsers = this.pg.parsers;
    const columnsOfStep = (i: number) => {
      const step = steps[i];
      return step && "prepared" in step ? step.prepared.columns : [];
    };
    let columns = columnsOfStep(0);
    let rows: unknown[] = [];
    for (const message of messages) {
      if (message.name === "rowDescription") columns = columnsOf(message);
      else if (message.name === "dataRow") {
        const row: Record<string, unknown> = {};
        const fields = message.fields as (string | null)[];
        for (let i = 0; i < columns.length; i++) {
          const value = fields[i];
          const parse = parsers[columns[i].dataTypeID];
          row[columns[i].name] = value === null ? null : parse ? parse(value, columns[i].dataTypeID) : value;
        }
        rows.push(row);
      } else if (message.name === "commandComplete" || message.name === "emptyQuery") {
        results.push({ rows, command: message.text?.split(" ")[0] });
        rows = [];
        columns = columnsOfStep(results.length);
      }
    }
    return results;
  }

  /**
   * One call into the engine with these messages; throws the first error it answered. Under PGlite's own query lock,
   * which its `query` and `exec` take: one exchange at a time, whoever asks.
   */
  private exchange(parts: Uint8Array[]): Promise<Message[]> {
    const message = concatenated(parts);
    return this.pg._runExclusiveQuery(
      async () => (await this.pg.execProtocolStream(message, { syncToFs: false })) as Message[],
    );
  }
}

function columnsOf(description: Message | undefined): Column[] {
  const fields = (description?.fields ?? []) as { name: string; dataTypeID: number }[];
  return fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
}

function concatenated(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
