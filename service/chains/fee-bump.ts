import { parseUnits } from "ethers";
import type { MarketFees } from "./fees";

/**
 * A replacement must raise both the fee cap and the tip by at least 10% (geth's default price bump; nodes refuse
 * "replacement transaction underpriced" otherwise). We raise by 12.5%: above the minimum, and one block's worth of
 * EIP-1559 base-fee rise.
 */
const BUMP_NUMERATOR = 1125n;
const BUMP_DENOMINATOR = 1000n;
const MIN_BUMP_NUMERATOR = 110n;
const MIN_BUMP_DENOMINATOR = 100n;

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

const raised = (value: bigint, num: bigint, den: bigint) => (value * num + den - 1n) / den;

/** The fee cap (wei) of RELAYER_MAX_FEE_GWEI. */
export function feeCapWei(gwei: number): bigint {
  return parseUnits(String(gwei), "gwei");
}

/**
 * Fees for a replacement of a transaction signed with `current`: both raised by 12.5%, and at least what would be
 * mined now (twice the base fee plus the suggested tip), the fee cap never above `cap`. Undefined when the cap leaves
 * no room for a valid replacement (both fees at least 10% above the current ones).
 */
export function replacementFees(current: Fees, market: MarketFees, cap: bigint): Fees | undefined {
  let tip = raised(current.maxPriorityFeePerGas, BUMP_NUMERATOR, BUMP_DENOMINATOR);
  if (market.maxPriorityFeePerGas > tip) tip = market.maxPriorityFeePerGas;
  let max = raised(current.maxFeePerGas, BUMP_NUMERATOR, BUMP_DENOMINATOR);
  const marketMax = market.baseFeePerGas * 2n + tip;
  if (marketMax > max) max = marketMax;
  if (max > cap) max = cap;
  if (tip > max) tip = max;
  const enough = (next: bigint, old: bigint) =>
    next >= raised(old, MIN_BUMP_NUMERATOR, MIN_BUMP_DENOMINATOR) && next > old;
  if (!enough(max, current.maxFeePerGas) || !enough(tip, current.maxPriorityFeePerGas)) return undefined;
  return { maxFeePerGas: max, maxPriorityFeePerGas: tip };
}

/** Whether a client's replacement raises both fees enough for nodes to take it (the 10% minimum). */
export function isValidReplacement(next: Fees, current: Fees): boolean {
  return (
    next.maxFeePerGas >= raised(current.maxFeePerGas, MIN_BUMP_NUMERATOR, MIN_BUMP_DENOMINATOR) &&
    next.maxPriorityFeePerGas >= raised(current.maxPriorityFeePerGas, MIN_BUMP_NUMERATOR, MIN_BUMP_DENOMINATOR) &&
    next.maxFeePerGas > current.maxFeePerGas
  );
}
