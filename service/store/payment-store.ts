import type { Queryable } from "./db";
import type { PaymentRecord } from "./payment-records";

/** What a settlement answered (x402's SettleResponse, or what a receipt showed), kept on the settled payment. */
export type Settlement = { transaction?: string; [field: string]: unknown };

/** What a new reservation gives: the payment as verified, before the store assigns its id and state. */
export type NewPayment = Omit<
  PaymentRecord,
  | "id"
  | "status"
  | "settleTxRaw"
  | "settleTxHash"
  | "settleTxReplaced"
  | "settlement"
  | "releaseReason"
  | "settleInOperation"
>;

/**
 * The payments' state machine as the payment core writes it (the settler, the x402 gate, the runner's port):
 * reserved → settling → settled, or released. Two implementations pass one contract (test/contracts-of/): the
 * database's (payments.ts) and an in-memory one for unit tests (test/fakes/). Methods taking `q` write inside the
 * caller's database transaction.
 */
export interface PaymentStore {
  reserve(p: NewPayment, balance?: bigint): Promise<PaymentRecord>;
  openAmount(payer: string, asset: string, q?: Queryable): Promise<bigint>;
  get(id: string, q?: Queryable): Promise<PaymentRecord | undefined>;
  forBatch(txId: string, q?: Queryable): Promise<PaymentRecord[]>;
  unfinished(quietForMs?: number): Promise<PaymentRecord[]>;
  claimForSettlement(id: string): Promise<boolean>;
  bindToOperation(q: Queryable, id: string): Promise<boolean>;
  stillBoundToOperation(q: Queryable, id: string): Promise<boolean>;
  setOperationHash(q: Queryable, id: string, hash: string): Promise<void>;
  markSettling(
    q: Queryable,
    id: string,
    raw: string,
    hash: string,
    sender?: { from: string; nonce: number },
  ): Promise<void>;
  unmarkSettling(id: string): Promise<void>;
  unclaim(id: string): Promise<void>;
  unsettle(id: string): Promise<void>;
  markSettled(
    id: string,
    settlement: Settlement,
    known?: { payment: PaymentRecord; apiKeyId: string | null },
  ): Promise<PaymentRecord | undefined>;
  settleWithin(
    q: Queryable,
    payment: PaymentRecord,
    settlement: Settlement,
    apiKeyId: string | null,
  ): Promise<PaymentRecord>;
  markReleased(id: string, reason: string, settlementFailed?: boolean): Promise<boolean>;
  releaseReservedWithin(q: Queryable, txId: string, reason: string): Promise<void>;
}
