import { checksumAddress } from "../crypto/checksum-address";
import { z } from "zod";

/**
 * Reusable request fields. Existing clients send numbers and booleans as strings and add unknown keys
 * (docs/wire-conventions.md): these schemas accept both forms and normalize them.
 */

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * A 0x-prefixed 20-byte address, normalized to its checksum form. All lower or all upper case is accepted as is; mixed
 * case must be a correct EIP-55 checksum (a typo guard: a mistyped mixed-case address is refused, never "corrected").
 */
export const address = z
  .string({ error: (i) => (i.input === undefined ? "is required" : `must be a string, not ${typeName(i.input)}`) })
  .trim()
  .regex(ADDRESS, "must be a 0x-prefixed 20-byte hex address")
  .refine(
    (v) => !ADDRESS.test(v) || !hasMixedCase(v.slice(2)) || checksumAddress(v.toLowerCase()) === v,
    "has an invalid EIP-55 checksum (mixed case that is not the checksum form)",
  )
  .transform((v) => checksumAddress(v.toLowerCase()))
  .meta({ type: "string", pattern: "^0x[a-fA-F0-9]{40}$", example: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" });

const hasMixedCase = (hex: string) => /[a-f]/.test(hex) && /[A-F]/.test(hex);

/** "a boolean", "an array", … for messages that say what was sent instead. */
export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/** chainId as decimal, 0x hex, or the bare hex codes of the network table; resolved by the chain registry. */
export const chainIdInput = z
  .union([z.string().trim().min(1), z.number().int().positive()], {
    error: (i) =>
      i.input === undefined
        ? "is required"
        : `must be a chain id (decimal, 0x hex or a hex code such as aa36a7), not ${typeName(i.input)}`,
  })
  .meta({ description: "Decimal (11155111), 0x hex (0xaa36a7) or bare hex code (aa36a7)", example: "aa36a7" });

/**
 * A non-negative decimal amount in human units ("1.5"), sent as a string or a number. A JSON number above 2^53 has
 * already lost digits when it arrives, so it is refused: such amounts must be sent as decimal strings.
 */
export const decimalAmount = z
  .union([z.string().trim(), z.number().nonnegative()], {
    error: (i) =>
      i.input === undefined
        ? "is required"
        : `must be a decimal string such as "12.5" (or a number), not ${typeName(i.input)}`,
  })
  .refine(
    (v) => typeof v !== "number" || Math.abs(v) <= Number.MAX_SAFE_INTEGER,
    "is a JSON number above 2^53, which loses digits: send it as a decimal string",
  )
  .transform((v) => (typeof v === "number" ? numberToPlain(v) : v))
  .pipe(
    z
      .string()
      .max(100, "has too many digits")
      .regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal number such as 100 or 12.5"),
  )
  .meta({ type: "string", example: "100" });

/** A non-negative integer sent as a string or a number, at most `max` (e.g. gasLimit, nonce). */
export const boundedIntegerString = (max: bigint, description: string) =>
  z
    .union([z.string().trim(), z.number()], {
      error: (i) =>
        i.input === undefined ? "is required" : `must be a non-negative integer, not ${typeName(i.input)}`,
    })
    .refine(
      (v) => typeof v !== "number" || Math.abs(v) <= Number.MAX_SAFE_INTEGER,
      "is a JSON number above 2^53, which loses digits: send it as a decimal string",
    )
    .refine((v) => typeof v !== "number" || (Number.isInteger(v) && v >= 0), "must be a non-negative integer")
    .transform((v) => String(v))
    .pipe(
      z
        .string()
        .max(80)
        .regex(/^(0x[0-9a-fA-F]+|\d+)$/, "must be a non-negative integer"),
    )
    .refine((v) => !isIntegerText(v) || BigInt(v) <= max, `must be at most ${description}`)
    .meta({ type: "string" });

/** A non-negative integer that fits a uint256, sent as a string or a number. */
export const integerString = boundedIntegerString(2n ** 256n - 1n, "2^256-1");
/** A transaction nonce: EIP-2681 bounds it below 2^64-1; the engine counts nonces as JS numbers, so 2^53-1. */
export const nonceField = boundedIntegerString(BigInt(Number.MAX_SAFE_INTEGER), "2^53-1");
/** A gas limit a client may impose on every prepared transaction: 21,000 to 50,000,000. */
export const gasLimitField = boundedIntegerString(50_000_000n, "50,000,000").refine(
  (v) => !isIntegerText(v) || BigInt(v) >= 21_000n,
  "must be at least 21000",
);

/** Zod runs refinements after a failed format check too: guard conversions with the format. */
function isIntegerText(v: string): boolean {
  return /^(0x[0-9a-fA-F]+|\d+)$/.test(v);
}

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

/**
 * The executionMode a response names: the value the client sent when it is an alias of the mode in effect (a client
 * that sent brickken-relayed reads brickken-relayed back), else the mode in effect.
 */
export function echoedExecutionMode(sent: unknown, effective: ExecutionMode): string {
  return sent === "brickken-relayed" && effective === "service-relayed" ? sent : effective;
}

function numberToPlain(n: number): string {
  if (!Number.isFinite(n)) return "NaN";
  const text = String(n);
  if (!/e/i.test(text)) return text;
  return n.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
}

const boundedInteger = (min: number, max: number, fallback: number) =>
  z
    .union([z.string().trim(), z.number()])
    .optional()
    .transform((v) => (v === undefined || v === "" ? String(fallback) : String(v)))
    .pipe(z.string().regex(/^\d{1,9}$/, `must be an integer from ${min} to ${max}`))
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, `must be an integer from ${min} to ${max}`)
        .max(max, `must be an integer from ${min} to ${max}`),
    )
    .meta({ type: "integer", minimum: min, maximum: max, default: fallback });

/** Paging of list reads: limit 1–100 (default 50), offset ≥ 0 (default 0); clients send both as strings. */
export const pageFields = {
  limit: boundedInteger(1, 100, 50),
  offset: boundedInteger(0, 1_000_000_000, 0),
};
