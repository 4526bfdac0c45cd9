/**
 * Gathers the payments to settle that arrive close together, and hands them on in batches (one settlement transaction
 * each, payments/facilitator.ts).
 *
 * A payment that arrives when no batch went out for `gatherMs` goes at once (an idle service adds no wait); while
 * payments keep coming, they are gathered and a batch goes out once `gatherMs` passed since the previous one, once an
 * earlier one ended (batchEnded), or as soon as `max` are waiting. One batch is handed on at a time: those that
 * arrive while it is being sent wait for the next.
 */
export class SettlementBatches<T, R> {
  private waiting: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;
  private sending = false;
  private lastSentAt = -Infinity;

  constructor(
    /** Sends one batch; answers per item, in order (or throws: every item of the batch fails with it). */
    private readonly send: (items: T[]) => Promise<R[]>,
    private readonly options: { gatherMs: number; max: number },
  ) {}

  /** Settles `item` with the next batch: what `send` answered for it. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /**
   * A batch sent earlier ended (its transaction mined and confirmed): what waits goes now, without waiting out the rest
   * of `gatherMs`. On a chain that mines at once the batches follow each other as fast as they are mined; where blocks
   * take longer than `gatherMs`, a confirmation brings the next batch forward at most once.
   */
  batchEnded(): void {
    if (!this.sending && this.waiting.length > 0) this.sendNow();
  }

  /** Items waiting for their batch. */
  get size(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.sending || this.waiting.length === 0) return;
    if (this.waiting.length >= this.options.max) return this.sendNow();
    if (this.timer) return;
    // Even with no wait, the batch leaves on a timer: payments of the same moment (one event-loop turn) go together.
    const wait = Math.max(0, this.lastSentAt + this.options.gatherMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sendNext();
    }, wait);
  }

  /** What waits leaves now, whatever timer was set for it. */
  private sendNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.sendNext();
  }

  private async sendNext(): Promise<void> {
    const batch = this.waiting.splice(0, this.options.max);
    if (batch.length === 0) return;
    this.sending = true;
    this.lastSentAt = Date.now();
    try {
      const results = await this.send(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      this.sending = false;
      this.schedule();
    }
  }
}
