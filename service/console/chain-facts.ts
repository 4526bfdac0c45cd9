import type { Chain } from "../chains/registry";
import type { Config } from "../config";
import type { StuckBound } from "../store/batch-search";

/** A chain's head is asked for at most this long: a chain that does not answer shows as such, it never holds a page. */
export const HEAD_TIMEOUT_MS = 3_000;
/** Blocks the block time is measured over, and how long a measurement is kept. */
const BLOCK_TIME_SPAN = 20;
const BLOCK_TIME_TTL_MS = 5 * 60_000;
/** What a block time is taken to be before it could be measured. */
const DEFAULT_BLOCK_SECONDS = 12;

/** What the console knows of a served chain right now: its head (if it answered) and how fast its blocks come. */
export interface ChainFacts {
  chainId: number;
  name: string;
  /** The native currency's symbol (ETH, BNB…): every balance and fee shows it. */
  currency: string;
  head: { number: number; timestamp: number; baseFeePerGas: bigint | null } | null;
  /** Seconds between blocks, measured over the last BLOCK_TIME_SPAN blocks (at least 1). */
  blockSeconds: number;
  /** The block explorer links go to; null: none (links are left out). */
  explorer: string | null;
}

const blockTimes = new WeakMap<Chain, { seconds: number; at: number }>();

/**
 * The block explorer of a chain: EXPLORER_URL_<chainId>, else the public network's (the network table), never one for
 * the local sandbox's chains (they share public chain ids but none of their blocks).
 */
export function explorerOf(config: Pick<Config, "explorerUrls" | "profile">, chain: Chain): string | null {
  const configured = config.explorerUrls?.get(chain.chainId);
  if (configured) return configured;
  if (config.profile === "local") return null;
  return chain.network.blockExplorerUrl ? chain.network.blockExplorerUrl.replace(/\/$/, "") : null;
}

/** Every served chain's facts, read in parallel, each within HEAD_TIMEOUT_MS. */
export function chainFacts(chains: Chain[], config: Pick<Config, "explorerUrls" | "profile">): Promise<ChainFacts[]> {
  return Promise.all(chains.map((chain) => factsOf(chain, config)));
}

async function factsOf(chain: Chain, config: Pick<Config, "explorerUrls" | "profile">): Promise<ChainFacts> {
  const block = await withTimeout(chain.provider.getBlock("latest"), HEAD_TIMEOUT_MS).catch(() => null);
  const head = block
    ? { number: block.number, timestamp: block.timestamp, baseFeePerGas: block.baseFeePerGas ?? null }
    : null;
  return {
    chainId: chain.chainId,
    name: chain.network.name,
    currency: chain.network.currencyName || "ETH",
    head,
    blockSeconds: head ? await blockSeconds(chain, head) : (blockTimes.get(chain)?.seconds ?? DEFAULT_BLOCK_SECONDS),
    explorer: explorerOf(config, chain),
  };
}

/** The chain's block time: the span of its last BLOCK_TIME_SPAN blocks over their count, measured every few minutes. */
async function blockSeconds(chain: Chain, head: { number: number; timestamp: number }): Promise<number> {
  const known = blockTimes.get(chain);
  if (known && Date.now() - known.at < BLOCK_TIME_TTL_MS) return known.seconds;
  const span = Math.min(BLOCK_TIME_SPAN, head.number);
  if (span < 1) return known?.seconds ?? DEFAULT_BLOCK_SECONDS;
  const earlier = await withTimeout(chain.provider.getBlock(head.number - span), HEAD_TIMEOUT_MS).catch(() => null);
  if (!earlier) return known?.seconds ?? DEFAULT_BLOCK_SECONDS;
  const seconds = Math.max(1, Math.round(((head.timestamp - earlier.timestamp) / span) * 10) / 10);
  blockTimes.set(chain, { seconds, at: Date.now() });
  return seconds;
}

/** A head's age in seconds now. */
export const headAgeSeconds = (facts: ChainFacts, now = Date.now()) =>
  facts.head ? Math.max(0, Math.round(now / 1000 - facts.head.timestamp)) : null;

/**
 * Where each chain's transactions count as stuck: first broadcast `afterBlocks` blocks or more before the head (or, for
 * rows without the block, as long ago at the chain's block time), or priced below the head's base fee.
 */
export function stuckBounds(facts: ChainFacts[], afterBlocks: number, now = Date.now()): StuckBound[] {
  return facts.map((f) => ({
    chainId: f.chainId,
    maxBroadcastBlock: f.head ? f.head.number - afterBlocks : null,
    sentBefore: new Date(now - afterBlocks * f.blockSeconds * 1000).toISOString(),
    baseFeePerGas: f.head?.baseFeePerGas?.toString() ?? null,
  }));
}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
