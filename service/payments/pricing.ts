import { formatUnits, parseUnits } from "ethers";
import type { Environment } from "../config";
import { TtlCache } from "../cache/ttl-cache";
import type { Db } from "../store/db";
import type { PriceTier } from "../auth/access-rules";

export type { PriceTier };

/**
 * Default prices per environment (docs/reference/methods.md shows them): the sandbox charges a flat 0.01 USDC per
 * write; agent getters 0.000001 USDC; RAMS reads a cheaper getter tier; the faucet 0.01 USDC. Production write prices
 * are the operator's to set: stored overrides (npm run admin -- prices set) win over these defaults.
 */
export const DEFAULT_PRICES: Record<Environment, Record<PriceTier, string>> = {
  sandbox: { write: "0.01", faucet: "0.01", agentGetter: "0.000001", ramsRead: "0.001" },
  production: { write: "0.98", faucet: "0.01", agentGetter: "0.000001", ramsRead: "0.001" },
};

export const USDC_DECIMALS = 6;

export const displayPrice = (amount: bigint) =>
  `${formatUnits(amount, USDC_DECIMALS).replace(/\.?0+$/, "") || "0"} USDC`;

/** How long an instance quotes a stored price after reading it: an operator's change reaches other instances within this. */
const PRICE_CACHE_MS = 1_000;

/** What a price is asked of (auth/gate.ts): an operation's price, in base units of USDC. */
export interface PriceList {
  of(operation: string, tier: PriceTier): Promise<bigint>;
}

/** Prices of this environment: the stored override of an operation, else its tier's default. */
export class Prices implements PriceList {
  /** operation → its stored override, or null when it has none (a paid call quotes and checks its price twice). */
  private readonly overridden = new TtlCache<string, bigint | null>(PRICE_CACHE_MS, 1_000);

  constructor(
    private readonly db: Db,
    private readonly environment: Environment,
  ) {}

  async of(operation: string, tier: PriceTier): Promise<bigint> {
    let stored = this.overridden.get(operation);
    if (stored === undefined) {
      const [row] = await this.db.query<{ amount: string }>(
        "SELECT amount FROM prices WHERE environment = $1 AND operation = $2",
        [this.environment, operation],
      );
      stored = row ? BigInt(row.amount) : null;
      this.overridden.set(operation, stored);
    }
    return stored ?? parseUnits(DEFAULT_PRICES[this.environment][tier], USDC_DECIMALS);
  }

  async set(operation: string, usdc: string): Promise<bigint> {
    const amount = parseUnits(usdc, USDC_DECIMALS);
    this.overridden.delete(operation);
    await this.db.query(
      `INSERT INTO prices (environment, operation, amount) VALUES ($1, $2, $3)
       ON CONFLICT (environment, operation) DO UPDATE SET amount = EXCLUDED.amount`,
      [this.environment, operation, amount.toString()],
    );
    this.overridden.delete(operation);
    return amount;
  }

  async overrides(): Promise<{ operation: string; amount: string }[]> {
    const rows = await this.db.query<{ operation: string; amount: string }>(
      "SELECT operation, amount FROM prices WHERE environment = $1 ORDER BY operation",
      [this.environment],
    );
    return rows.map((r) => ({ operation: r.operation, amount: formatUnits(BigInt(r.amount), USDC_DECIMALS) }));
  }
}
