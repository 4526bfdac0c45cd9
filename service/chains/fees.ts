import type { Chain } from "./registry";

/** At most this old, and (unless the caller takes a lag) read at the newest block the chain's watcher has seen. */
const FEE_TTL_MS = 1_000;
/** Tip when the node cannot suggest one (eth_maxPriorityFeePerGas missing). */
const DEFAULT_TIP = 1_000_000_000n;

/** What it costs to be mined now on a chain (wei). */
export interface MarketFees {
  /** The latest block's base fee: a transaction whose fee cap is below it waits (or is refused by some nodes). */
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Twice the base fee plus the tip: room for six blocks of rising base fee, as ethers and wallets price it. */
  maxFeePerGas: bigint;
}

interface Cached {
  head: number;
  at: number;
  value: Promise<MarketFees>;
}

const cache = new WeakMap<Chain, Cached>();

/**
 * The chain's fees now (latest block's base fee, suggested tip), shared by everything of one block instead of two
 * RPC calls each: prepares, the relayer's signing and fee bumps, waiting notes. Prepared fees are provisional anyway:
 * a wallet may re-price within the send's bound and the relayer re-prices when it signs. `lagBlocks`: fees read up to
 * that many blocks before the newest one will do (still within FEE_TTL_MS).
 */
export function marketFees(chain: Chain, lagBlocks = 0): Promise<MarketFees> {
  const now = Date.now();
  const cached = cache.get(chain);
  const behind = cached ? chain.blocks.head - cached.head : -1;
  if (cached && behind >= 0 && behind <= lagBlocks && now - cached.at < FEE_TTL_MS) return cached.value;
  const value = readMarketFees(chain);
  cache.set(chain, { head: chain.blocks.head, at: now, value });
  value.catch(() => {
    if (cache.get(chain)?.value === value) cache.delete(chain);
  });
  return value;
}

async function readMarketFees(chain: Chain): Promise<MarketFees> {
  const [block, tip] = await Promise.all([
    chain.provider.getBlock("latest"),
    chain.provider.send("eth_maxPriorityFeePerGas", []).then(
      (hex: string) => BigInt(hex),
      () => DEFAULT_TIP,
    ),
  ]);
  const baseFeePerGas = block?.baseFeePerGas ?? 0n;
  return { baseFeePerGas, maxPriorityFeePerGas: tip, maxFeePerGas: baseFeePerGas * 2n + tip };
}
