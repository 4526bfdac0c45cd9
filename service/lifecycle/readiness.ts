import type { ChainRegistry } from "../chains/registry";
import type { Db } from "../store/db";
import { withTimeout } from "./bounded";

/** How long the database may take to answer `SELECT 1`, and each chain `eth_blockNumber`, before it counts as down. */
export const DATABASE_CHECK_MS = 2_000;
export const CHAIN_CHECK_MS = 3_000;

export interface Readiness {
  ready: boolean;
  database: { ok: boolean; kind: "pglite" | "postgres"; error?: string };
  chains: { chainId: number; ok: boolean; blockNumber?: number; error?: string }[];
}

/**
 * Whether the database and every configured chain answer, each within its bound, checked in parallel: what a load
 * balancer or an orchestrator asks before sending traffic (GET /ready). Callers arriving while a check runs share it,
 * so a burst of probes costs one query and one RPC call per chain.
 */
/** An error text fit for a public answer: short, and without URLs (an RPC URL may carry a provider's key). */
const publicError = (error: Error) => error.message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "[url]").slice(0, 300);

export class ReadinessCheck {
  private running?: Promise<Readiness>;

  constructor(private readonly services: { db: Db; chains: ChainRegistry }) {}

  check(): Promise<Readiness> {
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<Readiness> {
    const { db, chains } = this.services;
    const [database, chainStates] = await Promise.all([
      withTimeout(db.query("SELECT 1"), DATABASE_CHECK_MS).then(
        () => ({ ok: true, kind: db.kind }),
        (error: Error) => ({ ok: false, kind: db.kind, error: publicError(error) }),
      ),
      Promise.all(
        chains.list().map((chain) =>
          withTimeout(chain.provider.getBlockNumber(), CHAIN_CHECK_MS).then(
            (blockNumber) => ({ chainId: chain.chainId, ok: true, blockNumber }),
            (error: Error) => ({ chainId: chain.chainId, ok: false, error: publicError(error) }),
          ),
        ),
      ),
    ]);
    return { ready: database.ok && chainStates.every((c) => c.ok), database, chains: chainStates };
  }
}
