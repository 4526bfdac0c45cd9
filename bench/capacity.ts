import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, Wallet } from "ethers";
import { payWithEthers } from "../test/helpers/x402";
import { createSandboxProcess } from "../scripts/lib/chains-process";
import { PAID_RELAYED_KINDS, perOperation, readDbWork, type DbWorkFigures } from "./db-work";
import { benchSchema, dropSchema, postJson, serviceEnv, type BenchDatabase } from "./reads";
import { cpuSeconds, startServiceProcess } from "./service-process";
import { distinctClient, fund, nextSymbol } from "./volume";

/**
 * The lanes bench's open loop (bench/lanes.ts is its closed loop): paid relayed operations (x402 agentCreateToken,
 * prepared, paid and sent until confirmed) arrive at a set rate, each on its own, whatever the earlier ones are doing,
 * on the sandbox's Base Sepolia mining every `blockSeconds` in a process of its own, one service process with one
 * relayer key. The rate steps up; for each step: operations confirmed per block (after its first two blocks, once the
 * first arrivals are through), p50 and p95 from arrival to
 * confirmation in blocks, failures, the database's work per operation (bench/db-work.ts), and the CPU of the service,
 * the chains' process, the bench (the clients) and the PostgreSQL server, each as a share of one core. The knee is the
 * highest offered rate the service keeps up with: at least 95 % of it confirmed per block, p50 within 1.5 blocks, no
 * failure.
 */
export interface CapacityRow {
  database: BenchDatabase;
  /** Operations offered per block (arrivals every blockSeconds / rate). */
  offeredPerBlock: number;
  arrived: number;
  confirmed: number;
  failed: number;
  blocks: number;
  opsPerBlock: number;
  p50Blocks: number;
  p95Blocks: number;
  cpu: { service: number; chains: number; clients: number; postgres: number };
  /** Per operation: the prepare's and the send's trips, statements and database time. */
  dbWork: Record<string, DbWorkFigures>;
  errors: string[];
}

export interface CapacityResult {
  rows: CapacityRow[];
  /** Per database, the highest offered rate kept up with (undefined: not even the first). */
  knee: Partial<Record<BenchDatabase, number>>;
}

export const KEEPS_UP = { share: 0.95, p50Blocks: 1.5 };
/** Blocks at the start of a step whose confirmations are not counted per block (the first arrivals still in flight). */
const FILL_BLOCKS = 2;

export async function measureCapacity(
  hre: HardhatRuntimeEnvironment,
  opts: {
    rates?: number[];
    seconds?: number;
    blockSeconds?: number;
    databases?: BenchDatabase[];
    log?: (line: string) => void;
  } = {},
): Promise<CapacityResult> {
  const rates = opts.rates ?? [50, 100, 150, 200, 250];
  const seconds = opts.seconds ?? 20;
  const blockSeconds = opts.blockSeconds ?? 2;
  const databases = opts.databases ?? ["embedded", "postgres"];
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-capacity-"));
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments") });
  const chain = sandbox.baseSepolia;
  const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  const rows: CapacityRow[] = [];
  try {
    // Enough payers that one is rarely asked twice within an operation's life (a payer who owes is asked its balance).
    const payers = Array.from(
      { length: Math.ceil((Math.max(...rates) / blockSeconds) * 8) },
      () => new Wallet(Wallet.createRandom().privateKey, provider),
    );
    await fund(sandbox, provider, payers, []);
    await chain.setBlockTime(blockSeconds);
    let nextPayer = 0;
    for (const database of databases) {
      const schema = database === "postgres" ? benchSchema() : undefined;
      const service = await startServiceProcess({
        ...serviceEnv(sandbox, path.join(dir, `service-${database}`), database, schema),
        RELAYER_EXTRA_PRIVATE_KEYS: "",
      });
      try {
        await new Promise((r) => setTimeout(r, blockSeconds * 2000)); // its delegation mined
        const agentWallet = sandbox.accounts[6].address;
        const operation = async () => {
          const payer = payers[nextPayer++ % payers.length];
          const prepared = await postJson(
            `${service.url}/x402/token/create`,
            { chainId: "84532", name: "Capacity agent token", symbol: nextSymbol("C"), agentWallet },
            distinctClient(),
          );
          const res = await fetch(`${service.url}/send-transactions`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "X-PAYMENT": await payWithEthers(payer, prepared.x402Requirements),
            },
            body: JSON.stringify({ txId: prepared.txId }),
          });
          const body = (await res.json()) as any;
          if (res.status !== 200 || body.status !== "success")
            throw new Error(
              `send answered ${res.status} ${body.status ?? ""} ${body.error?.message ?? ""}`.slice(0, 160),
            );
        };
        for (const rate of rates) {
          const row = await step(database, rate, seconds, blockSeconds, provider, service, sandbox.pid, operation, log);
          rows.push(row);
          await new Promise((r) => setTimeout(r, blockSeconds * 1000)); // what the step left settles
        }
      } finally {
        await service.stop();
        if (schema) await dropSchema(schema);
      }
    }
    return { rows, knee: kneeOf(rows, databases) };
  } finally {
    provider.destroy();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One rate: arrivals for `seconds`, then every operation that arrived is awaited (each ends by itself: SEND_WAIT_MS). */
async function step(
  database: BenchDatabase,
  rate: number,
  seconds: number,
  blockSeconds: number,
  provider: JsonRpcProvider,
  service: { url: string; child: { pid?: number } },
  chainsPid: number,
  operation: () => Promise<void>,
  log: (line: string) => void,
): Promise<CapacityRow> {
  const gapMs = (blockSeconds * 1000) / rate;
  if (seconds <= FILL_BLOCKS * blockSeconds) throw new Error(`a step lasts more than ${FILL_BLOCKS} blocks`);
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  let failed = 0;
  let confirmedInWindow = 0;
  const workBefore = await readDbWork(service.url);
  // Operations confirmed per block are counted once the pipeline is full (the first arrivals' first blocks left out):
  // below the knee they equal the offered rate, above it what the service gets through.
  const fillMs = FILL_BLOCKS * blockSeconds * 1000;
  let headAfterFill: number | undefined;
  const filled = new Promise<void>((resolve) => setTimeout(resolve, fillMs)).then(async () => {
    headAfterFill = await provider.getBlockNumber();
  });
  const cpuBefore = { service: cpuSeconds(service.child.pid!), chains: cpuSeconds(chainsPid), postgres: postgresCpu() };
  const benchBefore = process.cpuUsage();
  const started = performance.now();
  const endsAt = started + seconds * 1000;
  const inFlight: Promise<void>[] = [];
  let headAtEnd: number | undefined;
  const windowClosed = new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000)).then(async () => {
    headAtEnd = await provider.getBlockNumber();
  });
  // Arrivals on a schedule of their own: the n-th at started + n × gap, late ones started at once.
  for (let n = 0; started + n * gapMs < endsAt; n++) {
    const due = started + n * gapMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      operation().then(
        () => {
          const now = performance.now();
          latencies.push(now - due);
          if (now > started + fillMs && now <= endsAt) confirmedInWindow++;
        },
        (error: Error) => {
          failed++;
          const message = error.message.slice(0, 160);
          errors.set(message, (errors.get(message) ?? 0) + 1);
        },
      ),
    );
  }
  await filled;
  await windowClosed;
  const elapsed = (performance.now() - started) / 1000;
  const cpu = {
    service: share(cpuSeconds(service.child.pid!) - cpuBefore.service, elapsed),
    chains: share(cpuSeconds(chainsPid) - cpuBefore.chains, elapsed),
    clients: share(cpuUsed(process.cpuUsage(benchBefore)), elapsed),
    postgres: database === "postgres" ? share(postgresCpu() - cpuBefore.postgres, elapsed) : 0,
  };
  await Promise.all(inFlight);
  const blocks = headAtEnd! - headAfterFill!;
  const inBlocks = (ms: number) => Math.round((ms / (blockSeconds * 1000)) * 100) / 100;
  const row: CapacityRow = {
    database,
    offeredPerBlock: rate,
    arrived: inFlight.length,
    confirmed: latencies.length,
    failed,
    blocks,
    opsPerBlock: Math.round((confirmedInWindow / Math.max(1, blocks)) * 10) / 10,
    p50Blocks: inBlocks(percentile(latencies, 0.5)),
    p95Blocks: inBlocks(percentile(latencies, 0.95)),
    cpu,
    dbWork: perOperation([workBefore], [await readDbWork(service.url)], PAID_RELAYED_KINDS, latencies.length + failed),
    errors: [...errors].map(([message, n]) => `${n}× ${message}`),
  };
  log(
    `${database}, ${rate} offered per block: ${row.opsPerBlock} confirmed per block, p50 ${row.p50Blocks} blocks, p95 ${row.p95Blocks} blocks, ${row.failed} failed of ${row.arrived}; CPU service ${cpu.service}, chains ${cpu.chains}, clients ${cpu.clients}, PostgreSQL ${cpu.postgres}`,
  );
  return row;
}

function kneeOf(rows: CapacityRow[], databases: BenchDatabase[]): CapacityResult["knee"] {
  const knee: CapacityResult["knee"] = {};
  for (const database of databases) {
    const kept = rows.filter(
      (r) =>
        r.database === database &&
        r.failed === 0 &&
        r.opsPerBlock >= KEEPS_UP.share * r.offeredPerBlock &&
        r.p50Blocks <= KEEPS_UP.p50Blocks,
    );
    if (kept.length) knee[database] = Math.max(...kept.map((r) => r.offeredPerBlock));
  }
  return knee;
}

/** CPU seconds of every PostgreSQL server process on this machine (its backends included). */
function postgresCpu(): number {
  try {
    const pids = execFileSync("pgrep", ["-x", "postgres"], { encoding: "utf8" }).split("\n").filter(Boolean);
    return pids.reduce((sum, pid) => sum + (cpuSeconds(Number(pid)) || 0), 0);
  } catch {
    return 0;
  }
}

const cpuUsed = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1e6;
const share = (cpu: number, elapsed: number) => Math.round((cpu / elapsed) * 100) / 100;

function percentile(samples: number[], q: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
