import { errorFacts, type Logger } from "../logger";
import type { Db, DbSession, Queryable } from "./db";

/**
 * How long this instance keeps taking new nonces of a wallet under one hold of its lock while its own work keeps
 * coming; then it lets its nonces in flight drain and gives the lock up, so another instance waiting for it gets a turn.
 */
const TURN_MS = 100;
/** A turn that lasts longer than this (a broadcast stuck at the node) gives the lock up anyway. */
const MAX_HOLD_MS = 30_000;
/** Waiting longer than this for another instance's turn goes on without the lock (the broadcast retry then applies). */
const MAX_WAIT_MS = 30_000;

/** The advisory lock key of a wallet: per schema (one deployment), chain and address. `$1` is walletLockName(…). */
export const WALLET_LOCK_KEY = "hashtext('tak:wallet-broadcasts'), hashtext(current_schema() || ':' || $1)";
export const walletLockName = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

/** PostgreSQL's error when a lock was not granted within lock_timeout. */
const LOCK_NOT_AVAILABLE = "55P03";

/** Ends a hold taken with WalletLocks.hold; resolves once the lock is given up when it was the turn's last holder. */
export type WalletRelease = () => Promise<void>;

/** A hold taken with WalletLocks.take: its database transaction (the first one may carry the lock), then its release. */
export interface WalletHold {
  /** Runs `fn` in one database transaction under the hold (see WalletLocks.take). */
  transaction<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  release: WalletRelease;
}

/**
 * Broadcasts of a service wallet (relayer, x402 settlement) in nonce order across the instances sharing one PostgreSQL
 * server. A caller holds its wallet from before it takes a nonce until the node accepted or refused the transaction
 * signed with it; meanwhile no other instance takes a nonce of that wallet, so none can reach the node ahead of a
 * lower one. Holders in this process share one turn of a session-level advisory lock (their order among themselves
 * is NonceOrder's job); the turn ends when its last holder is done, and takes no new holders after TURN_MS.
 * On the embedded database (one process) holding is free: NonceOrder alone keeps the order.
 */
export class WalletLocks {
  private readonly turns = new Map<string, Turn>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Holds the wallet (its lock taken in a trip of its own when this hold opens the turn). */
  async hold(chainId: number, address: string): Promise<WalletRelease> {
    const hold = await this.take(chainId, address, false);
    return hold.release;
  }

  /**
   * Holds the wallet for work that starts with a database transaction (taking a nonce): when this hold opens the turn,
   * the lock is taken by that transaction's first trip, on a connection then kept until the turn ends (one trip fewer),
   * and the turn's other holders wait for that trip. The lock refused within its bound: the transaction runs again
   * without it, as a broadcast without the lock goes on.
   */
  take(chainId: number, address: string, carried = true): Promise<WalletHold> {
    const db = this.db;
    if (!db.session)
      return Promise.resolve({ transaction: (fn) => db.transaction(fn), release: async () => undefined });
    return this.join(walletLockName(chainId, address), carried);
  }

  private async join(name: string, carried: boolean): Promise<WalletHold> {
    for (;;) {
      const turn = this.turns.get(name);
      if (turn && !turn.closed) return turn.join(carried);
      if (turn) {
        await turn.ended;
        if (this.turns.get(name) === turn) this.turns.delete(name);
        continue;
      }
      this.turns.set(name, new Turn(name, this.db, this.log));
    }
  }
}

/** One hold of a wallet's advisory lock by this process, shared by the holders that join it while it is open. */
class Turn {
  closed = false;
  readonly ended: Promise<void>;
  private end!: () => void;
  private holders = 0;
  /** The session holding the lock once it is taken (undefined: going on without it). */
  private readonly locked: Promise<DbSession | undefined>;
  private settle!: (session: DbSession | undefined) => void;
  private settled = false;
  /** No holder joined yet: the first one takes the lock. */
  private opened = false;
  private closeTimer?: NodeJS.Timeout;
  private holdTimer?: NodeJS.Timeout;
  private unlocking?: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve));
    this.locked = new Promise((resolve) => (this.settle = resolve));
  }

  async join(carried: boolean): Promise<WalletHold> {
    this.holders++;
    const release = this.releaser();
    if (!this.opened) {
      this.opened = true;
      if (carried) return { transaction: this.takingTransaction(), release };
      this.lockApart();
    }
    await this.locked;
    return { transaction: (fn) => this.db.transaction(fn), release };
  }

  private releaser(): WalletRelease {
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (--this.holders === 0) await this.close();
    };
  }

  /**
   * The opening holder's transactions: the first one on a session of its own, the lock taken right after its BEGIN;
   * the lock's wait is bounded (lock_timeout, local to the transaction) and the bound lifted once it is granted.
   */
  private takingTransaction(): WalletHold["transaction"] {
    let first = true;
    return async <T>(fn: (q: Queryable) => Promise<T>): Promise<T> => {
      if (!first || this.settled) {
        await this.locked;
        return this.db.transaction(fn);
      }
      first = false;
      let session: DbSession;
      try {
        session = await this.db.session!();
      } catch (error) {
        this.notTaken(error);
        return this.db.transaction(fn);
      }
      let firstTripError: unknown;
      let tripSent = false;
      const lead = {
        text: `SELECT set_config('lock_timeout', '${MAX_WAIT_MS}', true), pg_advisory_lock(${WALLET_LOCK_KEY.replace("$1", quoted(this.name))}), set_config('lock_timeout', '0', true)`,
        onFirstTrip: (error?: unknown) => {
          tripSent = true;
          if (error) firstTripError = error;
          else this.taken(session);
        },
      };
      try {
        return await session.transaction(fn, lead);
      } catch (error) {
        if (firstTripError === undefined) throw error; // failed after the lock was taken: it is held until the turn ends
        // Whether the lock was granted before the trip failed or not, the connection is closed: it holds nothing.
        session.release(firstTripError as Error);
        if (lockWaitFailed(firstTripError)) {
          this.notTaken(firstTripError);
          return this.db.transaction(fn);
        }
        this.lockApart(); // for the holders waiting; this one failed on its own
        throw error;
      } finally {
        // The transaction sent nothing (it failed or ended before its first statement): the lock is taken apart.
        if (!tripSent) this.lockApart(session);
      }
    };
  }

  /** Takes the lock in a trip of its own (on `session`, else a new one), unless it is taken already. */
  private lockApart(session?: DbSession): void {
    if (this.settled) return session?.release();
    void (async () => {
      try {
        session ??= await this.db.session!();
        // One trip: the wait's bound is set first (a statement's outputs are computed in order), then the lock waits.
        await session.query(`SELECT set_config('lock_timeout', $2, false), pg_advisory_lock(${WALLET_LOCK_KEY})`, [
          this.name,
          String(MAX_WAIT_MS),
        ]);
        this.taken(session);
      } catch (error) {
        this.notTaken(error, session);
      }
    })();
  }

  private taken(session: DbSession): void {
    // Taken apart after the turn ended without it (its opening holder let go first): given back at once.
    if (this.settled) return void this.giveUp(session);
    this.settled = true;
    this.startTimers();
    this.settle(session);
  }

  private notTaken(error: unknown, session?: DbSession): void {
    session?.release(error as Error);
    if (this.settled) return;
    this.log.warn({ wallet: this.name, err: errorFacts(error) }, "wallet lock not taken; broadcasting without it");
    this.settled = true;
    this.startTimers();
    this.settle(undefined);
  }

  private startTimers(): void {
    this.closeTimer = setTimeout(() => {
      this.closed = true;
      if (this.holders === 0) void this.close();
    }, TURN_MS).unref();
    this.holdTimer = setTimeout(() => {
      this.log.warn(
        { wallet: this.name, holders: this.holders },
        "wallet lock held too long; released with broadcasts still in flight",
      );
      void this.close();
    }, MAX_HOLD_MS).unref();
  }

  /** No new holders; the lock is given up (now, or once it is taken if it still is). */
  private close(): Promise<void> {
    this.closed = true;
    if (this.unlocking) return this.unlocking;
    // The opening holder let go before its transaction took the lock: nobody waits for it any more.
    if (!this.settled) this.notTakenQuietly();
    this.unlocking = this.locked.then(async (session) => {
      clearTimeout(this.closeTimer);
      clearTimeout(this.holdTimer);
      if (session) await this.giveUp(session);
      this.end();
    });
    return this.unlocking;
  }

  /** The lock given back and its session returned (or closed, which gives its advisory locks up). */
  private async giveUp(session: DbSession): Promise<void> {
    try {
      await session.query(`SELECT pg_advisory_unlock(${WALLET_LOCK_KEY}), set_config('lock_timeout', '0', false)`, [
        this.name,
      ]);
      session.release();
    } catch (error) {
      this.log.warn(
        { wallet: this.name, err: errorFacts(error) },
        "wallet lock not released; its connection is closed",
      );
      session.release(error as Error);
    }
  }

  private notTakenQuietly(): void {
    this.settled = true;
    this.settle(undefined);
  }
}

/**
 * A trip failed in a wait or with its connection: the lock refused within its bound (55P03), a deadlock (40P01), a
 * cancelled wait (57014), or no answer at all (no SQLSTATE).
 */
function lockWaitFailed(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return [LOCK_NOT_AVAILABLE, "40P01", "57014"].includes(code);
}

/** A text as a SQL literal (the lock's name: chain id and lower-case hex address). */
function quoted(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
