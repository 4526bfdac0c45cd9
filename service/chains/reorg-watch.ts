import type { JsonRpcProvider } from "ethers";
import type { BlockWatcher } from "./blocks";

/** A confirmed transaction's block, watched until it is deep enough. */
export interface WatchedBlock {
  /** Who is told when a reorg takes this block away (e.g. "<txId>:<index>"). */
  key: string;
  blockNumber: number;
  blockHash: string;
}

/** Checks no more often than this (instant chains mine many blocks a second under load). */
const MIN_CHECK_MS = 1_000;

/**
 * Watches the blocks of recently confirmed transactions for reorgs deeper than their confirmations. One cheap check
 * per new head covers them all: a reorg replaces every block above its fork point, so if the highest watched block
 * still has its hash, no watched block was replaced; only when it changed are the others looked at one by one.
 * A block leaves the watch once `depth` blocks are on top of it.
 */
export class ReorgWatch {
  private readonly watched = new Map<string, WatchedBlock>();
  private running = false;
  private destroyed = false;
  /** Reorgs seen by this watch: how many transactions they took off the chain after their confirmations. */
  deepReorgs = 0;
  /** Told of every watched block a reorg took away (the entry has left the watch); set by the batch runner. */
  onReorg: (entry: WatchedBlock) => void = () => undefined;

  constructor(
    private readonly provider: Pick<JsonRpcProvider, "getBlock">,
    private readonly blocks: BlockWatcher,
    /** How many blocks on top of a confirmed block before it is no longer watched. */
    private readonly depth: number,
  ) {}

  add(entry: WatchedBlock): void {
    if (this.destroyed) return;
    this.watched.set(entry.key, entry);
    if (!this.running) void this.loop();
  }

  remove(key: string): void {
    this.watched.delete(key);
  }

  get size(): number {
    return this.watched.size;
  }

  destroy(): void {
    this.destroyed = true;
    this.watched.clear();
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      let seen = this.blocks.head;
      while (!this.destroyed && this.watched.size) {
        const started = Date.now();
        await this.blocks.next(seen, 2_000);
        if (this.blocks.head > seen) {
          seen = this.blocks.head;
          await this.check(seen).catch(() => undefined); // an RPC failure: checked again at the next head
        }
        const rest = MIN_CHECK_MS - (Date.now() - started);
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest).unref?.());
      }
    } finally {
      this.running = false;
    }
  }

  /** One look at the chain as of `head`. */
  async check(head: number): Promise<void> {
    for (const [key, entry] of this.watched) if (head - entry.blockNumber >= this.depth) this.watched.delete(key);
    const entries = [...this.watched.values()].sort((a, b) => b.blockNumber - a.blockNumber);
    if (!entries.length) return;
    const canonical = new Map<number, string | undefined>();
    const hashAt = async (n: number) => {
      if (!canonical.has(n)) canonical.set(n, (await this.provider.getBlock(n))?.hash ?? undefined);
      return canonical.get(n);
    };
    const highest = await hashAt(entries[0].blockNumber);
    // A node behind the block (a lagging backend) knows no hash for it: nothing to conclude.
    if (highest === undefined || highest === entries[0].blockHash) return;
    for (const entry of entries) {
      const hash = await hashAt(entry.blockNumber);
      if (hash === undefined || hash === entry.blockHash) break; // below the fork point: the rest are older still
      this.watched.delete(entry.key);
      this.deepReorgs++;
      this.onReorg(entry);
    }
  }
}
