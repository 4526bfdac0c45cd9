/**
 * A trip's messages to the embedded engine, written in one pass into one buffer (the frontend messages of PostgreSQL's
 * extended query protocol). PGlite's own serializer builds each message in a buffer of its own, which a trip then
 * joins: about 0.05 ms a trip, a tenth of the service's time in the database per paid operation
 * (bench/results/embedded-db-time.md).
 *
 * A prepared statement's step: Bind (the unnamed portal, the statement's name, its parameters as text, NULL as length
 * -1; every result column as text) and Execute. The bytes are those PGlite's serializer writes
 * (test/service/pglite-request.test.ts holds them to it). A step of SQL text without parameters (BEGIN, COMMIT): Parse into the
 * unnamed statement, Bind, Describe (its result's columns) and Execute. The trip ends with Sync.
 */

/** One step of a trip (see PgliteProtocol's Step): the name of a prepared statement with its parameters, or SQL text. */
export type RequestStep = { prepared: { name: string }; values: readonly (string | null)[] } | { text: string };

const SYNC = 5; // 'S' and the length 4
const EXECUTE = 10; // 'E', length, "" and a row limit of 0
const DESCRIBE_PORTAL = 7; // 'D', length, 'P' and ""

/** The bytes of `steps` and the Sync that closes them. */
export function encodeTrip(steps: readonly RequestStep[]): Buffer {
  let size = SYNC;
  for (const step of steps) {
    if ("text" in step) size += parseSize(step.text) + bindSize("", []) + DESCRIBE_PORTAL + EXECUTE;
    else size += bindSize(step.prepared.name, step.values) + EXECUTE;
  }
  const out = new Writer(Buffer.allocUnsafe(size));
  for (const step of steps) {
    if ("text" in step) {
      writeParse(out, step.text);
      writeBind(out, "", []);
      out.byte(0x44).int32(6).byte(0x50).byte(0); // Describe the unnamed portal
    } else {
      writeBind(out, step.prepared.name, step.values);
    }
    out.byte(0x45).int32(9).byte(0).int32(0); // Execute the unnamed portal, all its rows
  }
  out.byte(0x53).int32(4); // Sync
  if (out.offset !== size) throw new Error(`a trip's messages took ${out.offset} bytes, not the ${size} computed`);
  return out.buffer;
}

function parseSize(text: string): number {
  return 1 + 4 + 1 + Buffer.byteLength(text) + 1 + 2;
}

function writeParse(out: Writer, text: string) {
  out.byte(0x50).int32(parseSize(text) - 1);
  out.byte(0); // the unnamed statement
  out.cstring(text);
  out.int16(0); // no parameter types given
}

function bindSize(statement: string, values: readonly (string | null)[]): number {
  let size = 1 + 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 + 2;
  for (const value of values) size += 2 + 4 + (value === null ? 0 : Buffer.byteLength(value));
  return size;
}

function writeBind(out: Writer, statement: string, values: readonly (string | null)[]) {
  out.byte(0x42).int32(bindSize(statement, values) - 1);
  out.byte(0); // the unnamed portal
  out.cstring(statement);
  out.int16(values.length); // each parameter's format: text (as PGlite's serializer writes it)
  for (let i = 0; i < values.length; i++) out.int16(0);
  out.int16(values.length);
  for (const value of values) {
    if (value === null) out.int32(-1);
    else out.int32(Buffer.byteLength(value)).string(value);
  }
  out.int16(0); // every result column in text form
}

/** Writes big-endian integers and UTF-8 text into a buffer sized beforehand. */
class Writer {
  offset = 0;
  constructor(readonly buffer: Buffer) {}
  byte(value: number): this {
    this.buffer[this.offset++] = value;
    return this;
  }
  int16(value: number): this {
    this.offset = this.buffer.writeInt16BE(value, this.offset);
    return this;
  }
  int32(value: number): this {
    this.offset = this.buffer.writeInt32BE(value, this.offset);
    return this;
  }
  string(value: string): this {
    this.offset += this.buffer.write(value, this.offset, "utf8");
    return this;
  }
  cstring(value: string): this {
    return this.string(value).byte(0);
  }
}
