import fs from "node:fs";
import path from "node:path";

/** A path with its symbolic links resolved, as far as it exists. */
function realPath(p: string): string {
  const absolute = path.resolve(p);
  try {
    return fs.realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/**
 * Outside the local sandbox, the embedded database refuses a data key kept inside its own data directory: one copy
 * of DATA_DIR (a backup, a disk image) would then hold both the sealed values and the key that opens them. Answers the
 * problem, or undefined. (The local sandbox keeps its made-up key beside its database on purpose; PostgreSQL keeps its
 * data elsewhere.)
 */
export function keyFilePlacementProblem(
  env: NodeJS.ProcessEnv,
  options: { dataDir: string; embedded: boolean },
): string | undefined {
  const file = env.DATA_ENCRYPTION_KEY_FILE;
  if (!options.embedded || !file) return undefined;
  const key = realPath(file);
  const dataDir = realPath(options.dataDir);
  const relative = path.relative(dataDir, key);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return undefined;
  return `DATA_ENCRYPTION_KEY_FILE: ${file} is inside DATA_DIR (${options.dataDir}), beside the embedded database: one copy of DATA_DIR would hold the sealed values and their key; keep the key outside it (e.g. /run/secrets/data-encryption-key)`;
}
