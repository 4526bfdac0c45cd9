import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";

/**
 * Whether a payment pays for this request: its `accepted` requirement must be the quote of this request, as the x402
 * reference server matches it (@x402/core: every field but `extra` equal, and every field of the quote's `extra`
 * present and equal in the accepted one; more fields there are allowed). So a payment made for another route
 * (`extra.routeKey`), price, payee, asset, chain or timeout does not pay here.
 *
 * Two allowances for the published CLI, which echoes only scheme, network, asset, amount and payTo:
 * `maxTimeoutSeconds` and `extra` may be left out; what is sent is compared. Addresses compare case-insensitively.
 *
 * Returns why the payment does not match (the 402's reason), or undefined.
 */
export function acceptedMismatch(payload: PaymentPayload, required: PaymentRequirements): string | undefined {
  if (payload?.x402Version !== 2) return "unsupported x402Version (expected 2)";
  const a = payload.accepted as unknown as Record<string, unknown> | undefined;
  if (!a || typeof a !== "object" || Array.isArray(a)) return "payment payload has no accepted requirements";
  if (a.scheme !== required.scheme) return `wrong scheme ${text(a.scheme)} (expected ${required.scheme})`;
  if (a.network !== required.network) return `wrong network ${text(a.network)} (expected ${required.network})`;
  if (!sameAddress(a.asset, required.asset)) return `wrong asset ${text(a.asset)} (expected ${required.asset})`;
  if (!sameAddress(a.payTo, required.payTo)) return `wrong recipient ${text(a.payTo)} (expected ${required.payTo})`;
  if (String(a.amount) !== required.amount) return `wrong amount ${text(a.amount)} (expected ${required.amount})`;
  if (a.maxTimeoutSeconds !== undefined && a.maxTimeoutSeconds !== required.maxTimeoutSeconds) {
    return `wrong maxTimeoutSeconds ${text(a.maxTimeoutSeconds)} (expected ${required.maxTimeoutSeconds})`;
  }
  const quoted = new Set(Object.keys(required));
  const unknown = Object.keys(a).find((key) => !quoted.has(key));
  if (unknown) return `accepted.${unknown} is not part of the quote`;
  if (a.extra !== undefined) {
    const extra = a.extra as Record<string, unknown> | null;
    if (!extra || typeof extra !== "object" || Array.isArray(extra)) return "accepted.extra is not an object";
    for (const [key, value] of Object.entries(required.extra ?? {})) {
      if (!sameJson(extra[key], value)) {
        if (key === "routeKey")
          return `the payment was made for ${text(extra[key])}, not for ${String(value)} (extra.routeKey)`;
        return `accepted extra.${key} ${text(extra[key])} is not the quote's ${JSON.stringify(value)}`;
      }
    }
  }
  const auth = (payload.payload as { authorization?: { to?: string; value?: string } })?.authorization;
  if (auth?.to && !sameAddress(auth.to, required.payTo)) return `authorization pays ${auth.to}, not ${required.payTo}`;
  if (auth?.value !== undefined && String(auth.value) !== required.amount)
    return `authorization value ${auth.value} is not the price ${required.amount}`;
  return undefined;
}

const sameAddress = (a: unknown, b: string) => typeof a === "string" && a.toLowerCase() === b.toLowerCase();

/** Equal as JSON values (object keys in any order). */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "undefined";
}

/** A client's value in a message: short, and never taken for markup. */
function text(v: unknown): string {
  const s = typeof v === "string" ? v : (JSON.stringify(v) ?? "undefined");
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
