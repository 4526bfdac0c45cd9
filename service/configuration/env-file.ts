import fs from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

/**
 * The file of NAME=value lines the service and the admin tool read at start, so one file configures both: ENV_FILE
 * when set (it must exist), else `.env` in the working directory when there is one. Variables already in the
 * environment win over the file's. The local sandbox never reads it.
 */
export function withEnvFile(env: NodeJS.ProcessEnv, cwd = process.cwd()): { env: NodeJS.ProcessEnv; file?: string } {
  const named = env.ENV_FILE;
  const file = named ? path.resolve(cwd, named) : path.join(cwd, ".env");
  if (!named && !fs.existsSync(file)) return { env };
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`ENV_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
  const fromFile = parseEnv(text) as Record<string, string>;
  return { env: { ...fromFile, ...env }, file };
}
