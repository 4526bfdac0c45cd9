import type { FeeData } from "ethers";
import type { Chain } from "./registry";

/** At most this old, and never older than the newest block the chain's watcher has seen. */
const FEE_TTL_MS = 1_000;

interface Cached {
  head: number;
  at: number;
  value: Promise<FeeData>;
}

const cache = new WeakMap<Chain, Cached>();

/**
 * The chain's fee data (latest block's base fee, priority fee), shared by the prepares of one block instead of three
 * more RPC calls each. Prepared fees are provisional anyway: a wallet may re-price within the send's bound and the
 * relayer re-prices when it signs.
 */
export function feeData(chain: Chain): Promise<FeeData> {
  const now = Date.now();
  const cached = cache.get(chain);
  if (cached && cached.head === chain.blocks.head && now - cached.at < FEE_TTL_MS) return cached.value;
  const value = chain.provider.getFeeData();
  cache.set(chain, { head: chain.blocks.head, at: now, value });
  value.catch(() => {
    if (cache.get(chain)?.value === value) cache.delete(chain);
  });
  return value;
}
