import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ConfigError, type Config } from "./config";

/**
 * Files a service running on the embedded database leaves in <DATA_DIR>/<environment>/ so operator tools can reach
 * it (PGlite is single-process): service.json (pid, url); in the local sandbox also the secrets it made up,
 * admin-token and data-encryption-key (mode 0600).
 */
type Dirs = Pick<Config, "environmentDir">;
export const runtimeFilePath = (config: Dirs) => path.join(config.environmentDir, "service.json");
export const adminTokenPath = (config: Dirs) => path.join(config.environmentDir, "admin-token");
export const dataEncryptionKeyPath = (config: Dirs) => path.join(config.environmentDir, "data-encryption-key");

/**
 * The admin token: ADMIN_TOKEN; in the local sandbox only, else the one kept in the data directory, else a new one
 * written there. A production start never makes a secret up (loadConfig already refused one without it).
 */
export function ensureAdminToken(config: Pick<Config, "ADMIN_TOKEN" | "profile" | "environmentDir">): string {
  if (config.ADMIN_TOKEN) return config.ADMIN_TOKEN;
  if (config.profile !== "local")
    throw new ConfigError("Invalid configuration: ADMIN_TOKEN: required outside the local sandbox");
  return keptSecret(config, adminTokenPath(config));
}

/** The data encryption key: DATA_ENCRYPTION_KEY; in the local sandbox only, else the kept one, else a new one. */
export function ensureDataEncryptionKey(
  config: Pick<Config, "DATA_ENCRYPTION_KEY" | "profile" | "environmentDir">,
): string {
  if (config.DATA_ENCRYPTION_KEY) return config.DATA_ENCRYPTION_KEY;
  if (config.profile !== "local")
    throw new ConfigError("Invalid configuration: DATA_ENCRYPTION_KEY: required outside the local sandbox");
  return keptSecret(config, dataEncryptionKeyPath(config));
}

/**
 * A random secret kept in a file of the environment's directory (mode 0600), made on first use. Made whole under a
 * temporary name and linked into place, so processes starting together on one data directory all end up with the
 * first one's secret (never one each, never a half-written file).
 */
export function keptSecret(config: Pick<Config, "environmentDir">, file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
  fs.mkdirSync(config.environmentDir, { recursive: true, mode: 0o700 });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(draft, randomBytes(32).toString("base64url"), { mode: 0o600 });
  try {
    fs.linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    fs.rmSync(draft, { force: true });
  }
  return fs.readFileSync(file, "utf8").trim();
}

export function writeRuntimeFile(config: Config, facts: { pid: number; url: string }) {
  if (config.DATABASE_URL) return;
  fs.mkdirSync(config.environmentDir, { recursive: true });
  fs.writeFileSync(runtimeFilePath(config), JSON.stringify(facts, null, 2), { mode: 0o600 });
}

export function removeRuntimeFile(config: Config) {
  if (config.DATABASE_URL) return;
  fs.rmSync(runtimeFilePath(config), { force: true });
}
