import fs from "node:fs";
import path from "node:path";

export class DataDirNotFound extends Error {}

/**
 * The data directory an operator command works on when DATA_DIR is not set: the first of `candidates` (the current
 * directory's .data, then the checkout's, where `npm start` keeps the sandbox) that holds this environment's embedded
 * database. Never a fresh one: a command that found none says where it looked rather than creating an empty database
 * (which would then answer `signers list` with `[]`). DATA_DIR, or DATABASE_URL, is used as given.
 */
export function findDataDir(env: NodeJS.ProcessEnv, candidates: string[]): string | undefined {
  if (env.DATABASE_URL || env.DATA_DIR) return env.DATA_DIR;
  const environment = env.ENVIRONMENT || "sandbox";
  const looked = [...new Set(candidates.map((c) => path.resolve(c)))];
  const found = looked.find((dir) => fs.existsSync(path.join(dir, environment, "pglite")));
  if (found) return found;
  throw new DataDirNotFound(
    `No ${environment} database found: looked for ${looked.map((dir) => path.join(dir, environment, "pglite")).join(" and ")}. ` +
      "Start the sandbox first (npm start), or set DATA_DIR to the service's data directory (or DATABASE_URL).",
  );
}
