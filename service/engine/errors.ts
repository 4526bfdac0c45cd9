/**
 * What the engine refuses, in its own terms: a kind and the facts behind it, never an HTTP status. The http layer
 * (http/error-mapping.ts) gives each kind its code in the error catalogue; the engine knows nothing of the wire.
 */
export type EngineErrorKind =
  /** The request names something the engine cannot take (a field, an index, a chain without a relayer). */
  | "invalid"
  /** No such batch. */
  | "not-found"
  /** The batch or transaction is not in a state that allows this (already sent, pending, mined, changed meanwhile). */
  | "conflict"
  /** Another caller's batch. */
  | "forbidden"
  /** A check against the chain found that the transaction would revert. */
  | "would-revert"
  /** A signed or reported transaction differs from the prepared one. */
  | "mismatch"
  /** A signature that no key made, or not the prepared signer's. */
  | "bad-signature"
  /** A prepared batch that was never sent in time. */
  | "expired"
  /** A replacement that does not raise the fees enough. */
  | "underpriced"
  /** The engine cannot take this now (no relayer key takes new operations). */
  | "unavailable";

export class EngineError extends Error {
  constructor(
    readonly kind: EngineErrorKind,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

type Details = Record<string, unknown>;
export const invalid = (message: string, details?: Details) => new EngineError("invalid", message, details);
export const noSuchBatch = (message: string, details?: Details) => new EngineError("not-found", message, details);
export const conflicting = (message: string, details?: Details) => new EngineError("conflict", message, details);
export const notYours = (message: string, details?: Details) => new EngineError("forbidden", message, details);
export const wouldRevert = (message: string, details?: Details) => new EngineError("would-revert", message, details);
export const mismatched = (message: string, details?: Details) => new EngineError("mismatch", message, details);
export const badSignature = (message: string, details?: Details) => new EngineError("bad-signature", message, details);
export const expired = (message: string, details?: Details) => new EngineError("expired", message, details);
export const underpriced = (message: string, details?: Details) => new EngineError("underpriced", message, details);
export const notNow = (message: string, details?: Details) => new EngineError("unavailable", message, details);
