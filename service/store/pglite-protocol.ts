import type { PGlite } from "@electric-sql/pglite";
import { encodeTrip } from "./pglite-request";
import { readAnswer, type Column, type StepResult } from "./pglite-answer";

export type { StepResult } from "./pglite-answer";

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

/** PGlite's wire-protocol module (its exported `protocol`): message builders and the backend messages' parser. */
export type Wire = (typeof import("@electric-sql/pglite"))["protocol"];

/** The size of the buffer a trip's answer is copied into, kept between trips. */
const ANSWER_BUFFER_KEPT = 64 * 1024;

/**
 * Trips into the embedded engine over the extended query protocol, as a PostgreSQL driver talks to a server: a prepared
 * statement runs as Bind + Execute of its name with its parameters as values (no SQL text to parse, no literals to
 * quote), and a trip's statements share one buffer (written by encodeTrip) and one Sync, so the engine runs them in
 * order in one call. A statement that fails makes the engine skip the rest up to the Sync: the statements after it in
 * that trip do not run, and the error is thrown (the transaction, if one is open, is left aborted for the caller to
 * roll back).
 *
 * A trip runs synchronously: the engine is called on this thread and its answer parsed here, with no promise between
 * the call and the answer, so nothing else of the process runs meanwhile and a trip's time is the engine's (PGlite's
 * `execProtocolStream` answers after its query lock and several promise turns, during which other requests' code ran
 * and was counted as the database's: bench/results/embedded-db-time.md). The caller runs one trip or transaction at a
 * time (PgliteDb's turns); PGlite's own calls (`query`, `exec`, `listen`), which talk to the engine over several of
 * its calls, go through `viaPglite`, and a trip waits until none is under way (`whenIdle`).
 *
 * Against EXECUTE of the same prepared statement in PGlite's `exec` (the simple protocol, parameters as quoted literals),
 * 2,000 calls each: a lookup by key 0.043 vs 0.056 ms, an update of a JSON column 0.165 vs 0.198 ms.
 */
export class PgliteProtocol {
  /** PGlite's own calls under way (see viaPglite), and the trips waiting for them to end. */
  private pgliteCalls = 0;
  private readonly waitingForPglite: (() => void)[] = [];
  /** Where the engine's answer to a trip is copied (grown as needed, reused: a trip is read before the next one). */
  private answerBuffer = Buffer.allocUnsafe(ANSWER_BUFFER_KEPT);

  /** `onNotification`: a NOTIFY the engine delivered in a trip's answer (a committed transaction's). */
  constructor(
    private readonly pg: PGlite,
    private readonly wire: Wire,
    private readonly onNotification: (channel: string) => void = () => undefined,
  ) {}

  /** Prepares `sql` under `name` and learns its result's columns (one trip). */
  prepare(name: string, sql: string): PreparedStatement {
    this.assertIdle();
    const s = this.wire.serialize;
    const message = Buffer.concat([s.parse({ name, text: sql }), s.describe({ type: "S", name }), s.sync()]);
    const answer = this.exchange(message, () => []);
    return { name, columns: answer.described ?? [] };
  }

  /** Runs `steps` in one trip; answers each one's result, in order. */
  run(steps: readonly Step[]): StepResult[] {
    this.assertIdle();
    return this.exchange(encodeTrip(steps), (i) => {
      const step = steps[i];
      return step && "prepared" in step ? step.prepared.columns : [];
    }).results;
  }

  /**
   * `call` through PGlite's own API (query, exec, listen): it talks to the engine over several of PGlite's calls,
   * between which no trip of this class may run (it would take the unnamed statement or portal that call is using).
   */
  async viaPglite<T>(call: (pg: PGlite) => Promise<T>): Promise<T> {
    this.pgliteCalls++;
    try {
      return await call(this.pg);
    } finally {
      if (--this.pgliteCalls === 0) this.waitingForPglite.splice(0).forEach((resume) => resume());
    }
  }

  /**
   * Runs `trips` (this class's `run`/`prepare` calls) once none of PGlite's own calls is under way: at once in the
   * common case, with no promise turn first.
   */
  async whenIdle<T>(trips: () => T): Promise<T> {
    while (this.pgliteCalls) await new Promise<void>((resume) => this.waitingForPglite.push(resume));
    return trips();
  }

  private assertIdle() {
    if (this.pgliteCalls) throw new Error("a trip into the embedded database while one of PGlite's own calls runs");
  }

  /**
   * One call into the engine with these messages, answered synchronously: its answer, read (readAnswer); throws the
   * first error it answered. PGlite's `execProtocolRawStream` hands the answer over while it runs (with
   * `syncToFs: false` it awaits nothing); an answer without its closing ReadyForQuery means the call failed (its reason
   * is in the promise).
   */
  private exchange(message: Uint8Array, columnsOf: (i: number) => readonly Column[]) {
    let length = 0;
    const call = this.pg.execProtocolRawStream(message, {
      syncToFs: false,
      // A view into the engine's memory, valid during this callback only: copied into this class's buffer.
      onRawData: (chunk) => {
        if (length + chunk.length > this.answerBuffer.length) {
          const grown = Buffer.allocUnsafe(Math.max(2 * this.answerBuffer.length, length + chunk.length));
          this.answerBuffer.copy(grown, 0, 0, length);
          this.answerBuffer = grown;
        }
        this.answerBuffer.set(chunk, length);
        length += chunk.length;
      },
    });
    const bytes = this.answerBuffer.subarray(0, length);
    // A large answer (a console page) leaves no large buffer behind.
    if (this.answerBuffer.length > ANSWER_BUFFER_KEPT) this.answerBuffer = Buffer.allocUnsafe(ANSWER_BUFFER_KEPT);
    const answer = readAnswer(bytes, columnsOf, this.pg.parsers);
    if (!answer.complete) {
      const failed = new Error("the embedded database's engine did not answer (the reason is this error's cause)");
      // The engine's own error rejects PGlite's promise, a turn later: it becomes the cause by the time this is read.
      call.catch((reason: unknown) => (failed.cause = reason));
      throw failed;
    }
    call.catch(() => undefined);
    for (const channel of answer.notified) this.onNotification(channel);
    if (answer.failed) throw this.firstError(bytes);
    return answer;
  }

  /** The first error in an answer, as PGlite's parser builds it (a DatabaseError: code, detail…), as PGlite throws it. */
  private firstError(bytes: Uint8Array): Error {
    let error: Error | undefined;
    new this.wire.Parser().parse(bytes, (message) => {
      if (message instanceof Error) error ??= message;
    });
    return error ?? new Error("the embedded database answered an error it did not describe");
  }
}
