import type { BlockWatcher } from "./blocks";
import { CoalescedReads } from "../cache/coalesced-reads";

const MAX_ENTRIES = 10_000;

/**
 * Chain reads (eth_call at "latest") of one chain, answered from memory while the chain's head is the one they were
 * read at. A read takes a fresh head when there is one (BlockWatcher.freshHeadNow: one seen by a poll sent at most the
 * read age before the request, 20 ms on an instant chain, a sixth of the block interval on others, at most 1 s), and
 * is answered by an entry read at that head or a later one. So an answer reflects the chain at most the read age
 * before the request arrived: a change made elsewhere (another instance, another wallet) may be missed for that long.
 * A block this instance learns of (a receipt its runner saw: chain.blocks.observe) retires every older entry at once,
 * so a send confirmed by this instance is always seen by the reads that follow it. Without a fresh head (the first
 * read after a quiet spell, or the poll failed) a read does not wait for a poll: it goes to the chain through
 * CoalescedReads, which never answer from before the question, while the poll it started serves the reads after it.
 */
export class BlockReads {
  private head = -1;
  private readonly entries = new Map<string, Promise<unknown>>();
  private readonly uncached = new CoalescedReads();

  constructor(
    private readonly blocks: Pick<BlockWatcher, "freshHeadNow">,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** `load`'s answer; callers of one key must load the same thing (the key names what is read). */
  async read<V>(key: string, load: () => Promise<V>): Promise<V> {
    const head = this.blocks.freshHeadNow();
    if (head === undefined) return this.uncached.read(key, load);
    // A reader given an older head than the entries' (answers interleaved) may take them: they are newer than it needs.
    if (head > this.head) {
      this.entries.clear(); // entries of older heads are never served again
      this.head = head;
    }
    const cached = this.entries.get(key) as Promise<V> | undefined;
    if (cached) return cached;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    const value = load();
    this.entries.set(key, value);
    value.catch(() => {
      if (this.entries.get(key) === value) this.entries.delete(key);
    });
    return value;
  }
}

const perChain = new WeakMap<object, BlockReads>();

/** The cached reads of one chain of one service instance (its registry's chain object). */
export function blockReads(chain: { blocks: BlockWatcher }): BlockReads {
  let reads = perChain.get(chain);
  if (!reads) perChain.set(chain, (reads = new BlockReads(chain.blocks)));
  return reads;
}
