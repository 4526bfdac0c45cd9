import { parseUnits } from "ethers";
import type { Environment } from "../../service/config";
import { DEFAULT_PRICES, USDC_DECIMALS, type PriceList } from "../../service/payments/pricing";
import type { PriceTier } from "../../service/auth/access-rules";

/** In-memory prices (service/payments/pricing.ts PriceList): a tier's default unless the operation was set. */
export class FakePrices implements PriceList {
  private readonly overrides = new Map<string, bigint>();

  constructor(private readonly environment: Environment) {}

  of(operation: string, tier: PriceTier): Promise<bigint> {
    return Promise.resolve(
      this.overrides.get(operation) ?? parseUnits(DEFAULT_PRICES[this.environment][tier], USDC_DECIMALS),
    );
  }

  set(operation: string, usdc: string): Promise<bigint> {
    const amount = parseUnits(usdc, USDC_DECIMALS);
    this.overrides.set(operation, amount);
    return Promise.resolve(amount);
  }
}
