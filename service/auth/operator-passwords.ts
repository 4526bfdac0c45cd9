import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

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

/** Why a password is refused (too short or too long), or undefined when it may be used. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return undefined;
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
