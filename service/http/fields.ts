import { getAddress } from "ethers";
import { z } from "zod";

/**
 * Reusable request fields. Existing clients send numbers and booleans as strings and add unknown keys
 * (WIRE-COMPAT §1): these schemas accept both forms and normalize them.
 */

/** A 0x-prefixed 20-byte address in any case; normalized to its checksum form. */
export const address = z
  .string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") })
  .trim()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")
  .transform((v) => getAddress(v.toLowerCase()))
  .meta({ type: "string", pattern: "^0x[a-fA-F0-9]{40}$", example: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });

/** chainId as decimal, 0x hex, or the bare hex codes of the network table; resolved by the chain registry. */
export const chainIdInput = z
  .union([z.string().trim().min(1), z.number().int().positive()], { error: "is required (decimal, 0x hex or a hex code such as aa36a7)" })
  .meta({ description: "Decimal (11155111), 0x hex (0xaa36a7) or bare hex code (aa36a7)", example: "aa36a7" });

/** A non-negative decimal amount in human units ("1.5"), sent as a string or a number. */
export const decimalAmount = z
  .union([z.string().trim(), z.number().nonnegative()])
  .transform((v) => (typeof v === "number" ? numberToPlain(v) : v))
  .pipe(z.string().regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal number such as 100 or 12.5"))
  .meta({ type: "string", example: "100" });

/** A non-negative integer sent as a string or a number (e.g. gasLimit, nonce). */
export const integerString = z
  .union([z.string().trim(), z.number().int().nonnegative()])
  .transform((v) => String(v))
  .pipe(z.string().regex(/^(0x[0-9a-fA-F]+|\d+)$/, "must be a non-negative integer"))
  .meta({ type: "string", example: "300000" });

/** true/false, also as the strings "true"/"false" (N8N sends strings). */
export const booleanish = z
  .union([z.boolean(), z.enum(["true", "false", "TRUE", "FALSE", "True", "False"])])
  .transform((v) => (typeof v === "boolean" ? v : v.toLowerCase() === "true"))
  .meta({ type: "boolean" });

export const email = z.string().trim().email("must be an e-mail address").meta({ example: "issuer@example.com" });

export const executionMode = z
  .enum(["client-signed", "client-broadcast", "service-relayed", "brickken-relayed"])
  .transform((v) => (v === "brickken-relayed" ? "service-relayed" : v))
  .meta({ description: "client-signed (default), client-broadcast or service-relayed (alias brickken-relayed)" });
export type ExecutionMode = "client-signed" | "client-broadcast" | "service-relayed";

function numberToPlain(n: number): string {
  if (!Number.isFinite(n)) return "NaN";
  const text = String(n);
  if (!/e/i.test(text)) return text;
  return n.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
}
