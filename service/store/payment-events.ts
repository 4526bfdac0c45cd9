import type { PaymentStatus } from "./payment-records";
import type { NewEvent } from "./outbox";

// The events of payments, written by Payments' statements in their own transactions.

/** The payment columns a payment event is made of, with its batch's key (what Payments' statements return). */
export interface PaymentEventRow {
  subject: string;
  tx_id: string | null;
  network: string;
  amount: string;
  payer: string;
  status: PaymentStatus;
  settle_tx_hash: string | null;
  settlement: { transaction?: string } | string | null;
  release_reason: string | null;
  api_key_id: string | null;
}

/** RETURNING clause of a payments statement that feeds paymentEvent (the batch's key by a sub-select). */
export const PAYMENT_EVENT_COLUMNS =
  "subject, tx_id, network, amount, payer, status, settle_tx_hash, settlement, release_reason, (SELECT b.api_key_id FROM batches b WHERE b.tx_id = payments.tx_id) AS api_key_id";

/** A refund of a payment as its payer reads it (get-transaction-status `payments[].refund`, payment.refund_* events). */
export interface PaymentRefundView {
  status: "owed" | "sending" | "refunded";
  amount: string;
  reason: string;
  /** The refund's transaction on the payment's chain, once sent (the one mined once refunded). */
  transaction: string | null;
  refundedAt: string | null;
}

export type PaymentEventType = "payment.settled" | "payment.released" | "payment.refund_owed" | "payment.refunded";

/**
 * payment.settled / payment.released of a batch's payment, the payment as get-transaction-status shows it
 * (`payments[]`); payment.refund_owed / payment.refunded with its `refund`. Payments of paid reads belong to no batch
 * and no key: nobody could receive them, none is written.
 */
export function paymentEvent(
  type: PaymentEventType,
  row: PaymentEventRow,
  refund?: PaymentRefundView,
): NewEvent | undefined {
  if (!row.tx_id) return undefined;
  const settlement =
    typeof row.settlement === "string" ? (JSON.parse(row.settlement) as { transaction?: string }) : row.settlement;
  const settlementTransaction = settlement?.transaction ?? row.settle_tx_hash ?? null;
  const chainId = Number(row.network.split(":")[1]);
  return {
    type,
    apiKeyId: row.api_key_id,
    txId: row.tx_id,
    chainId: Number.isSafeInteger(chainId) ? chainId : null,
    hash: eventHash(type, settlementTransaction, refund),
    data: {
      txId: row.tx_id,
      payment: {
        status: row.status,
        amount: row.amount,
        network: row.network,
        payer: row.payer,
        step: row.subject.split(":")[0],
        settlementTransaction,
        ...(row.release_reason ? { releaseReason: row.release_reason } : {}),
        ...(refund ? { refund } : {}),
      },
    },
  };
}

/** The transaction an event is about: the settlement's of payment.settled, the refund's of payment.refunded. */
function eventHash(type: PaymentEventType, settlement: string | null, refund?: PaymentRefundView): string | null {
  const hash = type === "payment.settled" ? settlement : type === "payment.refunded" ? refund?.transaction : null;
  return hash && /^0x[0-9a-fA-F]{64}$/.test(hash) ? hash : null;
}
