import { formatEther } from "ethers";
import type { ChainRegistry } from "./chains/registry";
import type { Relayer } from "./engine/relayer";
import type { Stores } from "./store/stores";

/** What these readings need of the service (a part of metrics.ts's MetricsSources). */
type Readable = Pick<Stores, "db"> & { chains: ChainRegistry; relayer: Pick<Relayer, "addresses"> };

// What /metrics reads from the chains and the database pool on each scrape (the metrics register the gauges).

export interface ChainFacts {
  chainId: string;
  up: boolean;
  /** Each relayer key's (its own first); a key whose readings did not answer in time has none. */
  relayers: { address: string; balance?: number; nonceLag?: number }[];
}

/** Each served chain: does it answer, each relayer key's balance and nonce lag (database counter − pending nonce). */
export async function readChains(services: Readable): Promise<ChainFacts[]> {
  return Promise.all(
    services.chains.list().map(async (chain): Promise<ChainFacts> => {
      const facts: ChainFacts = { chainId: String(chain.chainId), up: false, relayers: [] };
      try {
        await withTimeout(chain.provider.getBlockNumber(), 3000);
        facts.up = true;
      } catch {
        return facts; // reported by tak_chain_up; its relayer values are left out
      }
      const readKey = async (address: string) => {
        const [wei, pending, rows] = await Promise.all([
          withTimeout(chain.provider.getBalance(address), 3000),
          withTimeout(chain.provider.getTransactionCount(address, "pending"), 3000),
          services.db.query<{ next_nonce: string }>(
            "SELECT next_nonce::text AS next_nonce FROM wallet_nonces WHERE chain_id = $1 AND address = $2",
            [chain.chainId, address.toLowerCase()],
          ),
        ]);
        return {
          address,
          balance: Number(formatEther(wei)),
          nonceLag: rows[0] ? Number(rows[0].next_nonce) - pending : 0,
        };
      };
      const read = await Promise.allSettled(services.relayer.addresses(chain.chainId).map(readKey));
      facts.relayers = read.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      return facts;
    }),
  );
}

/**
 * The `pg` pool behind a PostgreSQL database (read, never used). The store keeps it private; reading it here keeps the
 * store's interface unchanged (a `stats()` on Db would be the cleaner home once the store is touched anyway).
 */
export function poolOf(
  services: Readable,
): { totalCount: number; idleCount: number; waitingCount: number } | undefined {
  if (services.db.kind !== "postgres") return undefined;
  const pool = (services.db as unknown as { pool?: { totalCount: number; idleCount: number; waitingCount: number } })
    .pool;
  return pool && typeof pool.totalCount === "number" ? pool : undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
