import { parseUnits } from "ethers";
import { badRequest } from "../errors";
// Token amounts: human units (decimal strings) and base units (bigint), bounded by uint256.

export const MAX_UINT256 = 2n ** 256n - 1n;

/** Human amount ("12.5") to base units; a 400 naming the field when it has too many decimals, is zero or exceeds uint256. */
export function toUnits(
  amount: string,
  decimals: number,
  field: string,
  options: { allowZero?: boolean } = {},
): bigint {
  const [, fraction = ""] = amount.split(".");
  if (fraction.length > decimals)
    throw badRequest(`${field} has more than ${decimals} decimal places`, { field, decimals });
  const units = parseUnits(amount, decimals);
  if (units === 0n && !options.allowZero) throw badRequest(`${field} must be greater than 0`, { field });
  if (units > MAX_UINT256)
    throw badRequest(`${field} is too large: ${amount} with ${decimals} decimals exceeds uint256`, { field });
  return units;
}

/**
 * Base units to a human amount without trailing zeros ("1.5", "2", "0"): what ethers' formatUnits gives minus its ".0",
 * in plain bigint arithmetic (formatUnits builds a FixedNumber each call, a measurable share of a hot read).
 */
export function fromUnits(units: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255)
    throw new RangeError(`decimals must be an ERC-20 uint8, not ${decimals}`);
  const sign = units < 0n ? "-" : "";
  const magnitude = units < 0n ? -units : units;
  if (decimals === 0) return sign + magnitude.toString();
  const digits = magnitude.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, "");
  return sign + whole + (fraction ? "." + fraction : "");
}
