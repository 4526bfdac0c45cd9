/**
 * An answer's JSON body already serialized: for answers that never change once made (a final batch's status), kept
 * and sent again as they are rather than rebuilt and serialized on every request. The router sends the text as
 * `res.json` would have sent the value (same bytes, same Content-Type).
 */
export class JsonText {
  constructor(readonly text: string) {}

  static of(value: unknown): JsonText {
    return new JsonText(JSON.stringify(value));
  }
}
