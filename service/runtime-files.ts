import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Config } from "./config";

/**
 * Files a service running on the embedded database leaves in <DATA_DIR>/<environment>/ so operator tools can reach
 * it (PGlite is single-process): service.json (pid, url) and admin-token (mode 0600).
 */
export const runtimeFilePath = (config: Config) => path.join(config.environmentDir, "service.json");
export const adminTokenPath = (config: Config) => path.join(config.environmentDir, "admin-token");
export const dataEncryptionKeyPath = (config: Config) => path.join(config.environmentDir, "data-encryption-key");

/** The admin token: ADMIN_TOKEN, else the one kept in the data directory, else a new one written there. */
export function ensureAdminToken(config: Config): string {
  return config.ADMIN_TOKEN ?? keptSecret(config, adminTokenPath(config));
}

/** The data encryption key (crypto/sealed.ts): DATA_ENCRYPTION_KEY, else the one kept in the data directory, else a new one. */
export function ensureDataEncryptionKey(config: Config): string {
  return config.DATA_ENCRYPTION_KEY ?? keptSecret(config, dataEncryptionKeyPath(config));
}

/**
 * A random secret kept in a file of the environment's directory (mode 0600), made on first use. Made whole under a
 * temporary name and linked into place, so processes starting together on one data directory all end up with the
 * first one's secret (never one each, never a half-written file).
 */
function keptSecret(config: Config, file: string): string {
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
