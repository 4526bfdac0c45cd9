import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { LOCAL_SERVICE_ARGS } from "../../scripts/lib/service-process";
import { trackProcess } from "./processes";
import { ApiClient } from "./service";

export interface ChildService {
  child: ChildProcess;
  api: ApiClient;
  url: string;
  output: () => string;
}

export interface ServiceProcessOptions {
  /** Run this built entry point (e.g. dist/service/main.js) with plain node instead of the sources under ts-node. */
  entry?: string;
  cwd?: string;
}

/**
 * The service as its own OS process with the local sandbox's posture (scripts/local-service.ts under ts-node; `entry`
 * runs another, e.g. the build, which is always production),
 * so a test can kill it or run two against one database. Its URL comes from its "service listening" log line (LOG_LEVEL
 * must be info or lower). The process is tracked (helpers/processes.ts): a suite's `after(stopStartedProcesses)` ends
 * it whatever happened.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: ServiceProcessOptions = {},
): Promise<ChildService> {
  if (env.DATA_DIR && !env.DATABASE_URL) fs.rmSync(path.join(env.DATA_DIR, "sandbox", "service.json"), { force: true });
  const child = trackProcess(
    spawn(process.execPath, options.entry ? [options.entry] : LOCAL_SERVICE_ARGS, {
      cwd: options.cwd,
      env: { ...process.env, ...env, LOG_LEVEL: "info", LOG_FORMAT: "json", TS_NODE_TRANSPILE_ONLY: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let output = "";
  let url: string | undefined;
  child.stdout.on("data", (chunk) => {
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
  child.stderr.on("data", (chunk) => (output += chunk));
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

/** SIGTERM, then the exit code; SIGKILL and a failure when it has not exited within `ms`. */
export async function stopGracefully(child: ChildProcess, ms = 30_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), ms)));
  const code = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (code === "late") {
    await killHard(child);
    throw new Error(`the service did not exit within ${ms} ms of SIGTERM`);
  }
  return code;
}
