import type { ZodType } from "zod";

/**
 * Names a new user got nearly right: how far two names are apart, which known name a given one is close to, the
 * fields a schema knows, and the value at a path of the input.
 */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
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

/** knownKeys' answers by schema: a schema does not change once built, and a union of every method's is slow to walk. */
const knownKeysOf = new WeakMap<ZodType, ReadonlySet<string>>();

/** The field names a zod schema knows at its top level (objects, and every branch of unions and intersections). */
export function knownKeys(schema: ZodType | undefined): ReadonlySet<string> {
  if (!schema) return new Set();
  let keys = knownKeysOf.get(schema);
  if (!keys) knownKeysOf.set(schema, (keys = walkKeys(schema)));
  return keys;
}

function walkKeys(schema: ZodType): Set<string> {
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
