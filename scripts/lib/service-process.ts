import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

/** The compiled service (`npm run build`). */
export const BUILT_SERVICE = path.join(ROOT, "dist", "service", "main.js");

/**
 * The Node.js options `npm run serve` starts the build with (package.json says them once): a semi-space of 1 MiB and
 * V8's size-over-speed mode keep the idle service under 100 MiB on Node 24 (`BENCH_ONLY=memory npm run bench`).
 */
export function serveNodeArgs(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  const words = pkg.scripts.serve.split(/\s+/);
  if (words[0] !== "node" || words.at(-1) !== "dist/service/main.js")
    throw new Error(`npm run serve is not "node … dist/service/main.js": ${pkg.scripts.serve}`);
  return words.slice(1, -1);
}

/** The service from the sources with the local sandbox's posture (the test helpers' child processes). */
export const LOCAL_SERVICE_ARGS = ["-r", "ts-node/register/transpile-only", "scripts/local-service.ts"];

/**
 * How the service is started as a process of its own with the production posture: the one place that says it. With
 * SERVICE_BUILD=dist (the rehearsal scripts set it after `npm run build`) it is the build, as in production
 * (`node dist/service/main.js`); otherwise the same entry point from the sources through ts-node (tests, which must not
 * depend on a build being there).
 */
export function serviceCommand(): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (process.env.SERVICE_BUILD === "dist") {
    if (!fs.existsSync(BUILT_SERVICE))
      throw new Error(`SERVICE_BUILD=dist but ${BUILT_SERVICE} is missing: run npm run build first`);
    return { command: process.execPath, args: [...serveNodeArgs(), BUILT_SERVICE], env: {} };
  }
  return {
    command: process.execPath,
    args: ["-r", "ts-node/register/transpile-only", "service/main.ts"],
    env: { TS_NODE_TRANSPILE_ONLY: "true" },
  };
}

/**
 * `npm run migrate` as the deploy guide runs it before a start, with the service's environment: the build's tool with
 * SERVICE_BUILD=dist, else the same from the sources. Rejects with its output when it fails.
 */
export async function migrateDatabase(env: Record<string, string>): Promise<string> {
  const built = process.env.SERVICE_BUILD === "dist";
  const args = built
    ? [path.join(ROOT, "dist", "service", "operator", "migrate.js")]
    : ["-r", "ts-node/register/transpile-only", "service/operator/migrate.ts"];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...(built ? {} : { TS_NODE_TRANSPILE_ONLY: "true" }),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) throw new Error(`npm run migrate failed (exit ${code}):\n${output.slice(-4000)}`);
  return output;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Where it listens (from its "service listening" log line). */
  url: string;
  /** Everything it printed so far (stdout and stderr, interleaved). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs` (default 15 s) if it has not exited; resolves once it has. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceProcessOptions {
  /** Called with every line the service prints (JSON log lines, or a start-up error). */
  onLine?: (line: string) => void;
  /** How long to wait for it to listen (default 60 s). */
  startTimeoutMs?: number;
}

/**
 * Starts the service (service/main.ts) as its own process with exactly `env` (plus PATH and HOME) in the repository's
 * directory, waits until it listens and answers with its URL. LOG_LEVEL is forced to info at most verbose enough to
 * see its "service listening" line. A service that exits or does not listen in time is killed and reported with its
 * output.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const { command, args, env: commandEnv } = serviceCommand();
  const level = env.LOG_LEVEL && ["trace", "debug", "info"].includes(env.LOG_LEVEL) ? env.LOG_LEVEL : "info";
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...commandEnv, ...env, LOG_LEVEL: level },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let url: string | undefined;
  const partial = { stdout: "", stderr: "" };
  const take = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
    const text = partial[stream] + chunk.toString();
    const lines = text.split("\n");
    partial[stream] = lines.pop() ?? "";
    for (const line of lines) {
      output += line + "\n";
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
      if (!url && line.includes('"service listening"')) {
        try {
          url = JSON.parse(line).url;
        } catch {
          // not a whole JSON line
        }
      }
      options.onLine?.(line);
    }
  };
  child.stdout.on("data", take("stdout"));
  child.stderr.on("data", take("stderr"));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (graceMs = 15_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  while (!url) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the service exited before listening (${child.exitCode ?? child.signalCode}):\n${output.slice(-4000)}`,
      );
    if (Date.now() > deadline) {
      await stop(1000);
      throw new Error(
        `the service did not listen within ${options.startTimeoutMs ?? 60_000} ms:\n${output.slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, output: () => output, stop };
}
