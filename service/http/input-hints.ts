import type { ZodType } from "zod";
import { ApiError } from "../errors";

/**
 * Hints for input a new user got nearly right. Unknown body keys are accepted (existing clients send
 * raw option keys next to the normalized ones), so a misspelled field is not refused by itself; but when the request
 * fails because a field is missing and the body carries an unknown key that is a near miss of it (`tokenSymbl` for
 * `tokenSymbol`), the error names that key and the field it was probably meant to be.
 */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[s.length][t.length];
}

/** How far a key may be from a field name to count as a misspelling of it: none for short names, more for long ones. */
function tolerance(name: string): number {
  if (name.length <= 3) return 0;
  if (name.length <= 6) return 1;
  return 2;
}

/** The name among `candidates` closest to `given`, if it is close enough to be a misspelling (a different name). */
export function closestName(given: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name === given) continue;
    const distance = editDistance(given, name);
    if (distance <= tolerance(name) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** The field names a zod schema knows at its top level (objects, and every branch of unions and intersections). */
export function knownKeys(schema: ZodType | undefined): Set<string> {
  const keys = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (s: unknown) => {
    if (!s || typeof s !== "object" || seen.has(s)) return;
    seen.add(s);
    const def = (s as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (!def) return;
    const shape = def.shape as Record<string, unknown> | undefined;
    if (shape) for (const key of Object.keys(shape)) keys.add(key);
    for (const inner of [def.innerType, def.in, def.left, def.right, def.schema]) walk(inner);
    if (Array.isArray(def.options)) for (const option of def.options) walk(option);
  };
  walk(schema);
  return keys;
}

/** The value at `path` inside `input` (undefined where the path leaves the objects). */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * When `error` is invalid input about a field that is missing from `input`, and `input` (at the same level) carries an
 * unknown key that is a near miss of that field, the same error with a message that names the key and the field:
 * `tokenSymbol is required. Received unknown parameter: tokenSymbl. Did you mean tokenSymbol?` Otherwise `error`.
 * `known` holds the fields the route knows (a known field is never taken for a misspelling).
 */
export function withMisspellingHint(error: unknown, input: unknown, known: Set<string> = new Set()): unknown {
  if (!(error instanceof ApiError) || error.code !== "BAD_REQUEST" || !error.param) return error;
  const path = error.param.split(".");
  if (valueAt(input, path) !== undefined) return error;
  const container = valueAt(input, path.slice(0, -1));
  if (!isObject(container)) return error;
  const field = path[path.length - 1];
  const topLevel = path.length === 1;
  const unknownKeys = Object.keys(container).filter((key) => key !== field && !(topLevel && known.has(key)));
  const misspelled = unknownKeys.find((key) => closestName(key, [field]) === field);
  if (!misspelled) return error;
  const prefix = path.length > 1 ? `${path.slice(0, -1).join(".")}.` : "";
  const message = `${error.message.replace(/\.$/, "")}. Received unknown parameter: ${prefix}${misspelled}. Did you mean ${field}?`;
  return new ApiError(error.code, message, { ...error.details, unknownParameter: `${prefix}${misspelled}`, didYouMean: error.param }, error.headers, error.param);
}
