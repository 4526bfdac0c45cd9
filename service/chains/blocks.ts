import type { JsonRpcProvider } from "ethers";

/** Polls this fast while the chain's block interval is not known yet (a wait just began on an idle watcher). */
const FAST_POLL_MS = 20;
/** How long a freshly woken watcher polls fast before it settles on the interval it observed. */
const FAST_PHASE_MS = 400;
/** Poll at this fraction of the observed block interval (Base 2 s → 333 ms, Sepolia 12 s → 2 s). */
const INTERVAL_FRACTION = 6;
const MIN_POLL_MS = 20;
const MAX_POLL_MS = 2_000;
/** Until an interval has been seen: a polite default for a remote RPC. */
const UNKNOWN_INTERVAL_POLL_MS = 250;
const ERROR_BACKOFF_MS = 1_000;
/** A block change seen by a poll sent at most this long after the one before it is timed well enough to learn from. */
const PINNED_CHANGE_MS = 300;
/** A head is fresh for cached reads while the poll that saw it was sent at most this long ago (instant chains)… */
const MIN_READ_AGE_MS = 20;
/** …or a sixth of the observed block interval, at most this (Base 333 ms, Sepolia 1 s). */
const MAX_READ_AGE_MS = 1_000;
/** After the last cached read asked for a fresh head, the watcher keeps polling for readers this long. */
const READERS_LINGER_MS = 1_000;

/** A reader waiting for a head seen by a poll sent at or after `since`. */
interface FreshWaiter {
  since: number;
  resolve: (head: number | undefined) => void;
}

interface Waiter {
  after: number;
  resolve: (head: number) => void;
  timer?: NodeJS.Timeout;
}

/**
 * One head watcher per chain, shared by everything that waits for a block (the batch runner, receipt waits of x402
 * settlements). It polls eth_blockNumber only while someone waits, starts fast and then backs off to a fraction of the
 * block interval it observes, and wakes every waiter whose block has come with one request, however many wait.
 *
 * Cached chain reads ask it for a fresh head (freshHead, freshHeadNow): while they ask, it also polls, one poll in
 * flight at most, a new one sent every half read age (or at once while a reader waits), and stops READERS_LINGER_MS
 * after the last ask.
 */
export class BlockWatcher {
  /** Highest block number seen; -1 before the first poll. */
  head = -1;
  /** Observed milliseconds per block (smoothed); undefined until two heads were seen by continuous polling. */
  intervalMs?: number;
  /**
   * The age bound of freshHead; undefined: derived from the block interval (readAgeMs). Tests fix it to make freshness
   * independent of time.
   */
  fixedReadAgeMs?: number;
  /** The last poll's answer and when it was sent. */
  private lastPoll?: { head: number; sentAt: number };
  /** The last block change a poll pinned down in time (see poll): where the next one measures the interval from. */
  private lastChange?: { head: number; at: number };
  /** When the newest answered poll was sent: the head was current at least until then. */
  private polledAt = -Infinity;
  private readersUntil = 0;
  private timerDue = 0;
  private readonly waiters = new Set<Waiter>();
  private freshWaiters: FreshWaiter[] = [];
  private timer?: NodeJS.Timeout;
  private polling = false;
  private activeSince = 0;
  private destroyed = false;

  constructor(private readonly provider: Pick<JsonRpcProvider, "getBlockNumber">) {}

  /**
   * Resolves with the head once a block above `after` exists (at once if one is known already), or with the current
   * head after `maxWaitMs`, whichever comes first. Callers re-check what they wait for either way.
   */
  next(after: number, maxWaitMs: number): Promise<number> {
    if (this.head > after || this.destroyed) return Promise.resolve(this.head);
    return new Promise((resolve) => {
      const waiter: Waiter = { after, resolve };
      waiter.timer = setTimeout(() => this.settle(waiter), maxWaitMs);
      this.waiters.add(waiter);
      this.wake();
    });
  }

  /** Resolves once the head reaches `blockNumber` (or after `maxWaitMs`); answers the head then. */
  async reach(blockNumber: number, maxWaitMs: number): Promise<number> {
    const deadline = Date.now() + maxWaitMs;
    while (this.head < blockNumber && !this.destroyed && Date.now() < deadline) {
      await this.next(this.head, Math.max(0, deadline - Date.now()));
    }
    return this.head;
  }

  /** Learns a head from elsewhere (a receipt's block): waiters below it wake without a poll. */
  observe(blockNumber: number): void {
    if (blockNumber <= this.head) return;
    this.head = blockNumber;
    for (const w of this.waiters) if (this.head > w.after) this.settle(w);
  }

  /**
   * A head no older than readAgeMs() before this call: the head seen by a poll sent since then (or a block observed
   * later), at once when the last poll is that recent, else after the next poll. Undefined when that poll failed or
   * the watcher is destroyed: the caller reads without a cache then. Asking keeps the watcher polling for readers, so
   * under steady reads the head is fresh without waiting and without an RPC per read.
   */
  freshHead(): Promise<number | undefined> {
    const head = this.freshHeadNow();
    if (head !== undefined || this.destroyed) return Promise.resolve(head);
    // freshHeadNow sent a poll, or one is under way: its answer, or the poll sent right after it, serves this reader.
    return new Promise((resolve) => this.freshWaiters.push({ since: Date.now() - this.readAgeMs(), resolve }));
  }

  /**
   * The head freshHead would answer at once, or undefined when it would wait (the last poll is older than the read
   * age, or none answered); a poll is then sent, for the readers that follow. A reader given undefined reads the chain
   * itself: its answer is of the chain after its question, which a cached read waits a poll's round trip to promise.
   */
  freshHeadNow(): number | undefined {
    const now = Date.now();
    this.readersUntil = now + READERS_LINGER_MS;
    if (this.destroyed) return undefined;
    if (this.head >= 0 && this.polledAt >= now - this.readAgeMs()) {
      if (!this.polling && !this.timer) this.startPolling();
      return this.head;
    }
    if (!this.polling) {
      if (this.timer) clearTimeout(this.timer);
      else this.activeSince = now;
      void this.poll();
    }
    return undefined;
  }

  /** How old a head freshHead may answer: 20 ms until a block interval is known, then a sixth of it, at most 1 s. */
  readAgeMs(): number {
    if (this.fixedReadAgeMs !== undefined) return this.fixedReadAgeMs;
    if (this.intervalMs === undefined) return MIN_READ_AGE_MS;
    return Math.min(MAX_READ_AGE_MS, Math.max(MIN_READ_AGE_MS, Math.round(this.intervalMs / INTERVAL_FRACTION)));
  }

  destroy(): void {
    this.destroyed = true;
    if (this.timer) clearTimeout(this.timer);
    this.answerReaders(Infinity, undefined);
    for (const w of this.waiters) this.settle(w);
  }

  /** The delay before the next poll: fast at first, then a fraction of the observed block interval. */
  pollDelay(now = Date.now()): number {
    if (this.intervalMs === undefined)
      return now - this.activeSince < FAST_PHASE_MS ? FAST_POLL_MS : UNKNOWN_INTERVAL_POLL_MS;
    return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Math.round(this.intervalMs / INTERVAL_FRACTION)));
  }

  private settle(waiter: Waiter): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    waiter.resolve(this.head);
  }

  private wake(): void {
    if (this.polling) return;
    if (this.timer) {
      // A poll paced for readers may be further off than a waiter's pace: bring it forward.
      if (this.timerDue <= Date.now() + this.pollDelay()) return;
      clearTimeout(this.timer);
      void this.poll();
    } else {
      this.startPolling();
    }
  }

  private startPolling(): void {
    this.activeSince = Date.now();
    void this.poll();
  }

  /** Answers the readers a poll sent at `sentAt` serves (all when it failed: they read uncached). */
  private answerReaders(sentAt: number, head: number | undefined): void {
    if (!this.freshWaiters.length) return;
    const waiting = this.freshWaiters;
    this.freshWaiters = [];
    for (const w of waiting) {
      if (w.since <= sentAt) w.resolve(head);
      else this.freshWaiters.push(w);
    }
  }

  private wanted(now: number): boolean {
    return !this.destroyed && (this.waiters.size > 0 || this.freshWaiters.length > 0 || now < this.readersUntil);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (!this.wanted(Date.now())) return;
    this.polling = true;
    const sentAt = Date.now();
    let delay: number;
    try {
      const latest = await this.provider.getBlockNumber();
      const now = Date.now();
      this.learnInterval(latest, sentAt, now);
      this.polledAt = Math.max(this.polledAt, sentAt);
      this.observe(latest);
      this.answerReaders(sentAt, this.head);
      delay = this.nextDelay(now, sentAt);
    } catch {
      this.answerReaders(Infinity, undefined);
      delay = ERROR_BACKOFF_MS;
    } finally {
      this.polling = false;
    }
    if (!this.wanted(Date.now())) return;
    this.timerDue = Date.now() + delay;
    this.timer = setTimeout(() => void this.poll(), delay);
    this.timer.unref?.();
  }

  /**
   * Learns the block interval from block changes whose time a poll pinned down: the head moved between two polls sent
   * close together, so it changed within that window. Two such changes, however far apart (the watcher sleeps while
   * nobody waits), give the mean interval of the blocks between them. A head learnt from a receipt pins down nothing.
   */
  private learnInterval(latest: number, sentAt: number, now: number): void {
    const previous = this.lastPoll;
    this.lastPoll = { head: latest, sentAt };
    if (!previous || latest <= previous.head) return;
    const changedWithin = now - previous.sentAt;
    if (changedWithin > Math.max(PINNED_CHANGE_MS, (this.intervalMs ?? 0) / 3)) return;
    if (this.lastChange && latest > this.lastChange.head) {
      const gap = (now - this.lastChange.at) / (latest - this.lastChange.head);
      this.intervalMs = this.intervalMs === undefined ? gap : 0.7 * this.intervalMs + 0.3 * gap;
    }
    this.lastChange = { head: latest, at: now };
  }

  /** Waiters' pace; while readers ask, also a poll sent every half read age, so the head they get stays fresh. */
  private nextDelay(now: number, sentAt: number): number {
    if (this.freshWaiters.length) return 0;
    const forReaders = now < this.readersUntil ? Math.max(0, sentAt + this.readAgeMs() / 2 - now) : Infinity;
    return this.waiters.size > 0 ? Math.min(this.pollDelay(now), forReaders) : forReaders;
  }
}

/**
 * Calls `check` now and again at every new block (and at least every `recheckMs`) until it answers something, or
 * throws after `timeoutMs`. The receipt wait shared by the runner's helpers and the x402 settlement.
 */
export async function untilFound<T>(
  blocks: BlockWatcher,
  check: () => Promise<T | null | undefined>,
  options: { timeoutMs: number; recheckMs?: number },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const since = blocks.head; // read before the check: a block landing during it still wakes the wait below
    const found = await check();
    if (found !== null && found !== undefined) return found;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`not found within ${Math.round(options.timeoutMs / 1000)} s`);
    await blocks.next(since, Math.min(left, options.recheckMs ?? 2_000));
  }
}
