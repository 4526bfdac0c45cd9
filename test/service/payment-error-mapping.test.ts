import { expect } from "chai";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { answerOf as toApiError } from "../../service/app";
import { toApiError as lowerLayerError } from "../../service/http/error-mapping";
import {
  AlreadyPaid,
  PaymentNotSettled,
  PaymentRequired,
  X402Unavailable,
} from "../../service/payments/payment-errors";
import { X402_DISABLED_ON_CHAIN } from "../../service/payments/x402";

/** The payment core's refusals as the client sees them: the catalogue's code and status, the x402 headers. */
describe("payment refusals mapped to the error catalogue (service/http/error-mapping.ts)", () => {
  const accepts = [
    {
      scheme: "exact",
      network: "eip155:84532",
      asset: "0x0000000000000000000000000000000000000001",
      amount: "10000",
      payTo: "0x0000000000000000000000000000000000000002",
      maxTimeoutSeconds: 60,
      extra: {},
    },
  ] as PaymentRequirements[];
  const quote = {
    x402Version: 2,
    error: "expired",
    resource: { url: "http://x/send-transactions", description: "d", mimeType: "application/json" },
    accepts,
  };

  it("a payment required is a 402 whose PAYMENT-REQUIRED header is the quote, and whose body says why", () => {
    const error = toApiError(new PaymentRequired("Payment Required: expired", quote, { price: "$0.01" }));
    expect(error).to.include({ status: 402, code: "PAYMENT_REQUIRED", message: "Payment Required: expired" });
    expect(error.details).to.deep.equal({ price: "$0.01" });
    expect(decodePaymentRequiredHeader(error.headers!["PAYMENT-REQUIRED"])).to.deep.equal(quote);
  });

  it("already paid, not settled in time, x402 unavailable: 409, 503 with Retry-After, 401 naming the chain", () => {
    expect(toApiError(new AlreadyPaid("send:0xabc"))).to.deep.include({
      status: 409,
      code: "ALREADY_PAID",
      message: "send:0xabc is already paid for",
      details: { subject: "send:0xabc" },
    });
    const late = toApiError(new PaymentNotSettled("not now", "p1", true));
    expect(late).to.deep.include({
      status: 503,
      code: "PAYMENT_NOT_SETTLED",
      details: { paymentId: "p1", settlementInFlight: true },
      headers: { "Retry-After": "5" },
    });
    expect(toApiError(new X402Unavailable(X402_DISABLED_ON_CHAIN, 11155111))).to.deep.include({
      status: 401,
      code: "UNAUTHORIZED",
      details: { chainId: 11155111 },
    });
    expect(toApiError(new X402Unavailable("off")).details).to.equal(undefined);
  });

  it("an error of no lower layer is left to the app (undefined here)", () => {
    expect(lowerLayerError(new Error("boom"))).to.equal(undefined);
    expect(toApiError(new Error("boom"))).to.include({ status: 500, code: "INTERNAL_ERROR" });
  });
});
