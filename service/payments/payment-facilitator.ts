import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import type { PaymentRecord } from "../store/payments";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import type { Logger } from "../logger";
import { x402Server, type X402Server } from "./x402-modules";

/**
 * What the payment core asks of a facilitator (PaymentFacilitator), how a settlement fails (SettlementError), and the
 * external facilitator. The in-process one, with the service's settlement key, is payments/facilitator.ts.
 */

/** What the in-process facilitator uses. */
export type FacilitatorServices = Pick<Stores, "db" | "payments" | "walletLocks" | "walletNonces"> & {
  config: Config;
  logger: Logger;
};

/**
 * A settlement that failed: `final` when this settlement can no longer succeed (reverted, refused by the node, its
 * authorization expired or used elsewhere), else in passing (then it is tried again); `minedWithout` when its
 * transaction was mined without settling the payment. Whether the payment is released is decided by whether the
 * payer's authorization can still be used (payments/settler.ts): a refusal of ours (the settlement wallet without gas)
 * keeps it owed.
 */
export class SettlementError extends Error {
  constructor(
    message: string,
    readonly final: boolean,
    readonly minedWithout = false,
  ) {
    super(message);
  }
}

/** Verifies and settles x402 payments: in-process with the service's settlement key, or an external facilitator. */
export interface PaymentFacilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payment: PaymentRecord): Promise<SettleResponse>;
  /**
   * A settlement whose transaction was already sent: its fate on chain, once confirmed. Throws SettlementError (final
   * or not). In-process only: an external facilitator keeps its own transactions.
   */
  awaitSettlement?(payment: PaymentRecord): Promise<SettleResponse>;
  /** Address that signs settlements (in-process only). */
  readonly settlementAddress?: string;
  /**
   * Whether the service may settle a payment itself inside the relayed operation's transaction (the relayer's EIP-7702
   * delegate calls transferWithAuthorization): true for the in-process facilitator; an external facilitator settles
   * every payment itself.
   */
  readonly settlesInOperation?: boolean;
  /** Fills gaps in the settlement wallet's nonces and rewinds a counter that drifted (in-process only). */
  healNonces?(): Promise<void>;
}

export class ExternalFacilitator implements PaymentFacilitator {
  private readonly client: InstanceType<X402Server["HTTPFacilitatorClient"]>;
  constructor(url: string) {
    this.client = new (x402Server().HTTPFacilitatorClient)({ url });
  }
  verify(payload: PaymentPayload, requirements: PaymentRequirements) {
    return this.client.verify(payload, requirements);
  }
  settle(payment: PaymentRecord) {
    return this.client.settle(payment.payload, payment.requirements);
  }
}
