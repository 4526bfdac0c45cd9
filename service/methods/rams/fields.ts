import { z } from "zod";
import { address, booleanish, chainIdInput, executionMode, integerString } from "../../wire/fields";
import { REASONS, type ReasonName } from "../../domains/rams/compliance";
import { aliasOf, wireOnly } from "../../wire/field-aliases";

/**
 * Request fields of the RAMS surface (docs/wire-conventions.md, What existing clients send): the same parsers serve the
 * prepare bodies and the query strings of the reads and typed-data routes. Numbers arrive as strings or numbers;
 * everything is normalized to one canonical form (lower-case hex, decimal strings, numbers for uint48 timestamps).
 */

export const MAX_UINT256 = 2n ** 256n - 1n;
export const UINT48_MAX = 2 ** 48 - 1;
export const ZERO_BYTES32 = "0x" + "0".repeat(64);
const hex = (bytes: number) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);

/** A bytes32 (0x + 64 hex), lower-cased. */
export const bytes32 = z
  .string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") })
  .trim()
  .regex(hex(32), "must be a bytes32: 0x + 64 hex characters")
  .transform((v) => v.toLowerCase())
  .meta({ type: "string", pattern: "^0x[a-fA-F0-9]{64}$" });

export const nonZeroBytes32 = bytes32.refine((v) => v !== ZERO_BYTES32, "must not be zero");

/** A 4-byte function selector (0x + 8 hex), lower-cased. */
export const selector = z
  .string()
  .trim()
  .regex(hex(4), "must be a 4-byte selector: 0x + 8 hex characters")
  .transform((v) => v.toLowerCase())
  .meta({ type: "string", pattern: "^0x[a-fA-F0-9]{8}$", example: "0x23b872dd" });

/** An action: a bytes32, or a bare 4-byte selector right-padded to 32 bytes (selector in bytes 0-3). */
export const action = z
  .string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") })
  .trim()
  .regex(/^0x([0-9a-fA-F]{8}|[0-9a-fA-F]{64})$/, "must be a bytes32 (0x + 64 hex) or a 4-byte selector (0x + 8 hex)")
  .transform((v) => (v.length === 10 ? v + "0".repeat(56) : v).toLowerCase())
  .meta({ type: "string", example: "0x23b872dd" });

/** One or more actions: a JSON array, or one string with comma-separated items (query strings). */
export const actions = z
  .union([z.array(z.string()), z.string()], { error: "must be an array of actions (bytes32 or 4-byte selectors)" })
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(action).min(1, "must hold at least one action"))
  .meta({ description: "bytes32 actions or 4-byte selectors (right-padded); at least one", example: ["0x23b872dd"] });

/** A cap in raw base units: decimal string (canonical), 0x hex, number, or max / unlimited (any case) = 2^256-1. */
export const cap = z
  .union([z.string().trim(), z.number()], {
    error: (i) =>
      i.input === undefined ? "is required" : "must be a decimal string, 0x hex, a number, max or unlimited",
  })
  .transform((v, ctx) => {
    const parsed = parseCap(v);
    if (typeof parsed === "string") {
      ctx.issues.push({ code: "custom", message: parsed, input: v });
      return z.NEVER;
    }
    return parsed.toString();
  })
  .meta({
    description:
      "Raw base units (no decimals scaling): decimal (canonical), 0x hex, number, or max / unlimited (2^256-1)",
    example: "1000000",
  });

/** A cap as a bigint, or the reason it is not one. */
export function parseCap(v: string | number): bigint | string {
  let value: bigint;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v) || v < 0)
      return "must be a non-negative integer (send large values as a decimal string)";
    value = BigInt(v);
  } else if (/^(max|unlimited)$/i.test(v)) {
    value = MAX_UINT256;
  } else if (/^\d+$/.test(v) || /^0x[0-9a-fA-F]+$/.test(v)) {
    value = BigInt(v);
  } else {
    return "must be a decimal string, 0x hex, a number, max or unlimited";
  }
  return value > MAX_UINT256 ? "must fit in a uint256 (at most 2^256-1)" : value;
}

/** Unix seconds as a uint48 (validFrom, validUntil, expiresAt, newValidUntil), sent as a string or a number. */
export const uint48 = z
  .union([z.string().trim(), z.number()], {
    error: (i) => (i.input === undefined ? "is required" : "must be unix seconds"),
  })
  .transform((v) => String(v))
  .pipe(z.string().regex(/^\d{1,15}$/, "must be unix seconds (a non-negative integer)"))
  .transform(Number)
  .pipe(z.number().max(UINT48_MAX, "must fit in a uint48"))
  .meta({ type: "integer", description: "Unix seconds (uint48)" });

/** A signature deadline (unix seconds); the 30-day bound is checked against the chain's clock. */
export const deadline = uint48.meta({
  type: "integer",
  description: "Unix seconds; > now, at most 30 days ahead; must equal the signed deadline",
});

/** The principal's EIP-712 signature: 0x hex (65 bytes for an account, any length for a contract wallet). */
export const signature = z
  .string()
  .trim()
  .regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-prefixed hex")
  .max(2 + 2 * 2048, "must be at most 2048 bytes")
  .transform((v) => v.toLowerCase())
  .meta({ type: "string", description: "The principal's EIP-712 signature (omit, or 0x, in direct mode)" });

/** A reason of the compliance enumeration, by name (any case) or code 0-8; normalized to the code. */
export const reason = z
  .union([z.string().trim(), z.number()])
  .transform((v, ctx) => {
    const text = String(v).trim();
    const code = /^\d+$/.test(text) ? Number(text) : REASONS.indexOf(text.toUpperCase() as ReasonName);
    if (!Number.isInteger(code) || code < 0 || code >= REASONS.length) {
      ctx.issues.push({
        code: "custom",
        message: `must be a reason name (${REASONS.join(", ")}) or a code 0-8`,
        input: v,
      });
      return z.NEVER;
    }
    return code;
  })
  .meta({ description: `A name (${REASONS.join(", ")}) or a code 0-8`, example: "AML_FLAG" });

/** An amount in raw base units (decimal or 0x hex, or a number); not a cap, so no max keyword. */
export const rawAmount = z
  .union([z.string().trim(), z.number()])
  .transform((v, ctx) => {
    if (typeof v === "string" && /^(max|unlimited)$/i.test(v)) {
      ctx.issues.push({ code: "custom", message: "must be a number of base units", input: v });
      return z.NEVER;
    }
    const parsed = parseCap(v);
    if (typeof parsed === "string") {
      ctx.issues.push({ code: "custom", message: parsed.replace(", max or unlimited", ""), input: v });
      return z.NEVER;
    }
    return parsed.toString();
  })
  .meta({ type: "string", description: "Raw base units of the asset", example: "500" });

/** 0-255, sent as a string or a number. */
export const amountIndex = z
  .union([z.string().trim(), z.number()])
  .transform((v) => String(v))
  .pipe(z.string().regex(/^\d{1,3}$/, "must be an integer from 0 to 255"))
  .transform(Number)
  .pipe(z.number().max(255, "must be an integer from 0 to 255"))
  .meta({ type: "integer", minimum: 0, maximum: 255 });

/** Fields every RAMS prepare body may carry (ramsGrantPrincipal's and the others'). */
export const ramsCommonFields = {
  method: wireOnly(z.string().optional(), "the path or the tool names the method"),
  chainId: chainIdInput.optional().meta({ description: "11155111 (Sepolia) only; default 11155111" }),
  executionMode: executionMode.optional(),
  signerAddress: address.optional().meta({ description: "Required when client-signed; omitted when service-relayed" }),
  gasLimit: integerString.optional(),
  nonce: integerString.optional(),
  ownerEmail: z.string().optional(),
  email: aliasOf(z.string().optional(), "ownerEmail"),
};

/** The signature-path fields of the four signable operations. */
export const signedFields = {
  signature: signature.optional(),
  deadline: deadline.optional(),
  agentMandateAddress: address.optional().meta({ description: "Overrides the chain's AgentMandate registry" }),
};

export { address, booleanish };
