import { badRequest, validationError } from "../errors";

/** Deeper than any body of this API; a deeper one is refused before anything walks it recursively. */
export const MAX_INPUT_DEPTH = 32;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Key names that carry a wallet secret (normalized: lower case, letters and digits only). */
const SECRET_KEYS = new Set([
  "privatekey",
  "privkey",
  "mnemonic",
  "seed",
  "seedphrase",
  "mnemonicphrase",
  "secret",
  "secretkey",
  "passphrase",
  "password",
  "walletsecret",
]);
const SECRET_PARTS = ["privatekey", "mnemonic", "seedphrase", "secretkey"];

export const NEVER_SEND_A_KEY =
  "never send a private key or seed phrase to this service: keep it in your wallet and sign locally";

function looksLikeSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  return SECRET_KEYS.has(k) || SECRET_PARTS.some((part) => k.includes(part));
}

function checkText(text: string, path: string, root: string, what: "value" | "key"): void {
  const field = path || root;
  if (text.includes("\u0000"))
    throw validationError(`${field} contains a NUL character`, { field, in: root, part: what });
  if (LONE_SURROGATE.test(text))
    throw validationError(`${field} contains an unpaired UTF-16 surrogate (not valid Unicode text)`, {
      field,
      in: root,
      part: what,
    });
}

/**
 * Refuses, before any schema or handler sees it, input no client of this API sends and the database or the logs must
 * never receive: NUL characters and unpaired surrogates in any key or string (known field or not), nesting deeper than
 * MAX_INPUT_DEPTH, and fields named like a wallet secret (privateKey, mnemonic, seed, …), but those `taken` names (by
 * path: the console's sign-in takes an operator's `password`). Walks iteratively, so a hostile depth cannot overflow
 * the stack. Errors name the field by its path, e.g. `userToMint.0.name`.
 */
export function guardInput(input: unknown, root: "body" | "query", taken: readonly string[] = []): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: input, path: "", depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string") {
      checkText(value, path, root, "value");
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_INPUT_DEPTH)
      throw validationError(`${root} is nested deeper than ${MAX_INPUT_DEPTH} levels (at ${path})`, {
        field: path,
        in: root,
      });
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = path ? `${path}.${key}` : key;
      if (!Array.isArray(value)) {
        checkText(key, childPath, root, "key");
        if (looksLikeSecretKey(key) && !taken.includes(childPath))
          throw badRequest(`${childPath}: ${NEVER_SEND_A_KEY}`, { field: childPath, in: root });
      }
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
}
