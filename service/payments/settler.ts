import type { SettleResponse } from "@x402/core/types";
import type { TransactionReceipt } from "ethers";
import { isChainUnavailable } from "../chains/rpc-errors";
import type { Logger } from "../logger";
import type { Batch } from "../model/batch";
import type { Batches } from "../store/batches";
import type { PaymentRecord, PaymentStore } from "../store/payments";
import { TtlCache } from "../cache/ttl-cache";
import { paidIn, settledBy, transferWithAuthorizationCalldata } from "./eip3009";
import { SettlementError } from "./payment-facilitator";
import type { PaymentTerms } from "./payment-terms";

/** What the settler reads and writes: the payments and the batches they pay for. */
export type SettlerServices = { batches: Pick<Batches, "get">; payments: PaymentStore };

/** A settlement is not started this close to its authorization's expiry (the facilitator needs validBefore ≥ now + 6 s). */
export const SETTLE_MARGIN_S = 10;
/** Payments left unfinished are looked for this often, and taken up when unchanged for RECOVERY_QUIET_MS. */
const RECOVERY_MS = 30_000;
const RECOVERY_QUIET_MS = 120_000;
/** How long a payment settled here is kept for the send waiting on it (a send waits SEND_WAIT_MS at most, then reads). */
const JUST_SETTLED_MS = 30_000;

/** One attempt to settle a payment (PaymentSettler.settleOutcome). */
export type SettleOutcome =
  | { kind: "settled"; settlement: SettleResponse }
  | { kind: "released"; reason: string }
  | { kind: "pending"; reason: string };

/**
 * The lifecycle of one reserved payment after its gate: settled by the facilitator (or with its operation's
 * transaction), released when the payer's authorization can no longer be used, tried again after a failure of ours,
 * and recovered after a restart. Payments follow one state machine: reserved while the operation runs, settled
 * once it is confirmed, released (nothing charged) on a revert, an error or an expired authorization.
 */
export class PaymentSettler {
  constructor(
    private readonly services: SettlerServices,
    private readonly terms: PaymentTerms,
    private readonly log: Logger,
  ) {}

  /** True once stop() was called: no more retries from this process. */
  get stopping(): boolean {
    return this.stopped;
  }

  /**
   * Settles a payment in the background: settled once its settlement transaction is confirmed on the canonical chain
   * (a payment carried by its operation's transaction, once that one is: settleWithOperation). A failure of ours (the
   * settlement wallet without gas, a chain that could not be asked) keeps it owed and tries again shortly; only a
   * payment the payer made unusable (expired, moved, cancelled, spent by a sibling) is released.
   */
  async settle(
    paymentId: string,
    operationReceipt?: TransactionReceipt,
    known?: { payment: PaymentRecord; batch?: Batch },
  ): Promise<SettleResponse | undefined> {
    const payment = known?.payment.id === paymentId ? known.payment : await this.services.payments.get(paymentId);
    if (!payment || payment.status === "released") return undefined;
    if (payment.status === "settled") return payment.settlement;
    if (payment.settleInOperation) {
      try {
        return await this.settleWithOperation(payment, operationReceipt, known?.batch);
      } catch (error) {
        // The chain could not be asked (or answered late): looked at again shortly, never released for it.
        this.log.warn(
          { paymentId, reason: (error as Error).message },
          "payment settled with its operation not checked yet; trying again",
        );
        this.retryLater(paymentId);
        return undefined;
      }
    }
    const outcome = await this.settleOutcome(payment);
    if (outcome.kind === "pending") this.retryLater(paymentId);
    return outcome.kind === "settled" ? outcome.settlement : undefined;
  }

  /**
   * One attempt to settle a payment that has a settlement of its own (not carried by its operation's transaction):
   * settled; released (the payer's authorization can no longer be used: nothing charged); or pending (a failure of
   * ours, or another settler has it: the payment stays owed and is tried again).
   */
  async settleOutcome(known: PaymentRecord): Promise<SettleOutcome> {
    const paymentId = known.id;
    const payment = known.status === "reserved" ? known : await this.services.payments.get(paymentId);
    if (!payment) return { kind: "released", reason: "no such payment" };
    if (payment.status === "released") return { kind: "released", reason: payment.releaseReason ?? "released" };
    if (payment.status === "settled") return { kind: "settled", settlement: payment.settlement };
    if (payment.settleInOperation) return { kind: "pending", reason: "settled with its operation's transaction" };
    if (payment.status === "reserved" && payment.validBefore - Math.floor(Date.now() / 1000) <= SETTLE_MARGIN_S) {
      const reason = "the authorization expired before it could be settled";
      await this.release(payment.id, reason);
      return { kind: "released", reason };
    }
    const sent = payment.status === "settling" && payment.settleTxHash;
    if (!sent && !(await this.services.payments.claimForSettlement(paymentId)))
      return { kind: "pending", reason: "another settler has it" };
    this.settling.add(paymentId);
    try {
      let result: SettleResponse;
      try {
        result = sent ? await this.awaitSettlement(payment) : await this.terms.facilitator.settle(payment);
        // The library's own wait may give up in passing: a transaction on its way decides by its fate on chain.
        if (!result.success && !sent) {
          const stored = await this.services.payments.get(paymentId);
          if (stored?.settleTxHash) result = await this.awaitSettlement(stored);
        }
      } catch (error) {
        return await this.settlementFailed(paymentId, error);
      }
      if (!result.success)
        return await this.settlementFailed(
          paymentId,
          new SettlementError(`settlement refused: ${result.errorReason ?? "unknown"}`, true),
        );
      // The library answers the hash it first sent; a re-priced replacement (same nonce) may be the one mined, and the
      // payment row names whichever was (promoteSettlement): that is the settlement's transaction.
      const mined = (await this.services.payments.get(paymentId))?.settleTxHash;
      if (mined && result.transaction && mined !== result.transaction.toLowerCase())
        result = { ...result, transaction: mined };
      const settled = await this.services.payments.markSettled(paymentId, result);
      this.keepSettled(settled);
      this.log.info({ paymentId, transaction: result.transaction }, "payment settled");
      return { kind: "settled", settlement: settled?.settlement ?? result };
    } finally {
      this.settling.delete(paymentId);
    }
  }

  /**
   * After a failed settlement: released when the payer's authorization can no longer be used (expired, cancelled,
   * used elsewhere, a balance that moved); otherwise the failure is ours or passing (the settlement wallet without gas,
   * a refusal, a chain that could not be asked): the payment stays owed and is settled again.
   */
  private async settlementFailed(paymentId: string, error: unknown): Promise<SettleOutcome> {
    const reason = (error as Error).message;
    const usable = await this.stillUsable(paymentId, error);
    if (!usable.usable) {
      this.failures.payer++;
      this.log.warn(
        { paymentId, reason, why: usable.why },
        "settlement failed for good: the payer's authorization can no longer be used",
      );
      const released = `settlement failed: ${usable.why ?? reason}`;
      await this.release(paymentId, released, true);
      return { kind: "released", reason: released };
    }
    this.failures.ours++;
    if (error instanceof SettlementError && error.minedWithout)
      await this.services.payments.unmarkSettling(paymentId).catch(() => undefined);
    else await this.services.payments.unclaim(paymentId).catch(() => undefined);
    const noGas = /insufficient funds/i.test(reason);
    if (noGas) {
      this.log.error(
        { paymentId, wallet: this.terms.facilitator.settlementAddress, chainId: this.terms.chain.chainId, reason },
        "the x402 settlement wallet cannot pay the settlement's gas: fund it; the payment stays owed and is settled once it can",
      );
    } else {
      this.log.warn(
        { paymentId, reason },
        "settlement failed for a reason of ours or in passing; the payment stays owed and is tried again",
      );
    }
    return { kind: "pending", reason };
  }

  /**
   * Whether a payment's authorization can still be settled: a settlement on its way decides by its fate on chain;
   * otherwise it must not be (nearly) expired, and its transfer must go through on the pending block.
   */
  private async stillUsable(paymentId: string, error: unknown): Promise<{ usable: boolean; why?: string }> {
    const payment = await this.services.payments.get(paymentId);
    if (!payment || payment.status === "released" || payment.status === "settled") return { usable: false };
    const minedWithout = error instanceof SettlementError && error.minedWithout;
    if (payment.settleTxHash && !minedWithout && !(error instanceof SettlementError)) return { usable: true }; // on its way
    if (payment.validBefore - Math.floor(Date.now() / 1000) <= SETTLE_MARGIN_S)
      return { usable: false, why: "the authorization expired before it was settled" };
    let calldata: string | undefined;
    try {
      calldata = transferWithAuthorizationCalldata(payment.payload);
    } catch {
      return { usable: false, why: "the payment's authorization cannot be opened" };
    }
    // A payment the library settles (ERC-6492): its own verdict stands.
    if (!calldata) return { usable: !(error instanceof SettlementError && error.final) };
    try {
      await this.terms.chain.provider.send("eth_call", [{ to: payment.asset, data: calldata }, "pending"]);
      return { usable: true };
    } catch (simulated) {
      if (isChainUnavailable(simulated)) return { usable: true }; // not known now: kept, asked again
      return {
        usable: false,
        why: "the payer's authorization can no longer be used (expired, cancelled, used, or the balance moved)",
      };
    }
  }

  /**
   * A payment settled inside its operation's transaction: settled once that transaction (the batch's last, whatever
   * hash its replacements gave it) is confirmed and its receipt shows the payer's authorization used; released when
   * it reverted (the payment reverted with it). Undefined while the operation is still on its way.
   */
  private async settleWithOperation(
    payment: PaymentRecord,
    known?: TransactionReceipt,
    ended?: Batch,
  ): Promise<SettleResponse | undefined> {
    const batch = !payment.txId
      ? undefined
      : ended?.txId === payment.txId
        ? ended
        : await this.services.batches.get(payment.txId);
    const last = batch?.transactions[batch.transactions.length - 1];
    if (!batch || !last) {
      await this.release(payment.id, "the operation never ran", true);
      return undefined;
    }
    if (batch.status === "rejected") {
      await this.release(payment.id, `the operation failed: ${batch.error ?? last.error ?? "rejected"}`, true);
      return undefined;
    }
    if (batch.status !== "success" || last.status !== "confirmed" || !last.txHash) return undefined; // the runner settles it at the end
    // The runner hands over the receipt it confirmed; after a restart or a reorg it is asked for.
    const receipt =
      known?.hash.toLowerCase() === last.txHash.toLowerCase()
        ? known
        : await this.terms.chain.provider.getTransactionReceipt(last.txHash);
    if (!receipt) {
      // A node behind the one that confirmed it, or a reorg (then the runner brings it back and settles again).
      this.retryLater(payment.id);
      return undefined;
    }
    if (receipt.status !== 1) {
      await this.release(payment.id, "the operation reverted (its payment with it)", true);
      return undefined;
    }
    if (!paidIn(receipt, payment)) {
      // Signed with the payment but mined without it: cannot happen with PaidRelayDelegate's code; never claim it.
      this.log.error(
        { paymentId: payment.id, transaction: receipt.hash },
        "the operation's transaction does not show the payment's authorization used",
      );
      await this.release(payment.id, "the operation's transaction did not settle the payment", true);
      return undefined;
    }
    const result = settledBy(receipt, payment);
    this.keepSettled(
      await this.services.payments.markSettled(payment.id, result, { payment, apiKeyId: batch.apiKeyId }),
    );
    this.log.info({ paymentId: payment.id, transaction: receipt.hash }, "payment settled with its operation");
    return result;
  }

  /** Settlements this process failed, by whose failure (metrics). */
  readonly failures = { ours: 0, payer: 0 };

  /** Payments this process is settling now (the periodic recovery leaves them alone). */
  private readonly settling = new Set<string>();

  /** Payments this process just settled, as stored: the send that paid for one answers with it without reading it back. */
  private readonly justSettled = new TtlCache<string, PaymentRecord>(JUST_SETTLED_MS, 1_000);

  keepSettled(payment: PaymentRecord | undefined): void {
    if (payment) this.justSettled.set(payment.id, payment);
  }

  /** The payment as this process just settled it (once), else as stored. */
  async settledOrStored(paymentId: string): Promise<PaymentRecord | undefined> {
    const kept = this.justSettled.get(paymentId);
    if (!kept) return this.services.payments.get(paymentId);
    this.justSettled.delete(paymentId);
    return kept;
  }

  /**
   * settle() for work nobody awaits (retries, recovery, a reorg): a failure (a chain or the database gone, a stop under
   * way) is logged, and the payment is taken up again by the next recovery; it never becomes an unhandled rejection.
   */
  private settleInBackground(paymentId: string): Promise<void> {
    return this.settle(paymentId).then(
      () => undefined,
      (error: Error) =>
        this.log.warn(
          { paymentId, reason: error.message },
          "payment not settled this time; the recovery takes it up again",
        ),
    );
  }

  private readonly retries = new Map<string, { timer: NodeJS.Timeout; attempt: number }>();

  /** Settles again after a backoff (1 s doubling to 30 s) while this process runs; recover() covers restarts. */
  private retryLater(paymentId: string): void {
    if (this.stopped) return;
    const attempt = (this.retries.get(paymentId)?.attempt ?? 0) + 1;
    clearTimeout(this.retries.get(paymentId)?.timer);
    const timer: NodeJS.Timeout = setTimeout(
      () => {
        // A pending outcome schedules the next attempt (another timer); otherwise the payment ended here.
        void this.settleInBackground(paymentId).finally(() => {
          if (this.retries.get(paymentId)?.timer === timer) this.retries.delete(paymentId);
        });
      },
      Math.min(30_000, 1000 * 2 ** (attempt - 1)),
    );
    timer.unref();
    this.retries.set(paymentId, { timer, attempt });
  }

  private stopped = false;

  /** No more retries from this process (a stop); unfinished payments are recovered by the next start. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.recovery);
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * A reorg deeper than its confirmations took a settlement off the chain: the payment is settling again (the
   * transaction is sent again while its bytes are kept) until it is back on chain.
   */
  async afterDeepReorg(paymentId: string): Promise<void> {
    this.log.error(
      { paymentId },
      "reorg deeper than the confirmations took a settlement off the chain; settling it again",
    );
    await this.services.payments.unsettle(paymentId);
    void this.settleInBackground(paymentId);
  }

  async release(paymentId: string, reason: string, settlementFailed = false): Promise<void> {
    if (await this.services.payments.markReleased(paymentId, reason, settlementFailed))
      this.log.info({ paymentId, reason }, "payment released");
  }

  /**
   * Payments nobody in this process is finishing (after a restart; and every RECOVERY_MS, for those left behind by an
   * instance that stopped, or stuck in settling): a settlement already broadcast is awaited (re-sent if the node lost
   * it), a claim never sent is settled, a payment whose operation confirmed is settled, one whose operation failed or
   * never ran is released. `quietForMs`: only payments unchanged for that long (a send in progress has just written).
   */
  async recover(quietForMs = 0): Promise<void> {
    // A settlement nonce whose transaction never reached the chain would hold every later settlement back.
    await this.terms.facilitator
      .healNonces?.()
      .catch((error: Error) =>
        this.log.warn({ reason: error.message }, "settlement wallet nonces not checked; trying again later"),
      );
    for (const payment of await this.services.payments.unfinished(quietForMs)) {
      if (this.stopped) return;
      if (this.settling.has(payment.id) || this.retries.has(payment.id)) continue;
      if (payment.status === "settling") {
        void this.settleInBackground(payment.id);
        continue;
      }
      const batch = payment.txId ? await this.services.batches.get(payment.txId) : undefined;
      if (!batch) await this.release(payment.id, "the operation never ran");
      else if (batch.status === "success") void this.settleInBackground(payment.id);
      else if (batch.status === "rejected") await this.release(payment.id, "the operation failed");
      else if (batch.status === "prepared" && payment.subject.startsWith("prepare:"))
        void this.settleInBackground(payment.id);
      else if (batch.status === "prepared") await this.release(payment.id, "the operation never ran");
    }
  }

  private recovery?: NodeJS.Timeout;

  /** Recovers payments left behind every RECOVERY_MS while the service runs (a stop ends it). */
  startRecovery(intervalMs = RECOVERY_MS): void {
    this.recovery = setInterval(() => {
      void this.recover(RECOVERY_QUIET_MS).catch((error: Error) =>
        this.log.warn({ reason: error.message }, "payments not recovered this time; trying again"),
      );
    }, intervalMs);
    this.recovery.unref();
  }

  /** A settlement transaction already sent (before a crash, or by the library's flow): its fate on chain. */
  private async awaitSettlement(payment: PaymentRecord): Promise<SettleResponse> {
    if (!this.terms.facilitator.awaitSettlement)
      throw new SettlementError("the external facilitator keeps its own settlement transactions", false);
    return this.terms.facilitator.awaitSettlement(payment);
  }
}
