import { Transaction, type TransactionReceipt } from "ethers";
import type { Chain } from "../chains/registry";
import type { Logger } from "../logger";
import type { Batch, BatchTransaction } from "../model/batch";
import type { RunPayments } from "../payments/run-payments";
import { endedElsewhere } from "../store/batches";
import { RecordsRefused } from "./records-refused";
import type { Refusal } from "./runner-broadcast";
import type { BatchHooks, BatchRun, Confirmation, FailureCause, RunnerDeps } from "./runner-ports";

/**
 * How a batch's run ends: successful (the method's records and the batch's end in one database transaction, the
 * payments its last transaction carried settled in it), rejected at a reverted or refused transaction (credit back),
 * or refused before anything was sent. What the batch's payments need once that end committed is left in the run
 * (`run.end`), and the runner hands it to them (RunPayments.afterRun). Part of the batch runner (engine/runner.ts).
 */
export class BatchEnding {
  constructor(
    private readonly services: RunnerDeps,
    private readonly methods: (name: string) => BatchHooks | undefined,
    private readonly payments: RunPayments,
    private readonly log: Logger,
  ) {}

  /**
   * Ends a batch at a reverted or refused transaction. Its payment is released (nothing charged) unless it was settled;
   * its credit comes back, in the database transaction that rejects it, when the caller got nothing from it: a relayed
   * batch, or one whose first transaction never reached the chain. A failure of ours (`cause`) also owes back, in that
   * transaction too, the payments it had settled (refunds: payments/refunds.ts); a failure of the payer's stays charged.
   * Answers the batch as it now stands (ended): as the rejecting write returned it, read back when another writer had
   * ended it (that writer gave back what its end gives back).
   */
  async reject(
    run: BatchRun,
    batch: Batch,
    tx: BatchTransaction,
    status: "reverted" | "refused" | "unseen",
    error: string,
    receipt?: { blockNumber: number; gasUsed: bigint },
    cause: FailureCause = "payer",
  ): Promise<Batch | undefined> {
    const paid = this.payments.paysFor(batch);
    const { batches, credits } = this.services;
    const relayed = batch.executionMode === "service-relayed";
    const creditBack = relayed || (tx.index === 0 && status !== "reverted");
    const { rejected, owed } = await this.services.db.transaction(async (q) => {
      const rejected = await batches.reject(batch.txId, tx.index, status, error, receipt, q);
      if (!rejected) return { rejected, owed: 0 };
      if (creditBack) await credits.refund(q, batch.txId);
      const owesBack = cause === "ours" && paid;
      return { rejected, owed: owesBack ? await this.payments.owedBackInSameTransaction(q, batch.txId, error) : 0 };
    });
    // A relayed transaction the node refused never used its nonce; one refused before it was signed never had one.
    if (relayed && status === "refused" && tx.signedRaw)
      await this.services.relayer.onRefused(this.services.chains.find(batch.chainId)!, tx);
    if (paid) run.end = { kind: "rejected", txId: batch.txId, reason: error, owed };
    return rejected ?? batches.get(batch.txId);
  }

  /**
   * Ends a relayed batch nothing of which was ever signed because its chain does not answer (a failure of ours): in one
   * database transaction that holds its transactions' and payments' rows, rejected, its credit back, its reserved
   * payments released and its settled ones owed back. Undefined, and nothing changed, when something of it was signed
   * meanwhile (it can still reach the chain: it waits for it) or a payment of it is being settled (tried again later).
   */
  async abandonUnsent(run: BatchRun, batch: Batch, error: string): Promise<Batch | undefined> {
    const { batches, batchTransactions, credits, db } = this.services;
    const paid = this.payments.paysFor(batch);
    const ended = await db.transaction(async (q) => {
      if (!(await batchTransactions.lockNothingSent(q, batch.txId))) return undefined;
      const rejected = await batches.reject(batch.txId, 0, "refused", error, undefined, q);
      await credits.refund(q, batch.txId);
      if (!paid) return { rejected, owed: 0 };
      await this.payments.releaseReservedInSameTransaction(q, batch.txId, error);
      return { rejected, owed: await this.payments.owedBackInSameTransaction(q, batch.txId, error) };
    });
    if (!ended) return undefined;
    this.log.error({ txId: batch.txId, reason: error }, "batch abandoned: its chain did not answer; nothing was sent");
    if (paid) run.end = { kind: "rejected", txId: batch.txId, reason: error, owed: ended.owed, released: true };
    return ended.rejected ?? batches.get(batch.txId);
  }

  /**
   * Ends a batch before anything of it was sent (its transaction would revert, or its payment failed): nothing spent.
   * The refusal's `cause`: whose failure it is (a transaction that would run out of the gas the service gives it is
   * ours). Answers the batch as it now stands.
   */
  async refused(run: BatchRun, batch: Batch, { tx, refused, cause }: Refusal): Promise<Batch | undefined> {
    this.log.warn({ txId: batch.txId, index: tx.index, reason: refused }, "batch refused before anything was sent");
    return this.reject(run, batch, tx, "refused", refused, undefined, cause);
  }

  /**
   * Records what the receipts prove and marks the batch successful, atomically and at most once. Answers the batch as
   * the ending wrote it (success, or rejected when its method refused the records); undefined when another runner (or
   * instance) finished it. `payer`: the wallet whose x402 payment paid for the batch, if any.
   */
  async finish(
    run: BatchRun,
    batch: Batch,
    chain: Chain,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    payer: string | undefined,
  ): Promise<Batch | undefined> {
    const method = this.methods(batch.method);
    const paid = this.payments.paysFor(batch);
    let written: Awaited<ReturnType<BatchEnding["finishIn"]>>;
    let marked: Promise<Batch> | undefined;
    try {
      written = await this.finishIn(run, batch, chain, receipts, lastConfirmed, method, payer, paid, (m) => {
        marked = m;
      });
    } catch (error) {
      // The end's own failure first: once markSuccess failed, later statements of the transaction fail as aborted.
      const cause: unknown =
        (await marked?.then(
          () => undefined,
          (failure: unknown) => failure,
        )) ?? error;
      if (endedElsewhere(cause)) return undefined; // another runner (or instance) ended it: nothing of this one stays
      if (!(cause instanceof RecordsRefused)) throw cause;
      return this.refuseRecords(run, batch, receipts, lastConfirmed, cause.reason);
    }
    const { payments, settledHere } = written;
    const ended = withOutcome(await written.marked, written.outcome);
    this.log.info({ txId: batch.txId, method: batch.method }, "batch confirmed");
    if (paid) run.end = { kind: "success", batch: ended, receipts, payments, settledHere };
    return ended;
  }

  /** finish's database transaction: the batch ended, the method's records, the payments it carried settled. */
  private finishIn(
    run: BatchRun,
    batch: Batch,
    chain: Chain,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    method: BatchHooks | undefined,
    payer: string | undefined,
    paid: boolean,
    issued: (marked: Promise<Batch>) => void,
  ) {
    return this.services.db.transaction(async (q) => {
      const { batches } = this.services;
      // Ended first: the row lock makes a second finisher (another runner or instance) find it ended; its markSuccess
      // then fails the transaction before anything issued after it ran (endedElsewhere). So the method's records are
      // issued without waiting for its answer: they travel in its trip, with the COMMIT when nothing needs rows
      // meanwhile (one trip for the end). The batch as the store last returned it gives the events, written by the
      // same statement, unless a reorg changed the rows meanwhile. The batch's payments are read in the same trip,
      // unless the run knows them: the one its transaction carried is settled from what the run wrote of it.
      const sending = run.reorged ? undefined : batch;
      const marked = batches.markSuccess(q, batch.txId, lastConfirmed, sending);
      issued(marked);
      const last = receipts[receipts.length - 1];
      // The payment the batch's transaction carried is known to the run (no read: the end in one trip), unless a reorg
      // changed the rows meanwhile or the transaction was signed more than once (RunPayments.knownAtEnd). Its
      // settlement is guarded by the payment's status as the read's was: a payment another writer ended stays so.
      const known = paid && !run.reorged ? this.payments.knownAtEnd(run.carried, last) : undefined;
      const read = paid && !known ? this.payments.readInSameTransaction(q, batch.txId) : undefined;
      // Both fail with markSuccess's trip, maybe while the method's hook still runs (its I/O awaited): they are read
      // once it returned, or by finish when the transaction failed, not left as unhandled rejections meanwhile.
      marked.catch(() => undefined);
      read?.catch(() => undefined);
      const outcome = await method?.onConfirmed?.(q, {
        txId: batch.txId,
        chain,
        method: batch.method,
        signer: batch.signer,
        apiKeyId: batch.apiKeyId,
        executionMode: batch.executionMode,
        payer,
        record: batch.plan,
        receipts,
      });
      if (outcome) await batches.setOutcome(q, batch.txId, outcome);
      // Nothing waits for markSuccess's answer here unless the payments are read: the COMMIT carries it.
      if (!paid) return { marked, outcome, payments: undefined, settledHere: [] };
      // A payment settled inside the last transaction is settled with the batch's end: one commit, no trip of its own.
      // Known, it is settled from the run's batch (its last transaction as its tracker had it, mined in `last`).
      const payments = known ?? (await read!);
      const ended = known ? batch : withOutcome(await marked, outcome);
      const settledHere = await this.payments.settleCarriedInSameTransaction(q, ended, last, payments);
      return { marked, outcome, payments, settledHere };
    });
  }

  /**
   * A confirmed batch whose method refused to record it (it lost a race: RecordsRefused): it ends rejected with the
   * reason, its transactions confirmed, nothing recorded, its credit back. A payment of a batch without a key is settled
   * as for a success: the operation ran on chain. Answers the batch as rejectConfirmed wrote it (undefined: another
   * runner ended it).
   */
  private async refuseRecords(
    run: BatchRun,
    batch: Batch,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    reason: string,
  ): Promise<Batch | undefined> {
    const { batches, credits, db } = this.services;
    const rejected = await db.transaction(async (q) => {
      const ended = await batches.rejectConfirmed(batch.txId, lastConfirmed, reason, q);
      if (ended) await credits.refund(q, batch.txId);
      return ended;
    });
    if (!rejected) return undefined;
    this.log.warn(
      { txId: batch.txId, method: batch.method, reason },
      "batch confirmed on chain but not recorded: it lost a race; rejected",
    );
    if (this.payments.paysFor(batch)) run.end = { kind: "confirmed-unrecorded", txId: batch.txId, receipts };
    return rejected;
  }
}

/** The batch as markSuccess ended it, with what its method recorded of it (Batches.setOutcome). */
function withOutcome(success: Batch, outcome: Record<string, unknown> | void): Batch {
  return outcome ? { ...success, outcome } : success;
}

/**
 * Whose failure a mined revert is: the payer's (its call reverted on the chain as it stood), unless a relayed
 * transaction used all the gas the service signed it with (it ran out of gas: the service's estimate, ours).
 */
export function revertCause(
  batch: Pick<Batch, "executionMode">,
  tx: Pick<BatchTransaction, "signedRaw" | "unsigned">,
  receipt: Pick<TransactionReceipt, "gasUsed">,
): FailureCause {
  if (batch.executionMode !== "service-relayed") return "payer";
  const limit = tx.signedRaw ? Transaction.from(tx.signedRaw).gasLimit : BigInt(tx.unsigned.gasLimit);
  return receipt.gasUsed >= limit ? "ours" : "payer";
}
