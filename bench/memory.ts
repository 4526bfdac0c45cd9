import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Wallet } from "ethers";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { createSandbox, type Sandbox } from "../scripts/lib/sandbox";
import { serveNodeArgs } from "../scripts/lib/service-process";
import { benchSchema, dropSchema, hammer, postJson, serviceEnv, setupReads, type BenchDatabase } from "./reads";
import { benchRuns, loadNow } from "./runs-table";
import { startServiceProcess, type ServiceProcess } from "./service-process";

const ROOT = path.resolve(__dirname, "..");
/** RSS is read this long after launch (what an operator sees once a start has settled). */
const IDLE_AFTER_MS = 20_000;
/** After a load run, the service is left alone this long before its RSS is read. */
const SETTLE_MS = 10_000;
const LOAD_READ_SECONDS = Number(process.env.BENCH_MEMORY_READ_SECONDS ?? 10);
const LOAD_WRITES = Number(process.env.BENCH_MEMORY_WRITES ?? 40);
const RUNS = 2;
const METRICS_TOKEN = "bench-metrics-token-0123456789abcdef";

export const MEMORY_TARGETS = {
  postgresIdleMiB: 100,
  postgresAfterLoadMiB: 200,
  /**
   * Between two identical load runs, the V8 heap after a full collection may move this much (MiB) and still count as
   * flat (what a leak would grow). RSS after the collection is reported beside it: the allocator keeps freed pages.
   */
  flatHeapMiB: 5,
  healthFreshMs: 3_000,
  healthExistingMs: 1_500,
};

export interface StartSample {
  /** Which run (BENCH_RUNS on PostgreSQL, each on a schema of its own; the embedded database once). */
  run: number;
  /** The 1-minute load average when the start was launched and when it was read. */
  load: [number, number];
  database: BenchDatabase;
  state: "fresh" | "existing";
  /** Until /health first answered 200: liveness, "starting" from the moment the port opens. */
  healthAfterMs: number;
  /** Until /health answered "ok": the database open, the chains checked, the API serving. */
  servingAfterMs: number;
  /** CPU seconds the service had used when it was serving (wall time stretches on a busy machine; this does not). */
  startCpuSeconds: number;
  rssMiB: number;
  /** From the service's own /metrics (prom-client): V8 heap in use, and memory outside it (Buffers, WebAssembly). */
  heapUsedMiB: number;
  externalMiB: number;
}

export interface MemoryResult {
  measuredAt: string;
  cpus: number;
  loadAverage: number[];
  service: string;
  starts: StartSample[];
  /**
   * afterRunsMiB: RSS as an operator sees it after each run (≤ 200 MiB); afterGcMiB: RSS after a forced full collection,
   * and heapAfterGcMiB the V8 heap then: flatMiB is the last run's change in RSS after the collection.
   */
  load: {
    database: BenchDatabase;
    idleMiB: number;
    afterRunsMiB: number[];
    afterGcMiB: number[];
    heapAfterGcMiB: number[];
    flatMiB: number;
    readSeconds: number;
    writes: number;
  };
  pass: Record<string, boolean>;
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/**
 * The built service as an operator runs it: `npm run build`, `npm ci --omit=dev` from the lockfile into an empty
 * directory, dist/ beside it, `node dist/service/main.js`. Measured on PostgreSQL and on the embedded database, each on
 * a fresh and on an existing database: how long until /health answers after launch, RSS 20 s after launch, and the V8
 * heap and external memory behind it; then RSS after two identical load runs on PostgreSQL.
 */
export async function measureMemory(
  hre: HardhatRuntimeEnvironment,
  log: (line: string) => void = console.log,
): Promise<MemoryResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "tak-memory-"));
  log("building (npm run build) and installing the production dependencies (npm ci --omit=dev)…");
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  const installDir = path.join(work, "install");
  fs.mkdirSync(installDir);
  for (const file of ["package.json", "package-lock.json"])
    fs.copyFileSync(path.join(ROOT, file), path.join(installDir, file));
  execFileSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: installDir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (const dir of ["dist", "bin"]) fs.cpSync(path.join(ROOT, dir), path.join(installDir, dir), { recursive: true });

  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(work, "deployments") });
  const schemas: string[] = [];
  // The built service has the production posture: its secrets given, the schema migrated first (npm run migrate).
  const env = (database: BenchDatabase, dataDir: string, schema: string) => ({
    ...serviceEnv(sandbox, dataDir, database, schema),
    ADMIN_TOKEN: "bench-admin-token-0123456789abcdef",
    DATA_ENCRYPTION_KEY: "bench-data-encryption-key-0123456789abcdef",
    // A production start serves /metrics only with a token (the heap and external memory are read there).
    METRICS_TOKEN: METRICS_TOKEN,
  });
  const start = (database: BenchDatabase, dataDir: string, schema: string, collectableGarbage = false) => {
    execFileSync(process.execPath, ["dist/service/operator/migrate.js"], {
      cwd: installDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env(database, dataDir, schema) },
      stdio: ["ignore", "ignore", "inherit"],
    });
    return startServiceProcess(env(database, dataDir, schema), {
      entry: "dist/service/main.js",
      cwd: installDir,
      nodeArgs: serveNodeArgs(),
      collectableGarbage,
    });
  };
  const starts: StartSample[] = [];
  try {
    // PostgreSQL (the target's database) in BENCH_RUNS runs, each on a fresh schema and then on it again; the
    // embedded database once.
    const runs = [
      ...Array.from({ length: benchRuns() }, (_, i) => ["postgres", i + 1] as const),
      ["embedded", 1] as const,
    ];
    for (const [database, run] of runs) {
      const dataDir = path.join(work, `data-${database}-${run}`);
      const schema = benchSchema();
      schemas.push(schema);
      for (const state of ["fresh", "existing"] as const) {
        const loadAtLaunch = loadNow();
        const service = await start(database, dataDir, schema);
        try {
          starts.push({ run, ...(await idleSample(service, database, state, loadAtLaunch)) });
          log(
            `  run ${run} ${database} ${state} (load ${starts.at(-1)!.load.join(" → ")}): /health after ${starts.at(-1)!.healthAfterMs} ms, serving after ${starts.at(-1)!.servingAfterMs} ms (${starts.at(-1)!.startCpuSeconds} s of CPU); ${starts.at(-1)!.rssMiB} MiB RSS 20 s after launch (heap ${starts.at(-1)!.heapUsedMiB}, external ${starts.at(-1)!.externalMiB})`,
          );
        } finally {
          await service.stop();
        }
      }
    }
    // Forced collections after the runs tell growth from garbage not collected yet (node --expose-gc, bench/gc-on-signal.js).
    const service = await start("postgres", path.join(work, "data-postgres-1"), schemas[0], true);
    try {
      const load = await loadRuns(service, sandbox, log);
      const pass = {
        postgresIdle: starts
          .filter((s) => s.database === "postgres")
          .every((s) => s.rssMiB <= MEMORY_TARGETS.postgresIdleMiB),
        postgresAfterLoad: Math.max(...load.afterRunsMiB) <= MEMORY_TARGETS.postgresAfterLoadMiB,
        flatBetweenRuns:
          Math.abs(load.heapAfterGcMiB[RUNS - 1] - load.heapAfterGcMiB[RUNS - 2]) <= MEMORY_TARGETS.flatHeapMiB,
        healthFresh: starts
          .filter((s) => s.state === "fresh")
          .every((s) => s.healthAfterMs <= MEMORY_TARGETS.healthFreshMs),
        healthExisting: starts
          .filter((s) => s.state === "existing")
          .every((s) => s.healthAfterMs <= MEMORY_TARGETS.healthExistingMs),
      };
      return {
        measuredAt: new Date().toISOString(),
        cpus: os.cpus().length,
        loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
        service: `node ${serveNodeArgs().join(" ")} dist/service/main.js (npm run serve; npm ci --omit=dev)`,
        starts,
        load,
        pass,
      };
    } finally {
      await service.stop();
    }
  } finally {
    await sandbox.close();
    for (const schema of schemas) await dropSchema(schema);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function idleSample(
  service: ServiceProcess,
  database: BenchDatabase,
  state: "fresh" | "existing",
  loadAtLaunch: number,
): Promise<Omit<StartSample, "run">> {
  const wait = service.launchedAt + IDLE_AFTER_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const rssMiB = service.rssMiB();
  const metric = await metricsOf(service);
  return {
    load: [loadAtLaunch, loadNow()],
    database,
    state,
    healthAfterMs: service.healthyAfterMs,
    servingAfterMs: service.servingAfterMs,
    startCpuSeconds: service.healthyCpuSeconds,
    rssMiB,
    heapUsedMiB: mib(metric("tak_nodejs_heap_size_used_bytes")),
    externalMiB: mib(metric("tak_nodejs_external_memory_bytes")),
  };
}

/** Identical runs of reads (autocannon, 50 connections, on three routes) and client-signed writes; RSS after each. */
async function loadRuns(service: ServiceProcess, sandbox: Sandbox, log: (line: string) => void) {
  const { key, symbol, investor, txId } = await setupReads(service, sandbox);
  const issuer = sandbox.accounts[1];
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const idleMiB = service.rssMiB();
  log(`  postgres under load: ${idleMiB} MiB RSS before the runs`);
  const afterRunsMiB: number[] = [];
  const afterGcMiB: number[] = [];
  const heapAfterGcMiB: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (let i = 0; i < LOAD_WRITES; i++) {
      const body = {
        method: "whitelist",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenSymbol: symbol,
        userToWhitelist: [{ investorAddress: Wallet.createRandom().address, whitelistStatus: true }],
      };
      const prepared = await postJson(`${service.url}/prepare-transactions`, body, { "x-api-key": key });
      const signed = await Promise.all(prepared.transactions.map((t: object) => issuer.signTransaction(t)));
      await postJson(
        `${service.url}/send-transactions`,
        { txId: prepared.txId, signedTransactions: signed },
        { "x-api-key": key },
      );
    }
    for (const pathname of [
      `/get-transaction-status?txId=${txId}`,
      `/get-token-info?tokenSymbol=${symbol}`,
      `/get-balance-whitelist?tokenSymbol=${symbol}&investorAddress=${investor}`,
    ]) {
      await hammer(service.url, pathname, { "x-api-key": key }, LOAD_READ_SECONDS);
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    afterRunsMiB.push(service.rssMiB());
    await service.collectGarbage();
    afterGcMiB.push(service.rssMiB());
    heapAfterGcMiB.push(await heapUsedMiB(service));
    log(
      `  postgres after run ${run} (${LOAD_WRITES} writes, 3 × ${LOAD_READ_SECONDS} s of reads): ${afterRunsMiB.at(-1)} MiB RSS; after a full GC ${afterGcMiB.at(-1)} MiB RSS, heap ${heapAfterGcMiB.at(-1)} MiB`,
    );
  }
  const flatMiB = Math.round((afterGcMiB[RUNS - 1] - afterGcMiB[RUNS - 2]) * 10) / 10;
  return {
    database: "postgres" as const,
    idleMiB,
    afterRunsMiB,
    afterGcMiB,
    heapAfterGcMiB,
    flatMiB,
    readSeconds: LOAD_READ_SECONDS,
    writes: LOAD_WRITES,
  };
}

/** One number of the service's /metrics (prom-client's process and Node.js metrics, prefixed tak_). */
async function metricsOf(service: ServiceProcess): Promise<(name: string) => number> {
  const metrics = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then(
    (r) => r.text(),
  );
  return (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
}

async function heapUsedMiB(service: ServiceProcess): Promise<number> {
  return mib((await metricsOf(service))("tak_nodejs_heap_size_used_bytes"));
}
