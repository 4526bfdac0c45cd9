import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/**
 * The service as its own OS process (scripts/local-service.ts, or the build), for benchmarks: the chains stay in the bench process, so the
 * service's CPU and memory are its own (RSS read from /proc). It logs warnings only (a log line per request would be
 * part of what is measured), on a free port picked here; it is up once /health answers "ok" (it answers "starting"
 * from the moment its port opens until the service is composed).
 */
export interface ServiceProcess {
  child: ChildProcess;
  /** When the process was spawned (ms since the epoch), and how long until /health first answered 200 (liveness). */
  launchedAt: number;
  healthyAfterMs: number;
  /** How long until /health answered "ok": the API serves from then on. */
  servingAfterMs: number;
  /** CPU time (user + system) the process had used by then (serving): the start's own cost, whatever else the machine runs. */
  healthyCpuSeconds: number;
  url: string;
  output(): string;
  /** Resident set size in MiB (Linux /proc; NaN elsewhere). */
  rssMiB(): number;
  /**
   * A full garbage collection in the service, done when this resolves (with BENCH_HEAP_SNAPSHOTS, after its heap
   * snapshot, which can take a minute): only for a service started with `{ collectableGarbage: true }`
   * (bench/gc-on-signal.ts).
   */
  collectGarbage(): Promise<void>;
  /** POST /admin/command with the operator token. */
  admin(command: Record<string, unknown>): Promise<any>;
  stop(): Promise<void>;
}

/** What bench/gc-on-signal.ts prints after each forced collection. */
export const GC_DONE_MARKER = "bench-gc-done";

export interface StartOptions {
  /** Extra node flags, e.g. ["--cpu-prof"]; default BENCH_SERVICE_NODE_ARGS (space-separated). */
  nodeArgs?: string[];
  /** Let collectGarbage() force a full collection (node --expose-gc with bench/gc-on-signal.ts preloaded). */
  collectableGarbage?: boolean;
  /** Run this compiled entry point (dist/service/main.js) with plain node, from `cwd`, instead of the sources under ts-node. */
  entry?: string;
  cwd?: string;
}

export async function startServiceProcess(
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<ServiceProcess> {
  const nodeArgs = options.nodeArgs ?? (process.env.BENCH_SERVICE_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const gcArgs = options.collectableGarbage ? ["--expose-gc"] : [];
  const gcPreload = options.collectableGarbage ? ["-r", "./bench/gc-on-signal.ts"] : [];
  const adminToken = env.ADMIN_TOKEN ?? "bench-admin-token-0123456789abcdef";
  const port = await freePort();
  // The compiled service preloads the plain-JavaScript twin of bench/gc-on-signal.ts.
  const compiledGcPreload = options.collectableGarbage ? ["-r", path.join(__dirname, "gc-on-signal.js")] : [];
  // From the sources, the local sandbox's service process (scripts/local-service.ts); a build is the production one.
  const program = options.entry
    ? [...compiledGcPreload, options.entry]
    : ["-r", "ts-node/register/transpile-only", ...gcPreload, "scripts/local-service.ts"];
  const launchedAt = Date.now();
  const child = spawn(process.execPath, [...nodeArgs, ...gcArgs, ...program], {
    cwd: options.cwd ?? path.join(__dirname, ".."),
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: env.LOG_LEVEL ?? "warn",
      TS_NODE_TRANSPILE_ONLY: "true",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let collections = 0;
  const keep = (chunk: unknown) => {
    const text = String(chunk);
    collections += text.split(GC_DONE_MARKER).length - 1;
    output = (output + text).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  let healthyAfterMs: number | undefined;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`service did not start:\n${output}`);
    const status = await fetch(`${url}/health`).then(
      async (r) => (r.ok ? ((await r.json()) as { status: string }).status : undefined),
      () => undefined,
    );
    if (status) healthyAfterMs ??= Date.now() - launchedAt;
    if (status === "ok") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const servingAfterMs = Date.now() - launchedAt;
  const healthyCpuSeconds = cpuSeconds(child.pid!);
  const base = url;
  return {
    child,
    launchedAt,
    healthyAfterMs: healthyAfterMs ?? servingAfterMs,
    servingAfterMs,
    healthyCpuSeconds,
    url: base,
    output: () => output,
    rssMiB: () => rssMiB(child.pid!),
    collectGarbage: async () => {
      if (!options.collectableGarbage)
        throw new Error("collectGarbage needs a service started with { collectableGarbage: true }");
      const target = collections + 1;
      child.kill("SIGUSR2");
      for (const deadline = Date.now() + 180_000; collections < target; await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() > deadline) throw new Error(`the service did not report a garbage collection:\n${output}`);
      }
    },
    admin: async (command) => {
      const res = await fetch(`${base}/admin/command`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": adminToken },
        body: JSON.stringify(command),
      });
      const json = (await res.json()) as any;
      if (res.status !== 200)
        throw new Error(`admin ${String(command.command)}: ${res.status} ${JSON.stringify(json)}`);
      return json.result;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function rssMiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used so far, in seconds (Linux /proc; NaN elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Direct children of a process (Linux /proc). */
export function childPids(pid: number): number[] {
  return fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return Number(fs.readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1].split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}
