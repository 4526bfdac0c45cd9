import type { Filter, Log, Provider } from "ethers";

/** Blocks asked for in one eth_getLogs: within what public providers commonly allow (many cap at 10,000). */
export const LOG_RANGE_BLOCKS = 10_000;

/** A node's refusal to answer a range as large as asked (too many blocks or results), as providers word it. */
function isRangeRefusal(error: unknown): boolean {
  const text = `${(error as { message?: string })?.message ?? ""} ${JSON.stringify((error as { info?: unknown; error?: unknown })?.info ?? (error as { error?: unknown })?.error ?? "")}`;
  return /range|too many|limit|exceed|10000 results|response size/i.test(text);
}

/**
 * Every log matching `filter` from `fromBlock` to `toBlock`, in chain order, asked in ranges of at most `rangeBlocks`;
 * a range the node refuses as too large is asked again in halves (down to single blocks).
 */
export async function logsInRanges(
  provider: Pick<Provider, "getLogs">,
  filter: Omit<Filter, "fromBlock" | "toBlock">,
  fromBlock: number,
  toBlock: number,
  rangeBlocks = LOG_RANGE_BLOCKS,
): Promise<Log[]> {
  const logs: Log[] = [];
  let start = fromBlock;
  let size = rangeBlocks;
  while (start <= toBlock) {
    const end = Math.min(toBlock, start + size - 1);
    try {
      logs.push(...(await provider.getLogs({ ...filter, fromBlock: start, toBlock: end })));
      start = end + 1;
    } catch (error) {
      if (size === 1 || !isRangeRefusal(error)) throw error;
      size = Math.max(1, Math.floor(size / 2));
    }
  }
  return logs;
}
