import { encodePaymentRequiredHeader } from "@x402/core/http";
import { ApiError, unauthorized } from "../errors";
import { AlreadyPaid, PaymentNotSettled, PaymentRequired, X402Unavailable } from "../payments/payment-errors";

/** One mapping per layer whose errors reach a client, each answering undefined for an error that is not its own. */
const MAPPINGS: ((error: unknown) => ApiError | undefined)[] = [
  // The payment core (payments/).
  paymentError,
];

/**
 * The errors of the layers below HTTP, as answers of the error catalogue (error-codes.ts): the one place that gives
 * them a status, a code and headers. Undefined for an error that is not theirs (app.ts maps the rest).
 */
export function toApiError(error: unknown): ApiError | undefined {
  for (const map of MAPPINGS) {
    const mapped = map(error);
    if (mapped) return mapped;
  }
  return undefined;
}

/** The payment core's refusals (payments/payment-errors.ts). */
function paymentError(error: unknown): ApiError | undefined {
  if (error instanceof PaymentRequired) {
    return new ApiError("PAYMENT_REQUIRED", error.message, error.details, { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(error.quote) });
  }
  if (error instanceof AlreadyPaid) return new ApiError("ALREADY_PAID", error.message, { subject: error.subject });
  if (error instanceof PaymentNotSettled) {
    return new ApiError("PAYMENT_NOT_SETTLED", error.message, { paymentId: error.paymentId, settlementInFlight: error.settlementInFlight }, { "Retry-After": "5" });
  }
  if (error instanceof X402Unavailable) return unauthorized(error.message, error.chainId === undefined ? undefined : { chainId: error.chainId });
  return undefined;
}
