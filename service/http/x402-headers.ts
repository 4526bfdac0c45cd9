import type { SettleResponse } from "@x402/core/types";
import { x402Http } from "../payments/x402-modules";
import type { RequestHeaders } from "../wire/request";

/**
 * The x402 headers, read and written here only: the payment a client sends (X-PAYMENT, or PAYMENT-SIGNATURE) and the
 * settlement it gets back (PAYMENT-RESPONSE). The quote of a 402 (PAYMENT-REQUIRED) is written by error-mapping.ts.
 */

/** Headers a client may carry its payment in (docs/wire-conventions.md, Transport); header names match in any case. */
const PAYMENT_HEADERS = ["x-payment", "payment-signature"];

/** The payment header's value, as the payment core's reserve takes it. */
export function paymentHeaderOf(req: RequestHeaders): string | undefined {
  for (const name of PAYMENT_HEADERS) {
    const value = req.header(name);
    if (value && value.trim()) return value.trim();
  }
  return undefined;
}

/** The PAYMENT-RESPONSE header of a settled payment (none without a settlement). */
export function paymentResponseHeaders(settlement: SettleResponse | undefined): Record<string, string> {
  return settlement ? { "PAYMENT-RESPONSE": x402Http().encodePaymentResponseHeader(settlement) } : {};
}
