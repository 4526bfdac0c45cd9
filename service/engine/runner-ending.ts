import type { TransactionReceipt } from "ethers";
import type { Chain } from "../chains/registry";
import type { Logger } from "../logger";
import type { Batch, BatchTransaction } from "../model/batch";
import type { PaymentRecord } from "../store/payments";
import { RecordsRefused } from "./records-refused";
import type { BatchHooks, Confirmation, FailureCause, RunnerDeps, SettlementPort } from "./runner-ports";

/**
 * How a batch's run ends: successful (the method's records and the batch's end in one database transaction, its
 * payments settled), rejected at a reverted or refused transaction (payment released, credit back), or refused
 * before anything was sent. Part of the batch runner (engine/runner.ts).
 */
export class BatchEnding {
  constructor(
    private readonly services: RunnerDeps,
    private readonly methods: (name: string) => BatchHooks | undefined,
    private readonly settlement: SettlementPort | undefined,
    /** Batches whose rows a reorg changed while their run was under way (the runner's): read back at the end. */
    private readonly reorgedDuringRun: ReadonlySet<string>,
    private readonly log: Logger,
  ) {}

  /**
   * The batch as a run that ended it early (a revert, a refusal) left it. A relayed batch is read back: a transaction
   * the relayer re-signed or replaced on the way is only partly in the run's copy.
   */
  async ended(batch: Batch): Promise<Batch | undefined> {
    return batch.executionMode === "service-relayed" ? this.services.batches.get(batch.txId) : batch;
  }

  /**
   * Ends a batch at a reverted or refused transaction. Its payment is released (nothing charged) unless it was settled;
   * its credit comes back when the caller got nothing from it: a relayed batch, or one whose first transaction never
   * reached the chain. A failure of ours (`cause`) also owes back, in the same database transaction, the payments it
   * had settled (refunds: payments/refunds.ts); a failure of the payer's stays charged.
   */
  async reject(
    batch: Batch,
    tx: BatchTransaction,
    status: "reverted" | "refused" | "unseen",
    error: string,
    receipt?: { blockNumber: number; gasUsed: bigint },
    cause: FailureCause = "payer",
  ): Promise<void> {
    const owedBack = cause === "ours" && !batch.apiKeyId ? this.settlement : undefined;
    let owed = 0;
    if (owedBack?.owedBackWithin)
      owed = await this.services.db.transaction(async (q) => {
        await this.services.batches.reject(batch.txId, tx.index, status, error, receipt, q);
        return owedBack.owedBackWithin!(q, batch.txId, error);
      });
    else await this.services.batches.reject(batch.txId, tx.index, status, error, receipt);
    owedBack?.owedBackCommitted?.(batch.txId, owed);
    update(batch, tx.index, {
      status,
      error,
      blockNumber: receipt?.blockNumber ?? null,
      gasUsed: receipt?.gasUsed.toString() ?? null,
    });
    Object.assign(batch, { status: "rejected", failedIndex: tx.index, error });
    const relayed = batch.executionMode === "service-relayed";
    // A relayed transaction the node refused never used its nonce; one refused before it was signed never had one.
    if (relayed && status === "refused" && tx.signedRaw)
      await this.services.relayer.onRefused(this.services.chains.find(batch.chainId)!, tx);
    if (relayed || (tx.index === 0 && status !== "reverted")) {
      await this.services.db.transaction((q) => this.services.credits.refund(q, batch.txId));
    }
    await this.settlement?.releaseForBatch(batch.txId, `the operation failed: ${error}`);
  }

  /**
   * Ends a relayed batch nothing of which was ever signed because its chain does not answer (a failure of ours): in one
   * database transaction that holds its transactions' and payments' rows, rejected, its reserved payments released and
   * its settled ones owed back; its credit comes back. Undefined, and nothing changed, when something of it was signed
   * meanwhile (it can still reach the chain: it waits for it) or a payment of it is being settled (tried again later).
   */
  async abandonUnsent(batch: Batch, error: string): Promise<Batch | undefined> {
    const { batches, credits, db, payments } = this.services;
    const paid = !batch.apiKeyId ? this.settlement : undefined;
    const ended = await db.transaction(async (q) => {
      if (!(await batches.lockNothingSent(q, batch.txId))) return undefined;
      await batches.reject(batch.txId, 0, "refused", error, undefined, q);
      await payments.releaseReservedWithin(q, batch.txId, `the operation failed: ${error}`);
      await credits.refund(q, batch.txId);
      return { owed: (await paid?.owedBackWithin?.(q, batch.txId, error)) ?? 0 };
    });
    if (!ended) return undefined;
    this.log.error({ txId: batch.txId, reason: error }, "batch abandoned: its chain did not answer; nothing was sent");
    paid?.owedBackCommitted?.(batch.txId, ended.owed);
    return this.services.batches.get(batch.txId);
  }

  /**
   * Ends a batch before anything of it was sent (its transaction would revert, or its payment failed): nothing spent.
   * `cause`: whose failure it is (a transaction that would run out of the gas the service gives it is ours).
   */
  async refuse(batch: Batch, tx: BatchTransaction, error: string, cause: FailureCause = "payer"): Promise<void> {
    this.log.warn({ txId: batch.txId, index: tx.index, reason: error }, "batch refused before anything was sent");
    await this.reject(batch, tx, "refused", error, undefined, cause);
  }

  /**
   * Records what the receipts prove and marks the batch successful, atomically and at most once. False when another
   * runner (or instance) finished it. `payer`: the wallet whose x402 payment paid for the batch, if any.
   */
  async finish(
    batch: Batch,
    chain: Chain,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    payer: string | undefined,
  ): Promise<boolean> {
    const method = this.methods(batch.method);
    // A batch prepared under a key is never paid with x402 (auth/gate.ts admitSend): nothing to settle or look up.
    const paid = !batch.apiKeyId && this.settlement;
    let marked: false | { toSettle: PaymentRecord[] | undefined; settledHere: PaymentRecord[] };
    try {
      marked = await this.finishIn(batch, chain, receipts, lastConfirmed, method, payer, paid);
    } catch (error) {
      if (!(error instanceof RecordsRefused)) throw error;
      await this.refuseRecords(batch, receipts, lastConfirmed, error.reason);
      return false;
    }
    if (!marked) return false;
    batch.status = "success";
    this.log.info({ txId: batch.txId, method: batch.method }, "batch confirmed");
    if (paid) {
      paid.keepSettledAfterCommit?.(marked.settledHere);
      const settled = new Set(marked.settledHere.map((p) => p.id));
      await paid.settleForBatch(
        batch.txId,
        receipts,
        batch,
        marked.toSettle?.filter((p) => !settled.has(p.id)),
      );
    }
    return true;
  }

  /** finish's database transaction: the batch ended, the method's records, the payments it carried settled. */
  private finishIn(
    batch: Batch,
    chain: Chain,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    method: BatchHooks | undefined,
    payer: string | undefined,
    paid: false | undefined | SettlementPort,
  ) {
    return this.services.db.transaction(async (q) => {
      const { batches, payments } = this.services;
      // Ended first: the row lock makes a second finisher (another runner or instance) find it ended and write nothing.
      // The run's copy (equal to the rows it wrote) gives the events, written by the same statement, unless a reorg
      // changed the rows meanwhile. The payments to settle are read with it (one trip).
      const ended = this.reorgedDuringRun.has(batch.txId) ? undefined : { ...batch, status: "success" as const };
      const [success, toSettle] = await q.together(
        () =>
          [
            batches.markSuccess(q, batch.txId, lastConfirmed, ended),
            paid ? payments.forBatch(batch.txId, q) : Promise.resolve(undefined),
          ] as const,
      );
      if (!success) return false;
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
      if (outcome) {
        await batches.setOutcome(q, batch.txId, outcome);
        batch.outcome = outcome;
      }
      // A payment settled inside the last transaction is settled with the batch's end: one commit, no trip of its own.
      const settledHere =
        paid && toSettle && paid.settleWithinFinish
          ? await paid.settleWithinFinish(q, batch, receipts[receipts.length - 1], toSettle)
          : [];
      return { toSettle, settledHere };
    });
  }

  /**
   * A confirmed batch whose method refused to record it (it lost a race: RecordsRefused): it ends rejected with the
   * reason, its transactions confirmed, nothing recorded, its credit back. A payment of a batch without a key is settled
   * as for a success: the operation ran on chain.
   */
  private async refuseRecords(
    batch: Batch,
    receipts: TransactionReceipt[],
    lastConfirmed: Confirmation | undefined,
    reason: string,
  ): Promise<void> {
    const { batches, credits, db } = this.services;
    if (!(await batches.rejectConfirmed(batch.txId, lastConfirmed, reason))) return;
    this.log.warn(
      { txId: batch.txId, method: batch.method, reason },
      "batch confirmed on chain but not recorded: it lost a race; rejected",
    );
    await db.transaction((q) => credits.refund(q, batch.txId));
    if (!batch.apiKeyId && this.settlement) await this.settlement.settleForBatch(batch.txId, receipts);
  }
}

/** Mirrors a row this run just wrote into its copy of the batch. */
export function update(batch: Batch, index: number, patch: Partial<BatchTransaction>): void {
  batch.transactions[index] = { ...batch.transactions[index], ...patch };
}
