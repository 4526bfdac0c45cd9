/** A result column as the engine describes it. */
export interface Column {
  name: string;
  dataTypeID: number;
}

/** What one statement of a trip answered: its rows, and the command tag's first word (INSERT, COMMIT, ROLLBACK…). */
export interface StepResult {
  rows: unknown[];
  command?: string;
}

/** The engine's answer to one trip, read (see readAnswer). */
export interface Answer {
  results: StepResult[];
  /** The columns of the last RowDescription (what a Describe of a prepared statement answers). */
  described?: Column[];
  /** Channels a committed transaction notified, in order. */
  notified: string[];
  /** The answer held an ErrorResponse: read it with a full parser (the rare path) for its fields. */
  failed: boolean;
  /** It ended with ReadyForQuery: the engine answered the whole trip. */
  complete: boolean;
}

/** Text of a column's value → its JavaScript value (PGlite's parsers, by type OID). */
type Parsers = Record<number, ((text: string, typeId: number) => unknown) | undefined>;

/**
 * Reads the engine's answer to one trip straight into each statement's rows: the messages a trip of prepared
 * statements gets back (RowDescription, DataRow, CommandComplete, EmptyQueryResponse, NotificationResponse,
 * ReadyForQuery; the rest skipped), in one pass over the bytes, with no message objects in between. `columnsOf(i)`:
 * the columns the i-th statement's rows have when no RowDescription precedes them (a prepared statement's, learnt once).
 * An answer with an error is only marked `failed`: PgliteProtocol reads it again with PGlite's parser, which builds the
 * error PGlite throws.
 *
 * It replaced PGlite's generic parser on this path, which took ~0.4 ms of a paid operation's ~22 KB of answers, and
 * the rows built from its messages ~0.2 ms more (bench/results/embedded-db-time.md).
 */
export function readAnswer(bytes: Buffer, columnsOf: (i: number) => readonly Column[], parsers: Parsers): Answer {
  const answer: Answer = { results: [], notified: [], failed: false, complete: false };
  let columns = columnsOf(0);
  let rows: unknown[] = [];
  let at = 0;
  while (at + 5 <= bytes.length) {
    const type = bytes[at];
    const end = at + 1 + bytes.readInt32BE(at + 1);
    let p = at + 5;
    switch (type) {
      case 0x44 /* D: DataRow */: {
        const count = bytes.readInt16BE(p);
        p += 2;
        const row: Record<string, unknown> = {};
        for (let i = 0; i < count; i++) {
          const length = bytes.readInt32BE(p);
          p += 4;
          const column = columns[i];
          if (length < 0) {
            if (column) row[column.name] = null;
            continue;
          }
          if (column) {
            const text = bytes.toString("utf8", p, p + length);
            const parse = parsers[column.dataTypeID];
            row[column.name] = parse ? parse(text, column.dataTypeID) : text;
          }
          p += length;
        }
        rows.push(row);
        break;
      }
      case 0x54 /* T: RowDescription */: {
        const count = bytes.readInt16BE(p);
        p += 2;
        const described: Column[] = [];
        for (let i = 0; i < count; i++) {
          const nameEnd = bytes.indexOf(0, p);
          const name = bytes.toString("utf8", p, nameEnd);
          p = nameEnd + 1 + 4 + 2; // its table's OID, its column number
          described.push({ name, dataTypeID: bytes.readInt32BE(p) });
          p += 4 + 2 + 4 + 2; // the type's OID, size, modifier; the format
        }
        columns = answer.described = described;
        break;
      }
      case 0x43 /* C: CommandComplete */:
      case 0x49 /* I: EmptyQueryResponse */: {
        const command = type === 0x43 ? bytes.toString("utf8", p, end - 1).split(" ")[0] : undefined;
        answer.results.push({ rows, command });
        rows = [];
        columns = columnsOf(answer.results.length);
        break;
      }
      case 0x41 /* A: NotificationResponse */: {
        const channelEnd = bytes.indexOf(0, p + 4);
        answer.notified.push(bytes.toString("utf8", p + 4, channelEnd));
        break;
      }
      case 0x45 /* E: ErrorResponse */:
        answer.failed = true;
        break;
      case 0x5a /* Z: ReadyForQuery */:
        answer.complete = end === bytes.length;
        break;
    }
    at = end;
  }
  return answer;
}
