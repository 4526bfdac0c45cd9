import { randomBytes } from "node:crypto";
import type { PaymentPayload, SettleResponse, VerifyResponse } from "@x402/core/types";
import { SettlementError, type PaymentFacilitator } from "../../service/payments/payment-facilitator";
import type { PaymentRecord, PaymentStore } from "../../service/store/payments";
import { NO_SQL } from "./payment-stores";

/**
 * What one settlement does, as the in-process facilitator's outcomes are seen by the settler: mined with the transfer;
 * a failure in passing (the chain could not be asked), or of ours (the settlement wallet without gas), before anything
 * was sent; refused for good once sent (the authorization was used elsewhere); mined without settling the payment.
 */
export type SettlementScript = "settles" | "fails-in-passing" | "no-gas" | "refused" | "mined-without";

/**
 * A scripted PaymentFacilitator (service/payments/payment-facilitator.ts): it verifies every payment (unless told to
 * refuse) and settles as `script` says, one outcome per call (then "settles"). Like the in-process facilitator, a
 * settlement that reaches the chain is stored on the payment (markSettling) before its outcome is known. The
 * facilitator's own behaviour on a chain is tested by the x402 end-to-end suites; this one drives the payment core.
 */
export class FakeFacilitator implements PaymentFacilitator {
  readonly settlementAddress = "0x" + "5e".repeat(20);
  settlesInOperation = false;
  /** Outcomes of the next settle calls, in order. */
  script: SettlementScript[] = [];
  /** The payments settle was asked for, in order. */
  readonly asked: string[] = [];
  /** The payments whose stored settlement transaction was awaited again, in order. */
  readonly awaited: string[] = [];
  /** A verification refusal to answer (undefined: every payment is valid). */
  refuseVerification?: string;

  constructor(private readonly payments: PaymentStore) {}

  verify(payload: PaymentPayload): Promise<VerifyResponse> {
    const payer = (payload.payload as { authorization?: { from?: string } }).authorization?.from;
    return Promise.resolve(
      this.refuseVerification
        ? { isValid: false, invalidReason: this.refuseVerification, payer }
        : { isValid: true, payer },
    );
  }

  /** A settlement sent before (a restart, a reorg): its stored transaction's fate, as `script` says. */
  awaitSettlement(payment: PaymentRecord): Promise<SettleResponse> {
    this.awaited.push(payment.id);
    const outcome = this.script.shift() ?? "settles";
    if (outcome === "settles" && payment.settleTxHash)
      return Promise.resolve(this.settled(payment, payment.settleTxHash));
    if (outcome === "mined-without")
      return Promise.reject(new SettlementError("mined without the transfer", false, true));
    return Promise.reject(new SettlementError("the settlement transaction is not on chain", outcome === "refused"));
  }

  private settled(payment: PaymentRecord, transaction: string): SettleResponse {
    return { success: true, transaction, network: payment.network as SettleResponse["network"], payer: payment.payer };
  }

  async settle(payment: PaymentRecord): Promise<SettleResponse> {
    this.asked.push(payment.id);
    const outcome = this.script.shift() ?? "settles";
    if (outcome === "fails-in-passing") throw new SettlementError("the payment chain could not be asked", false);
    if (outcome === "no-gas") throw new Error("insufficient funds for gas * price + value");
    const hash = "0x" + randomBytes(32).toString("hex");
    await this.payments.markSettling(NO_SQL, payment.id, "0x02f8", hash);
    if (outcome === "refused")
      throw new SettlementError("execution reverted: FiatTokenV2: authorization is used", true);
    if (outcome === "mined-without") throw new SettlementError("mined without the transfer", false, true);
    return this.settled(payment, hash);
  }
}
