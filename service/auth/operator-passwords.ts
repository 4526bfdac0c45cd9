import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

/**
 * Operators' passwords, kept as scrypt hashes (memory-hard: 32 MiB and about 0.1 s of one core per guess, so a stolen
 * table is slow to attack on any hardware). The stored form names its parameters, so they can be raised later without
 * breaking the hashes already stored: `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>`.
 */
const PARAMETERS = { N: 32_768, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
/** scrypt needs 128·N·r bytes; Node refuses more than maxmem. */
const maxmemOf = (N: number, r: number) => 256 * N * r;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;
/**
 * The least zxcvbn score a new password must have: 3 ("safely unguessable", about 10^8 guesses and more) is out of
 * reach of online guessing under the sign-in limits, and slow against a stolen table of scrypt hashes.
 */
export const PASSWORD_MIN_SCORE = 3;

/**
 * zxcvbn-ts (the maintained TypeScript port of Dropbox's estimator) with its common-password, name and keyboard-pattern
 * lists and English words: loaded and built at the first check (its dictionaries take a few hundred milliseconds, which
 * a start of the service or of the admin tool should not pay).
 */
let estimator: Promise<ZxcvbnFactory> | undefined;
async function strengthOf(password: string, userInputs: string[]) {
  estimator ??= (async () => {
    const [{ ZxcvbnFactory }, common, english] = await Promise.all([
      import("@zxcvbn-ts/core"),
      import("@zxcvbn-ts/language-common"),
      import("@zxcvbn-ts/language-en"),
    ]);
    return new ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...english.dictionary },
      graphs: common.adjacencyGraphs,
      translations: english.translations,
    });
  })();
  return (await estimator).check(password, userInputs);
}

/**
 * Why a password is refused, or undefined when it may be used: too short or too long, or too easy to guess (a score
 * below PASSWORD_MIN_SCORE: repeated characters, a common password, keyboard patterns, a date, or the words of
 * `userInputs`, e.g. the operator's e-mail), with the estimator's own advice.
 */
export async function passwordProblem(password: string, userInputs: string[] = []): Promise<string | undefined> {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  const inputs = userInputs.flatMap((input) => [input, ...input.split(/[^A-Za-z0-9]+/).filter((w) => w.length > 2)]);
  const { score, feedback } = await strengthOf(password, inputs);
  if (score >= PASSWORD_MIN_SCORE) return undefined;
  const advice = [feedback.warning, ...feedback.suggestions].filter(Boolean).join(" ");
  return `is too easy to guess (strength ${score} of 4, at least ${PASSWORD_MIN_SCORE} needed)${advice ? `: ${advice}` : ""}`;
}

function derive(
  password: string,
  salt: Buffer,
  options: ScryptOptions & { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize("NFC"),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: maxmemOf(options.N, options.r) },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMETERS);
  return ["scrypt", PARAMETERS.N, PARAMETERS.r, PARAMETERS.p, salt.toString("base64"), key.toString("base64")].join(
    "$",
  );
}

/** A stored hash nobody's password matches, verified instead when there is no account: a miss costs as long as a hit. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` is the one `stored` was made from (compared in constant time). With no stored hash (no such
 * operator, or one without a password) a decoy is verified, so the answer takes as long and is false.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const against = stored ?? (await (decoy ??= hashPassword(randomBytes(32).toString("hex"))));
  const [scheme, N, r, p, salt, key] = against.split("$");
  if (scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const derived = await derive(password, Buffer.from(salt, "base64"), { N: Number(N), r: Number(r), p: Number(p) });
  return (
    derived.length === expected.length && timingSafeEqual(derived, expected) && stored !== undefined && stored !== null
  );
}
