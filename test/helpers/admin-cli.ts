import { spawn } from "node:child_process";
import path from "node:path";
import { expect } from "chai";
import { trackProcess } from "./processes";

const ROOT = path.resolve(__dirname, "../..");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run admin -- <args>` is `node bin/run.js admin <args>`; this runs the same, without npm, on `dataDir`'s sandbox
 * deployment (`tool: "migrate"` runs `npm run migrate`'s). Nothing of this process's service configuration leaks in
 * (database, admin token, RPC URLs, service and RAMS keys, SMTP); `env` adds what the command needs.
 */
export function runAdminCli(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
  tool: "admin" | "migrate" = "admin",
): Promise<CliResult> {
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    ENVIRONMENT: "sandbox",
    DATA_DIR: dataDir,
    TS_NODE_TRANSPILE_ONLY: "true",
  };
  for (const name of Object.keys(base)) {
    if (name === "DATABASE_URL" || name === "ADMIN_TOKEN" || /^(RPC_URL_|RELAYER_PRIVATE_KEY|RAMS_|SMTP_)/.test(name))
      delete base[name];
  }
  return new Promise((resolve, reject) => {
    const child = trackProcess(
      spawn(process.execPath, ["bin/run.js", tool, ...args], {
        cwd: ROOT,
        env: { ...base, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `npm run migrate` on `dataDir`'s sandbox database (what an operator runs before the admin tool opens a new one). */
export async function migrateWithCli(dataDir: string, env: Record<string, string> = {}): Promise<void> {
  cliJson(await runAdminCli(dataDir, [], env, "migrate"));
}

/** The JSON a successful command printed. */
export function cliJson(result: CliResult): any {
  expect(result.code, `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).to.equal(0);
  return JSON.parse(result.stdout);
}

/** The JSON error line a failed command printed on stderr. */
export function cliError(result: CliResult): string {
  return JSON.parse(result.stderr.trim().split("\n").filter(Boolean).pop() ?? "{}").error as string;
}
