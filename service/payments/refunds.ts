import { errorFacts, type Logger } from "../logger";
import type { Queryable } from "../store/db";
import type { RefundStore } from "../store/payment-refunds";
import type { RefundTransactions } from "./refund-transactions";

/** Refunds owed or in flight are looked at this often (a failure of ours wakes the refunder at once). */
const PASS_MS = 5_000;
/** One pass follows sent refunds block by block for at most this long, then leaves the rest to the next pass. */
const FOLLOW_MS = 60_000;
/** An owed refund that could not be sent (the wallet lacks the asset) is tried again after this long. */
const NOT_SENT_RETRY_MS = 60_000;

/**
 * Payments settled for an operation that then failed for a reason of the service's are owed back (a failure of the
 * payer's stays charged: engine/runner-ending.ts decides whose a failure is). The refund is recorded in the database
 * transaction that ends the batch rejected; with a refund wallet (X402_REFUND_PRIVATE_KEY) this process sends it
 * (payments/refund-transactions.ts: claimed by one instance, signed and stored before it is broadcast, confirmed on
 * chain before it counts), in passes every PASS_MS, woken at once by a new refund; without one it waits in the
 * console's refunds list for the operator to pay and mark (console/refunds.ts).
 */
export class PaymentRefunder {
  /** This process's refunds by outcome (metrics): recorded owed, sent by the wallet, confirmed refunded, not sendable. */
  readonly outcomes = { owed: 0, sent: 0, refunded: 0, failed: 0 };
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private stopping!: () => void;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopping = resolve));
  private readonly stop$ = { stopped: () => this.stopped, signal: this.stopSignal };

  constructor(
    private readonly services: { paymentRefunds: RefundStore },
    /** The refund wallet's transactions on the payment chain; undefined without a refund wallet. */
    private readonly wallet: RefundTransactions | undefined,
    private readonly log: Logger,
  ) {}

  /** The refund wallet's address, when refunds are sent by the service; undefined when operators pay them. */
  get walletAddress(): string | undefined {
    return this.wallet?.wallet.address;
  }

  /** Inside the transaction that ends batch `txId` rejected for a failure of ours: its settled payments owed back. */
  async owedBackWithin(q: Queryable, txId: string, reason: string): Promise<number> {
    const owed = await this.services.paymentRefunds.recordOwedWithin(q, txId, reason);
    this.outcomes.owed += owed;
    return owed;
  }

  /** Once that transaction committed: sent now by the refund wallet, or left to the operator. */
  owedBackCommitted(txId: string, owed: number): void {
    if (!owed) return;
    if (this.wallet) this.log.warn({ txId, owed }, "payments owed back after a failure of ours; refunding them");
    else
      this.log.error(
        { txId, owed },
        "payments owed back after a failure of ours and no refund wallet (X402_REFUND_PRIVATE_KEY): pay them and mark them on the console's Refunds page",
      );
    this.wake();
  }

  /** Starts the passes (with a refund wallet; without one there is nothing to send). */
  start(intervalMs = PASS_MS): void {
    if (!this.wallet || this.stopped) return;
    this.wake();
    this.timer = setInterval(() => this.wake(), intervalMs);
    this.timer.unref();
  }

  /** Stops the passes; a refund in flight is followed by the next start (or another instance). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping();
    clearInterval(this.timer);
    await this.running;
  }

  /** A pass now (or right after the one under way). */
  wake(): void {
    if (!this.wallet || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass(this.wallet)
      .catch((error: unknown) =>
        this.log.warn({ err: errorFacts(error) }, "refunds not sent or followed this time; trying again"),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Sends every refund due, then follows the sent ones block by block (at most FOLLOW_MS). */
  private async pass(wallet: RefundTransactions): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const sent = await wallet.sendNext();
      if (!sent) break;
      if ("notSent" in sent) {
        this.outcomes.failed++;
        this.log.error(
          { paymentId: sent.paymentId, wallet: wallet.wallet.address, problem: sent.notSent },
          "a refund cannot be sent now (does the refund wallet hold the asset and gas?); tried again later",
        );
        await this.services.paymentRefunds.postpone(sent.paymentId, sent.notSent, NOT_SENT_RETRY_MS);
        continue;
      }
      this.outcomes.sent++;
      this.log.info({ paymentId: sent.paymentId, transaction: sent.txHash }, "refund sent");
    }
    const until = Date.now() + FOLLOW_MS;
    while (!this.stopped && Date.now() < until) {
      const head = wallet.chain.blocks.head;
      const sending = await this.services.paymentRefunds.sending(wallet.network);
      if (!sending.length) return;
      for (const refund of sending) {
        const outcome = await wallet.follow(refund, this.stop$);
        if (outcome.kind === "refunded") {
          this.outcomes.refunded++;
          this.log.info(
            { paymentId: refund.paymentId, transaction: outcome.refund.txHash, payer: refund.payer },
            "payment refunded",
          );
        } else if (outcome.kind === "owed") this.outcomes.failed++;
      }
      await Promise.race([wallet.chain.blocks.next(head, 2_000), this.stopSignal]);
    }
  }
}
