import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { serviceCommand } from "../../scripts/lib/service-process";
import { ApiClient } from "./service";

export interface ChildService {
  child: ChildProcess;
  api: ApiClient;
  url: string;
  output: () => string;
}

/**
 * The service as its own OS process (scripts/lib/service-process.ts says how), so a test can kill it or run two
 * against one database.
 * Its URL comes from its "service listening" log line (LOG_LEVEL must be info or lower).
 */
export async function startServiceProcess(env: Record<string, string>): Promise<ChildService> {
  if (env.DATA_DIR && !env.DATABASE_URL) fs.rmSync(path.join(env.DATA_DIR, "sandbox", "service.json"), { force: true });
  const command = serviceCommand();
  const child = spawn(command.command, command.args, {
    env: { ...process.env, ...env, LOG_LEVEL: "info", ...command.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let url: string | undefined;
  child.stdout!.on("data", (chunk) => {
    output += chunk;
    for (const line of String(chunk).split("\n")) {
      if (!line.includes('"service listening"')) continue;
      try {
        url = JSON.parse(line).url;
      } catch {
        // partial line
      }
    }
  });
  child.stderr!.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  while (!url) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`service did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Resumed work and recovered payments are scheduled right after listening; give them a beat to start.
  await new Promise((r) => setTimeout(r, 200));
  return { child, api: new ApiClient(url), url, output: () => output };
}

export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await exited;
}

export async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}
