import type { TransactionReceipt } from "ethers";
import type { Chain, ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Batch, BatchTransaction } from "../model/batch";
import type { Queryable } from "../store/db";
import type { OperationSettlement, RunEnd, RunPayments } from "../payments/run-payments";
import type { Stores } from "../store/stores";
import type { RelayedSignature, Relayer } from "./relayer";

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

/**
 * One run of one batch in this process: what it learnt on the way, shared by the runner's parts (runner.ts,
 * runner-broadcast.ts, runner-ending.ts) and by nothing else.
 */
export interface BatchRun {
  readonly txId: string;
  /** The wallet whose payment pays for the batch, once its payments said so (payFirst) or its transaction carries it. */
  payer?: string;
  /** The payment the batch's only transaction carries, as payFirst bound it (its end settles it: RunPayments.knownAtEnd). */
  carried?: OperationSettlement;
  /** A reorg changed the batch's rows while the run was under way (what the store last answered it may not show it): read back at the end. */
  reorged: boolean;
  /** How the run ended, as the batch's payments hear of it once that end committed (RunPayments.afterRun). */
  end?: RunEnd;
}

/**
 * What the runner asks of the relayer (engine/relayer.ts) besides signing (RelaySigner): a key's delegation, a
 * simulation, the nonces after a refusal or a replacement.
 */
export type RunnerRelayer = Pick<
  Relayer,
  "delegate" | "simulate" | "onRefused" | "replace" | "healNonces" | "syncNonces"
>;

/** What the runner uses: the stores it writes, the chains, the configuration and the relayer. */
export type RunnerDeps = Pick<Stores, "batches" | "batchTransactions" | "credits" | "db"> & {
  chains: ChainRegistry;
  config: Config;
  relayer: RunnerRelayer;
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
  /** The port to batches' payments (payments/run-payments.ts; NO_PAYMENTS when x402 is off). */
  payments: RunPayments;
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
