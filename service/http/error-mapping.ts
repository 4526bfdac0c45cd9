import { EngineError } from "../engine/errors";
import { x402Http } from "../payments/x402-modules";
import { ApiError, badRequest, unauthorized } from "../errors";
import { AlreadyPaid, PaymentNotSettled, PaymentRequired, X402Unavailable } from "../payments/payment-errors";

/** One mapping per layer whose errors reach a client, each answering undefined for an error that is not its own. */
const MAPPINGS: ((error: unknown) => ApiError | undefined)[] = [
  // Already an answer of the catalogue, thrown by a layer that may name HTTP statuses (methods, domains, use cases).
  (error) => (error instanceof ApiError ? error : undefined),
  // The engine's refusals.
  engineError,
  // The payment core's refusals.
  paymentError,
];

/**
 * The errors of the layers below HTTP, as answers of the error catalogue (error-codes.ts): the one place that gives
 * them a status, a code and headers. Undefined for an error that is not theirs (the error handler then reads it as an
 * error of the HTTP layer itself, or a bug).
 */
export function toApiError(error: unknown): ApiError | undefined {
  for (const map of MAPPINGS) {
    const mapped = map(error);
    if (mapped) return mapped;
  }
  return undefined;
}

/** Each kind of the engine's errors is one code of the catalogue; message and details as thrown. */
function engineError(error: unknown): ApiError | undefined {
  if (!(error instanceof EngineError)) return undefined;
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

/** The payment core's refusals. */
function paymentError(error: unknown): ApiError | undefined {
  if (error instanceof PaymentRequired) {
    return new ApiError("PAYMENT_REQUIRED", error.message, error.details, {
      "PAYMENT-REQUIRED": x402Http().encodePaymentRequiredHeader(error.quote),
    });
  }
  if (error instanceof AlreadyPaid) return new ApiError("ALREADY_PAID", error.message, { subject: error.subject });
  if (error instanceof PaymentNotSettled) {
    return new ApiError(
      "PAYMENT_NOT_SETTLED",
      error.message,
      { paymentId: error.paymentId, settlementInFlight: error.settlementInFlight },
      { "Retry-After": "5" },
    );
  }
  if (error instanceof X402Unavailable)
    return unauthorized(error.message, error.chainId === undefined ? undefined : { chainId: error.chainId });
  return undefined;
}
