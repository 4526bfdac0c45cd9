import { timingSafeEqual } from "node:crypto";
import type { Sealer } from "../crypto/sealed";

/**
 * The capability to stream a batch prepared without an API key (GET /events?txId=…&streamToken=…): answered by its
 * prepare, to its preparer only. It is a keyed hash of the txId under the data key, so it is never stored, and a txId
 * read off the chain (get-transaction-status maps a hash to its txId) is not enough to open streams.
 */
export function streamTokenOf(sealer: Sealer, txId: string): string {
  return Buffer.from(sealer.keyedHash(txId.toLowerCase(), "event-stream"), "hex").toString("base64url");
}

/** Whether `given` is the stream token of `txId` (compared in constant time). */
export function isStreamToken(sealer: Sealer, txId: string, given: string | undefined): boolean {
  if (!given) return false;
  const expected = Buffer.from(streamTokenOf(sealer, txId));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
