import { isIP } from "node:net";
import { z } from "zod";

/**
 * How a configuration variable's value is written and read, shared by the variables' schemas: environments, private
 * keys, booleans, durations, comma-separated lists (addresses, chain ids), the forms of TRUST_PROXY.
 */

/** The two sets of networks a deployment serves. They use separate databases; credentials of one never work on the other. */
export const environments = ["sandbox", "production"] as const;
export type Environment = (typeof environments)[number];

export const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex private key");
export const privateKeySchema = privateKey;

export const booleanFromEnv = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

/** "500ms", "5s", "30m", "2h", "1d" (or a bare number of milliseconds) as milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration (e.g. 500ms, 5s, 30m, 2h, 1d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? "ms") as "ms"];
  return Math.round(Number(match[1]) * unit);
}

export const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/** A comma-separated list, each element checked by `element` (its position and value named when one fails). */
export function list<T>(element: (item: string) => T, what: string) {
  return z.string().transform((text, ctx) => {
    const items = text
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const out: T[] = [];
    items.forEach((item, i) => {
      try {
        out.push(element(item));
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: `element ${i + 1} (${JSON.stringify(item)}): ${(error as Error).message}; expected ${what}`,
        });
      }
    });
    return out;
  });
}

export const durations = list((d) => {
  const ms = parseDuration(d);
  if (ms <= 0) throw new Error("a delay must be positive");
  return ms;
}, "comma-separated durations (5s,5m,30m)").refine((l) => l.length > 0, "needs at least one delay");

/** An element of an address list, lower-case. */
export const addressElement = (text: string): string => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new Error("not a 0x-prefixed 20-byte hex address");
  return text.toLowerCase();
};

export const chainIdElement = (text: string): number => {
  if (!/^\d+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text)))
    throw new Error("not a decimal chain id");
  return Number(text);
};

/**
 * TRUST_PROXY in the forms Express's `trust proxy` takes: `false`, `true`, a hop count, or a comma-separated list of
 * addresses, CIDR ranges and the names loopback, linklocal, uniquelocal.
 */
export type TrustProxy = boolean | number | string[];
const PROXY_NAMES = ["loopback", "linklocal", "uniquelocal"];
export const trustProxy = z.string().transform((text, ctx): TrustProxy => {
  const value = text.trim();
  if (value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    if (PROXY_NAMES.includes(entry)) return;
    const [address, prefix, extra] = entry.split("/");
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (!version || !prefixOk || extra !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `element ${i + 1} (${JSON.stringify(entry)}) is not an IP address, a CIDR range or one of ${PROXY_NAMES.join(", ")}; expected false, a hop count or such a list`,
      });
    }
  });
  return entries;
});
