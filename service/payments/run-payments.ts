import type { TransactionReceipt } from "ethers";
import type { Batch } from "../model/batch";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";

/**
 * The port through which the batch runner reaches a batch's x402 payments, and the only one: the payment's states
 * (reserved, settling, settled, owed, released, refunded) change here, never in the runner. A method whose name ends in
 * InSameTransaction writes inside the runner's database transaction `q` (one commit with the batch's own rows); every
 * other method runs on its own, outside any transaction of the runner's.
 */
export interface RunPayments {
  /** Whether payments may belong to the batch (x402 on, and the batch prepared without a key): else none is read. */
  paysFor(batch: Batch): boolean;
  /**
   * Before the batch's first broadcast: the payment its only transaction carries (`canCarry`), every other one settled
   * first, once `wouldRevert` (asked only then, with the payer) shows that the operation would go through. `known`:
   * all of the batch's payments, when the caller has them.
   */
  beforeBroadcast(
    batch: Batch,
    options: {
      canCarry: boolean;
      known?: PaymentRecord[];
      wouldRevert: (payer?: string) => Promise<string | undefined>;
    },
  ): Promise<BeforeBroadcast>;
  /** The payment bound to a relayed batch's transaction, for signing it again with a fresh nonce. */
  boundSettlement(txId: string): Promise<OperationSettlement | undefined>;
  /** The batch's payments, read in the transaction that ends it successfully (issued together with its end). */
  readInSameTransaction(q: Queryable, txId: string): Promise<PaymentRecord[]>;
  /**
   * The batch's payments at its successful end, known without a read: the one its only transaction carried
   * (`carried`, from beforeBroadcast), when that recorded exactly one transaction hash and `receipt` is that
   * transaction's. A batch whose transaction carries a payment has no other open one (beforeBroadcast carries one only
   * then), so the end settles it with the batch in one trip. Undefined: read them (readInSameTransaction).
   */
  knownAtEnd(
    carried: OperationSettlement | undefined,
    receipt: TransactionReceipt | undefined,
  ): PaymentRecord[] | undefined;
  /**
   * In the transaction that ends a batch successfully: the payments its last transaction carried settled (the receipt
   * shows them paid). Answers them, for RunEnd's `settledHere`.
   */
  settleCarriedInSameTransaction(
    q: Queryable,
    batch: Batch,
    receipt: TransactionReceipt | undefined,
    payments: PaymentRecord[],
  ): Promise<PaymentRecord[]>;
  /** In the transaction that rejects a batch for a failure of the service's: its settled payments owed back (how many). */
  owedBackInSameTransaction(q: Queryable, txId: string, reason: string): Promise<number>;
  /** In the transaction that abandons a batch nothing of which was sent: its reserved payments released. */
  releaseReservedInSameTransaction(q: Queryable, txId: string, reason: string): Promise<void>;
  /** Once the run's end committed: its payments settled, released or sent back, as the end says. */
  afterRun(end: RunEnd): Promise<void>;
  /** A deep reorg took a payment's own settlement off the chain: settled again. Answers the payment's batch, if any. */
  afterSettlementReorg(paymentId: string): Promise<string | undefined>;
  /** A deep reorg took a batch's transaction off the chain: a payment settled in it is settling again. */
  afterOperationReorg(txId: string): Promise<void>;
  /** That transaction is back on chain: its payments follow its fate (settled again, or released if it reverted). */
  afterBackOnChain(txId: string): Promise<void>;
}

/** What beforeBroadcast decided. */
export type BeforeBroadcast =
  /** `payer`: the wallet whose payment pays for the batch (its send share's payer, else its prepare share's). */
  | { kind: "go"; carried?: OperationSettlement; payer?: string }
  | { kind: "refused"; reason: string }
  | { kind: "waiting"; reason: string };

/** How a run ended, as its payments need it (RunPayments.afterRun). */
export type RunEnd =
  | {
      /** The batch is successful: `settledHere` settled in its transaction, the rest of `payments` settled now. */
      kind: "success";
      batch: Batch;
      receipts: TransactionReceipt[];
      payments?: PaymentRecord[];
      settledHere: PaymentRecord[];
    }
  | { kind: "confirmed-unrecorded"; txId: string; receipts: TransactionReceipt[] }
  /** Rejected: its reserved payments released (unless `released` already), `owed` payments sent back. */
  | { kind: "rejected"; txId: string; reason: string; owed: number; released?: boolean };

/**
 * An x402 payment settled inside a relayed operation's transaction: the relayer sends the transaction to itself and
 * its EIP-7702 code (PaidRelayDelegate) runs `asset.transferWithAuthorization(...)` and then the operation, atomically.
 * The relayer calls its two InSameTransaction methods in the database transaction that signs the operation.
 */
export interface OperationSettlement {
  /** The wallet that pays. */
  payer: string;
  /** The payment asset (USDC). */
  asset: string;
  /** The complete calldata of transferWithAuthorization, from the payer's signed authorization. */
  calldata: string;
  /** Binds the payment to the transaction being signed; false: it is not reserved any more (sign without it). */
  bindInSameTransaction(q: Queryable): Promise<boolean>;
  /** Records the signed transaction's hash on the payment. */
  recordHashInSameTransaction(q: Queryable, hash: string): Promise<void>;
  /**
   * The payment as recordHashInSameTransaction left it (settling with that transaction), when it was called exactly
   * once: the run used it only after that transaction committed. Undefined when it was called never or more than once.
   */
  recorded(): PaymentRecord | undefined;
}

/** The port when x402 is off: no batch has payments. */
export const NO_PAYMENTS: RunPayments = {
  paysFor: () => false,
  beforeBroadcast: () => Promise.resolve({ kind: "go" }),
  boundSettlement: () => Promise.resolve(undefined),
  readInSameTransaction: () => Promise.resolve([]),
  knownAtEnd: () => undefined,
  settleCarriedInSameTransaction: () => Promise.resolve([]),
  owedBackInSameTransaction: () => Promise.resolve(0),
  releaseReservedInSameTransaction: () => Promise.resolve(),
  afterRun: () => Promise.resolve(),
  afterSettlementReorg: () => Promise.resolve(undefined),
  afterOperationReorg: () => Promise.resolve(),
  afterBackOnChain: () => Promise.resolve(),
};
