import type { TransactionReceipt } from "ethers";
import type { Chain, ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Batch, BatchTransaction } from "../model/batch";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";
import type { Stores } from "../store/stores";
import type { OperationSettlement, RelayedSignature, Relayer } from "./relayer";

/**
 * What the batch runner is given by the composition root (engine/runner.ts and the runner-*.ts files it is made of):
 * its stores, the parts it calls out to, and the ports other parts answer through.
 */

/** Signs a service-relayed transaction right before its broadcast (the relayer). */
export type RelaySigner = (
  batch: Batch,
  tx: BatchTransaction,
  options?: { replacing?: string; data?: string; settle?: OperationSettlement },
) => Promise<RelayedSignature>;

/** What the runner uses: the stores it writes, the chains, the configuration and the relayer. */
export type RunnerDeps = Pick<Stores, "batches" | "credits" | "db" | "payments"> & {
  chains: ChainRegistry;
  config: Config;
  relayer: Relayer;
};

/** A confirmed batch as the runner hands it to its method (methods/hooks.ts adds what methods may use). */
export interface ConfirmedFacts {
  txId: string;
  chain: Chain;
  method: string;
  signer: string;
  apiKeyId: string | null;
  executionMode: Batch["executionMode"];
  /** The wallet whose x402 payment paid for the batch (its send share, else its prepare share), if any. */
  payer?: string;
  record: Record<string, unknown>;
  receipts: TransactionReceipt[];
}

/** What a batch's method does around the engine (bound to the method by methods/hooks.ts). */
export interface BatchHooks {
  /** Service-relayed: the calldata of transaction `index` once the payer is known; undefined keeps the prepared one. */
  bindRelayed?(batch: Batch, index: number, payer: string): Promise<string | undefined>;
  /** Writes what the receipts prove inside the transaction that ends the batch; may answer the batch's outcome. */
  onConfirmed?(q: Queryable, confirmed: ConfirmedFacts): Promise<Record<string, unknown> | void>;
}

/** Where the x402 payments of a batch are settled or released (payments/batch-settlement.ts), when x402 is on. */
export interface SettlementPort {
  /**
   * Before a batch's first broadcast: the payment its only transaction may carry (`canCarry`: relayed by a key that
   * delegates to PaidRelayDelegate) and those to settle first. `payments`: the batch's payments, when the caller knows them all.
   */
  paymentPlan(
    txId: string,
    chainId: number,
    canCarry: boolean,
    payments?: PaymentRecord[],
  ): Promise<{ carried?: OperationSettlement; first: PaymentRecord[] }>;
  /** Settles payments before their operation is broadcast: paid, refused (released: nothing done) or waiting (owed). */
  settleFirst(
    payments: PaymentRecord[],
  ): Promise<{ kind: "paid" } | { kind: "refused"; reason: string } | { kind: "waiting"; reason: string }>;
  /** The payment bound to a relayed batch's transaction, for signing it again with a fresh nonce. */
  boundSettlement(txId: string): Promise<OperationSettlement | undefined>;
  /** `ended`: the batch as the run that confirmed it just stored it; `payments`: its payments, read as it ended. */
  settleForBatch(
    txId: string,
    receipts?: TransactionReceipt[],
    ended?: Batch,
    payments?: PaymentRecord[],
  ): Promise<void>;
  releaseForBatch(txId: string, reason: string): Promise<void>;
  /**
   * Inside the database transaction that ends a batch rejected for a failure of the service's (FailureCause "ours"):
   * the payments it had settled are owed back to their payers. Answers how many.
   */
  owedBackWithin?(q: Queryable, txId: string, reason: string): Promise<number>;
  /** Once that transaction committed: the refunds are sent (or listed for the operator). */
  owedBackCommitted?(txId: string, owed: number): void;
  /** A reorg deeper than its confirmations took a settlement off the chain. */
  afterDeepReorg(paymentId: string): Promise<void>;
  /** A deep reorg took a batch's transaction off the chain: a payment settled in it is settling again. */
  afterOperationReorg?(txId: string): Promise<void>;
  /**
   * Inside the transaction that ends a batch successfully: settles the payments its last transaction carried (the
   * receipt shows them paid); answers them, for keepSettledAfterCommit once that transaction committed.
   */
  settleWithinFinish?(
    q: Queryable,
    batch: Batch,
    receipt: TransactionReceipt | undefined,
    payments: PaymentRecord[],
  ): Promise<PaymentRecord[]>;
  keepSettledAfterCommit?(settled: PaymentRecord[]): void;
}

/**
 * Whose failure ended a batch rejected: the payer's ("payer": its call reverted on the chain as it stood, it was refused
 * before anything was sent, a hash it reported never appeared, the node refused the bytes it signed) is charged for the
 * attempt; the service's ("ours": the node refused bytes the relayer signed, e.g. the relayer without gas money; the
 * operator cancelled it; it ran out of the gas the service gave it) gives back what the payer paid (refund).
 */
export type FailureCause = "payer" | "ours";

/** What the last transaction's confirmation writes together with the batch's end. */
export interface Confirmation {
  index: number;
  blockNumber: number;
  blockHash: string;
  gasUsed: bigint;
}
/** The parts the runner calls out to, handed to its constructor. */
export interface RunnerWiring {
  /** A batch's method's hooks, by the method's name (methods/hooks.ts). */
  methods: (name: string) => BatchHooks | undefined;
  /** Where payments of batches go (payments/batch-settlement.ts); undefined when x402 is off. */
  settlement: SettlementPort | undefined;
  /** Signs service-relayed transactions (the relayer). */
  relaySigner: RelaySigner;
  /** Told when a reorg changed a batch that may have been final (read caches forget it). */
  onReorged: (txId: string) => void;
}

/** How a run learns that the runner stops: `stopped()` now, `signal` resolves once it does. */
export interface RunnerStop {
  stopped(): boolean;
  signal: Promise<void>;
}
