import { EngineError } from "../engine/errors";
import { ApiError, badRequest } from "../errors";

/**
 * The one place where the errors of the layers below are given their answer in the error catalogue: an ApiError as
 * it is, a known error of a lower layer as the ApiError its kind maps to, anything else undefined (the error handler
 * then reads it as an error of the HTTP layer itself, or a bug).
 */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof EngineError) return engineAnswer(error);
  return undefined;
}

// The engine's errors (service/engine/errors.ts): each kind is one code of the catalogue; message and details as thrown.

function engineAnswer(error: EngineError): ApiError {
  const { message, details } = error;
  switch (error.kind) {
    // Invalid input has one shape (the field at fault and its issues), as for input the HTTP layer refuses itself.
    case "invalid":
      return badRequest(message, details);
    case "not-found":
      return new ApiError("NOT_FOUND", message, details);
    case "conflict":
      return new ApiError("CONFLICT", message, details);
    case "forbidden":
      return new ApiError("FORBIDDEN", message, details);
    case "would-revert":
      return new ApiError("PREFLIGHT_FAILED", message, details);
    case "mismatch":
      return new ApiError("TRANSACTION_MISMATCH", message, details);
    case "bad-signature":
      return new ApiError("INVALID_SIGNATURE", message, details);
    case "expired":
      return new ApiError("BATCH_EXPIRED", message, details);
    case "underpriced":
      return new ApiError("REPLACEMENT_UNDERPRICED", message, details);
    case "unavailable":
      return new ApiError("UNAVAILABLE", message, details);
  }
}
