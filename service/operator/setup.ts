import fs from "node:fs";
import path from "node:path";
import { findDataDir } from "./data-dir";
import { loadConfig, type Config } from "../config";
import { withEnvFile } from "../configuration/env-file";
import { adminTokenPath, runtimeFilePath } from "../runtime-files";
import { openDb, type Db } from "../store/db";

/** The checkout (or install) this tool runs from: the nearest directory above it with a package.json. */
export function installRoot(from = __dirname): string {
  let dir = from;
  while (!fs.existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/**
 * The operator tools' configuration: the service's own (the environment, then ENV_FILE or ./.env), checked by the same
 * schema (an unknown or misspelt name is refused as at the service's start), without the service's secrets required.
 * Without DATA_DIR or DATABASE_URL, the embedded database of the local sandbox (./.data, else the checkout's) when
 * `existing` and there is one.
 */
export function operatorConfig(options: { existing: boolean }): Config {
  const { env } = withEnvFile(process.env);
  const dataDir = options.existing ? findDataDir(env, [".data", path.join(installRoot(), ".data")]) : env.DATA_DIR;
  return loadConfig({ ...env, ...(dataDir ? { DATA_DIR: dataDir } : {}) }, { tool: "admin" });
}

export function openConfiguredDb(config: Config): Promise<Db> {
  return openDb({
    databaseUrl: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    dataDir: path.join(config.environmentDir, "pglite"),
  });
}

/** The running service that owns the embedded database, if any (PGlite is single-process). */
export function runningService(config: Config): { pid: number; url: string; token?: string } | undefined {
  if (config.DATABASE_URL) return undefined;
  const runtimeFile = runtimeFilePath(config);
  if (!fs.existsSync(runtimeFile)) return undefined;
  const { pid, url } = JSON.parse(fs.readFileSync(runtimeFile, "utf8")) as { pid: number; url: string };
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return undefined; // stale file of a process that died
  }
  // ADMIN_TOKEN as the service has it; the local sandbox keeps the one it made beside its database.
  const tokenFile = adminTokenPath(config);
  const token =
    config.ADMIN_TOKEN ?? (fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, "utf8").trim() : undefined);
  return { pid, url, token };
}
