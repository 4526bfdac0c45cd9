import { errorFacts, type Logger } from "../logger";
import type { Db, DbSession } from "./db";

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

/** Ends a hold taken with WalletLocks.hold; resolves once the lock is given up when it was the turn's last holder. */
export type WalletRelease = () => Promise<void>;

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

  async hold(chainId: number, address: string): Promise<WalletRelease> {
    if (!this.db.session) return async () => undefined;
    const name = walletLockName(chainId, address);
    for (;;) {
      const turn = this.turns.get(name);
      if (turn && !turn.closed) return turn.join();
      if (turn) {
        await turn.ended;
        if (this.turns.get(name) === turn) this.turns.delete(name);
        continue;
      }
      this.turns.set(name, new Turn(name, () => this.db.session!(), this.log));
    }
  }
}

/** One hold of a wallet's advisory lock by this process, shared by the holders that join it while it is open. */
class Turn {
  closed = false;
  readonly ended: Promise<void>;
  private end!: () => void;
  private holders = 0;
  private readonly locked: Promise<DbSession | undefined>;
  private closeTimer?: NodeJS.Timeout;
  private holdTimer?: NodeJS.Timeout;
  private unlocking?: Promise<void>;

  constructor(
    private readonly name: string,
    openSession: () => Promise<DbSession>,
    private readonly log: Logger,
  ) {
    this.ended = new Promise((resolve) => (this.end = resolve));
    this.locked = this.lock(openSession);
  }

  async join(): Promise<WalletRelease> {
    this.holders++;
    await this.locked;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (--this.holders === 0) await this.close();
    };
  }

  private async lock(openSession: () => Promise<DbSession>): Promise<DbSession | undefined> {
    let session: DbSession | undefined;
    try {
      session = await openSession();
      // One trip: the wait's bound is set first (a statement's outputs are computed in order), then the lock waits.
      await session.query(`SELECT set_config('lock_timeout', $2, false), pg_advisory_lock(${WALLET_LOCK_KEY})`, [
        this.name,
        String(MAX_WAIT_MS),
      ]);
    } catch (error) {
      this.log.warn({ wallet: this.name, err: errorFacts(error) }, "wallet lock not taken; broadcasting without it");
      session?.release(error as Error);
      session = undefined;
    }
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
    return session;
  }

  /** No new holders; the lock is given up (now, or once the session is open if it still opens). */
  private close(): Promise<void> {
    this.closed = true;
    if (this.unlocking) return this.unlocking;
    clearTimeout(this.closeTimer);
    clearTimeout(this.holdTimer);
    this.unlocking = this.locked.then(async (session) => {
      if (session) {
        try {
          await session.query(`SELECT pg_advisory_unlock(${WALLET_LOCK_KEY}), set_config('lock_timeout', '0', false)`, [
            this.name,
          ]);
          session.release();
        } catch (error) {
          // The connection is discarded: a session that ends gives its advisory locks up.
          this.log.warn(
            { wallet: this.name, err: errorFacts(error) },
            "wallet lock not released; its connection is closed",
          );
          session.release(error as Error);
        }
      }
      this.end();
    });
    return this.unlocking;
  }
}
