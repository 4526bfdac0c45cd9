import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { childPids, rssMiB } from "./service-process";

const ROOT = path.resolve(__dirname, "..");
const IDLE_MS = 20_000;

export interface SandboxMemory {
  measuredAt: string;
  loadAverage: number[];
  /** RSS (MiB) 20 s after each was up: `npm start` (dev.ts and its chains' process, summed), then the halves apart. */
  npmStart: { rssMiB: number; peakMiB: number };
  chains: { rssMiB: number; peakMiB: number };
  service: { rssMiB: number; peakMiB: number };
}

/** Peak RSS so far (VmHWM), in MiB. */
function peakMiB(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

/** `npm start` (dev), `npm run chains` or `npm run service` from the sources, on free ports, on `dataDir`. */
export function script(
  name: string,
  dataDir: string,
  env: Record<string, string> = {},
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", `scripts/${name}.ts`], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOCAL_SEPOLIA_PORT: "0",
      LOCAL_BASE_SEPOLIA_PORT: "0",
      PORT: "0",
      LOG_LEVEL: "warn",
      TS_NODE_TRANSPILE_ONLY: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-200_000)));
  child.stderr.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-200_000)));
  return { child, output: () => output };
}

export async function until(
  what: string,
  proc: { child: ChildProcess; output: () => string },
  text: string,
): Promise<void> {
  for (
    const deadline = Date.now() + 240_000;
    !proc.output().includes(text);
    await new Promise((r) => setTimeout(r, 200))
  ) {
    if (proc.child.exitCode !== null || Date.now() > deadline)
      throw new Error(`${what} did not come up:\n${proc.output().slice(-3000)}`);
  }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
}

/**
 * What `npm start` costs (the service from the sources, and the sandbox's two local chains in a child process) and what
 * each half costs on its own (`npm run chains`, `npm run service`), each on a data directory it already used once
 * (the usual restart), RSS read 20 s after it was up.
 */
export async function measureSandboxMemory(log: (line: string) => void = console.log): Promise<SandboxMemory> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-sandbox-memory-"));
  // A process with the processes it started (npm start's chains run in a child of their own).
  const sample = async (pid: number) => {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const tree = [pid, ...childPids(pid)];
    const sum = (read: (p: number) => number) => Math.round(tree.reduce((a, p) => a + read(p), 0) * 10) / 10;
    return { rssMiB: sum(rssMiB), peakMiB: sum(peakMiB) };
  };
  const started: ChildProcess[] = [];
  try {
    // A first start creates the database; the measured starts find it.
    const first = script("dev", dataDir);
    started.push(first.child);
    await until("npm start", first, "sandbox is up");
    await stop(first.child);
    const dev = script("dev", dataDir);
    started.push(dev.child);
    await until("npm start", dev, "sandbox is up");
    const npmStart = await sample(dev.child.pid!);
    await stop(dev.child);
    log(`  npm start: ${npmStart.rssMiB} MiB RSS (peak ${npmStart.peakMiB})`);
    const chainsProc = script("chains", dataDir);
    started.push(chainsProc.child);
    await until("npm run chains", chainsProc, "Local chains are up");
    const serviceProc = script("service", dataDir);
    started.push(serviceProc.child);
    await until("npm run service", serviceProc, "sandbox is up");
    const [chains, service] = await Promise.all([sample(chainsProc.child.pid!), sample(serviceProc.child.pid!)]);
    log(
      `  npm run chains: ${chains.rssMiB} MiB RSS (peak ${chains.peakMiB}); npm run service: ${service.rssMiB} MiB RSS (peak ${service.peakMiB})`,
    );
    return {
      measuredAt: new Date().toISOString(),
      loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
      npmStart,
      chains,
      service,
    };
  } finally {
    for (const child of started.reverse()) await stop(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
