import type { PaymentRequired as PaymentRequiredBody } from "@x402/core/types";

/**
 * The payment core's refusals, as facts and not as HTTP answers: the http layer (http/error-mapping.ts) gives each its
 * status, its code in the catalogue and its headers (the quote in PAYMENT-REQUIRED, Retry-After).
 */

/** The call must be paid, or its payment does not pay it: `quote` is what the client may pay, `message` why not. */
export class PaymentRequired extends Error {
  override name = "PaymentRequired";

  constructor(
    message: string,
    readonly quote: PaymentRequiredBody,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The subject (a send, a prepare share) already has a payment. */
export class AlreadyPaid extends Error {
  override name = "AlreadyPaid";

  constructor(readonly subject: string) {
    super(`${subject} is already paid for`);
  }
}

/** A paid answer withheld: its payment could not be settled in time (a failure of ours); the client tries again. */
export class PaymentNotSettled extends Error {
  override name = "PaymentNotSettled";

  constructor(
    message: string,
    readonly paymentId: string,
    readonly settlementInFlight: boolean,
  ) {
    super(message);
  }
}

/** x402 cannot pay this call: disabled on the deployment, or on the chain the call acts on (`chainId`). */
export class X402Unavailable extends Error {
  override name = "X402Unavailable";

  constructor(
    message: string,
    readonly chainId?: number,
  ) {
    super(message);
  }
}
