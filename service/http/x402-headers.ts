import type { Request } from "express";
import { encodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";

/**
 * The x402 headers, read and written here only: the payment a client sends (X-PAYMENT, or PAYMENT-SIGNATURE) and the
 * settlement it gets back (PAYMENT-RESPONSE). The quote of a 402 (PAYMENT-REQUIRED) is written by error-mapping.ts.
 */

/** Headers a client may carry its payment in (API-SPEC Authentication); Express lower-cases header names. */
const PAYMENT_HEADERS = ["x-payment", "payment-signature"];

/** The payment header's value, as the payment core takes it (payments/x402.ts reserve). */
export function paymentHeaderOf(req: Request): string | undefined {
  for (const name of PAYMENT_HEADERS) {
    const value = req.header(name);
    if (value && value.trim()) return value.trim();
  }
  return undefined;
}

/** The PAYMENT-RESPONSE header of a settled payment (none without a settlement). */
export function paymentResponseHeaders(settlement: SettleResponse | undefined): Record<string, string> {
  return settlement ? { "PAYMENT-RESPONSE": encodePaymentResponseHeader(settlement) } : {};
}
