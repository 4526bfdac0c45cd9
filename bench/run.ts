import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { measureGas, OPS, type GasRow } from "./gas";
import { measureAgentGas } from "./gas-agents";
import { measureRamsGas, ramsExecuteOverhead, RAMS_EXECUTE_OVERHEAD_TARGET } from "./gas-rams";
import { LATENCY_RATIO, measureLatency, type LatencyRow } from "./latency";
import { measureReads, printReadRows, writeBenchResult, type BenchDatabase, type ReadRow } from "./reads";
import { measurePaidRelay, measureVolume, type MemorySample } from "./volume";
import { measureScaleOut } from "./scale-out";
import { measureEvents } from "./events";
import { measureMemory, MEMORY_TARGETS } from "./memory";
import { measureSandboxMemory } from "./sandbox-memory";
import { measureSandboxSpeed } from "./sandbox-speed";
import { measurePaymentIntegrity } from "./payment-integrity";
import { CONSOLE_TARGET_MS, measureConsole } from "./console";
import { LANE_TARGET, measureLanes, type LaneRow } from "./lanes";
import { KEEPS_UP, measureCapacity, type CapacityResult } from "./capacity";
import { describeDbWork } from "./db-work";
import { inRuns } from "./runs-table";
import { MCP_TARGET, measureMcp } from "./mcp";

/**
 * Hard targets: the whitelisted transfers against the plain transfer of the same kind (1.2×, issue 48's bound), and
 * the factory call (two ERC-1967 proxies and their initialization). The token behind its proxy does not meet 1.2× on
 * an existing recipient: docs/issuer-controls.md#gas says what each part costs and why.
 */
const TARGETS: Record<string, (row: GasRow) => boolean> = {
  [OPS.wlExisting]: (row) => row.ratio <= 1.2,
  [OPS.wlNew]: (row) => row.ratio <= 1.2,
  [OPS.newTokenization]: (row) => row.gas <= 550_000n,
};

function printGasTable(title: string, rows: GasRow[]): boolean {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map((r) => r.operation.length));
  const gasWidth = Math.max(...rows.map((r) => r.gas.toString().length), 3);
  console.log(`${"operation".padEnd(width)}  ${"gas".padStart(gasWidth)}  ${"ratio".padStart(6)}  target`);
  let failed = false;
  for (const row of rows) {
    const check = TARGETS[row.operation];
    const pass = check ? check(row) : undefined;
    if (pass === false) failed = true;
    const mark = pass === undefined ? "" : pass ? "PASS" : "FAIL";
    console.log(
      `${row.operation.padEnd(width)}  ${row.gas.toString().padStart(gasWidth)}  ${row.ratio.toFixed(3).padStart(6)}  ${mark}`,
    );
  }
  return failed;
}

function writeResults(name: string, rows: GasRow[]): void {
  const out = path.join(__dirname, "results", name);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      rows.map((r) => ({ operation: r.operation, gas: Number(r.gas), ratio: r.ratio })),
      null,
      2,
    ) + "\n",
  );
  console.log(`written ${path.relative(process.cwd(), out)}`);
}

/** BENCH_ONLY=gas,latency,reads,volume,integrity,lanes,capacity,scaleout,events,memory,sandbox,console,mcp runs those parts (comma-separated); unset runs all. */
const PARTS = [
  "gas",
  "latency",
  "reads",
  "volume",
  "integrity",
  "lanes",
  "capacity",
  "scaleout",
  "events",
  "memory",
  "sandbox",
  "console",
  "mcp",
] as const;
type Part = (typeof PARTS)[number];

function selectedParts(): Set<Part> {
  const only = (process.env.BENCH_ONLY ?? "").trim();
  if (!only) return new Set(PARTS);
  const parts = only.split(",").map((p) => p.trim());
  for (const p of parts)
    if (!PARTS.includes(p as Part)) throw new Error(`BENCH_ONLY must name one of ${PARTS.join(", ")}, got "${p}"`);
  return new Set(parts as Part[]);
}

async function gasPart(): Promise<boolean> {
  const tokenRows = await measureGas(hre);
  let failed = printGasTable("Gas: security tokens and offerings (ratio against a plain ERC-20 transfer)", tokenRows);
  writeResults("gas.json", tokenRows);
  const agentRows = await measureAgentGas(hre);
  failed =
    printGasTable("Gas: ERC-8004 registries and agent tokens (ratio against a plain ERC-20 transfer)", agentRows) ||
    failed;
  writeResults("gas-agents.json", agentRows);
  const ramsRows = await measureRamsGas(hre);
  failed = printGasTable("Gas: ERC-8226 RAMS (ratio against a direct ERC-20 transferFrom)", ramsRows) || failed;
  const overhead = ramsExecuteOverhead(ramsRows);
  const overheadOk = overhead <= RAMS_EXECUTE_OVERHEAD_TARGET;
  console.log(
    `executor execute − direct transferFrom = ${overhead} gas (target ≤ ${RAMS_EXECUTE_OVERHEAD_TARGET}) ${overheadOk ? "PASS" : "FAIL"}`,
  );
  failed = failed || !overheadOk;
  writeResults("gas-rams.json", ramsRows);
  return failed;
}

function printLatencyTable(rows: LatencyRow[]): boolean {
  const width = Math.max(...rows.map((r) => r.operation.length));
  console.log(`${"operation".padEnd(width)}  service p50  service p95  raw p50   ratio  floor  target`);
  for (const r of rows) {
    const cells = [r.serviceP50Ms, r.serviceP95Ms, r.rawP50Ms].map((v) => v.toFixed(1).padStart(11));
    console.log(
      `${r.operation.padEnd(width)}  ${cells[0]}  ${cells[1]}  ${cells[2].trim().padStart(7)}  ${r.ratio.toFixed(2).padStart(6)}  ${r.requestFloorP50Ms.toFixed(1).padStart(5)}  ${r.pass ? "PASS" : "FAIL"} (${r.target})`,
    );
    console.log(
      `${"".padEnd(width)}  RPC per operation: service ${r.rpc.serviceCalls} calls in ${r.rpc.serviceRoundTrips} round trips, raw ${r.rpc.rawCalls} calls in ${r.rpc.rawRoundTrips} round trips`,
    );
  }
  return rows.some((r) => !r.pass);
}

/** The write flow's latency beside its raw JSON-RPC baseline: on a chain mining at once, and on an interval-mining one. */
async function latencyPart(): Promise<boolean> {
  const blockTime = Number(process.env.LOCAL_BLOCK_TIME) || 1;
  console.log(
    "\nLatency: the service against the raw JSON-RPC work it needs (real HTTP, embedded database, the chains in their own process over HTTP JSON-RPC)",
  );
  // BENCH_LATENCY_INTERVAL=0 measures the chain mining at once only.
  const interval = process.env.BENCH_LATENCY_INTERVAL !== "0";
  const rows = [
    ...(await measureLatency(hre, { blockTime: 0 })),
    ...(interval ? await measureLatency(hre, { blockTime }) : []),
  ];
  const failed = printLatencyTable(rows);
  console.log(
    "floor: p50 of a request refused after its key check (HTTP, routing, one store read), same run; context, not a target",
  );
  const out = path.join(__dirname, "results", "latency.json");
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(rows, null, 2) + "\n");
  console.log(`written ${path.relative(process.cwd(), out)}`);
  return failed;
}

/** Read throughput with 50 connections on the embedded database and on PostgreSQL (BENCH_DATABASES=embedded skips the server). */
async function readsPart(): Promise<boolean> {
  const databases = (process.env.BENCH_DATABASES ?? "embedded,postgres").split(",") as BenchDatabase[];
  const rows: ReadRow[] = [];
  for (const database of databases) {
    console.log(`\nReads, 50 connections (${database} database)`);
    rows.push(...(await measureReads(hre, { database })));
  }
  console.log("");
  printReadRows(rows);
  writeBenchResult("reads.json", { measuredAt: new Date().toISOString(), cpus: os.cpus().length, rows });
  return rows.some((r) => r.pass === false);
}

/**
 * Relayed (x402-paid) and client-signed throughput, relayer nonce contiguity and service memory. BENCH_VOLUME_SECONDS
 * shortens the relayed runs (default 60), BENCH_IDENTICAL_RUNS sets how many identical runs the memory is read after
 * (default 2), BENCH_SKIP_POSTGRES=1 skips the two-instance run on the PostgreSQL server
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
async function volumePart(): Promise<boolean> {
  const paidFailed = await paidRelayPart();
  if (process.env.BENCH_VOLUME_PAID_ONLY === "1") return paidFailed;
  return (await volumeRunsPart()) || paidFailed;
}

/**
 * One chain transaction per paid relayed operation: paid relayed ops/s against the instant chain's raw tx/s (target
 * ≥ 0.9×), payments on another chain than their operation settled in batches (faucet claims: payments per settlement
 * transaction), and a paid operation's p50 in blocks on a chain mining every 2 s (target ≤ 1.5 blocks).
 * BENCH_PAID_SECONDS (default 20), BENCH_PAID_CLIENTS (20), BENCH_PAID_BLOCK_SECONDS (run on the 2 s chain, 40).
 */
async function paidRelayPart(): Promise<boolean> {
  console.log("\nPaid relayed operations vs the chain: instant chain (relayed vs raw), then 2 s blocks");
  const r = await measurePaidRelay(hre, {
    seconds: Number(process.env.BENCH_PAID_SECONDS ?? 20),
    clients: Number(process.env.BENCH_PAID_CLIENTS ?? 20),
    blockRunSeconds: Number(process.env.BENCH_PAID_BLOCK_SECONDS ?? 40),
  });
  const mark = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const i = r.instant;
  console.log("");
  console.log(
    `instant chain: paid relayed ${i.relayed.txPerSec} ops/s (${i.relayed.confirmed} confirmed, ${i.relayed.failed} failed, p50 ${i.relayed.p50Ms} ms) vs raw ${i.raw.txPerSec} tx/s ` +
      `(baseline: ${i.raw.clients} signers straight to the same chain) = ${i.ratio}×, ${i.txPerOperation} chain tx per operation: ${mark(i.pass)} (target ${i.target})`,
  );
  const c = r.crossChain;
  console.log(
    `paid on another chain (faucet claims): ${c.relayed.txPerSec} ops/s (${c.relayed.confirmed} confirmed, ${c.relayed.failed} failed, p50 ${c.relayed.p50Ms} ms), ` +
      `${c.payments} payments in ${c.settlementTransactions} settlement transactions = ${c.paymentsPerSettlement} per transaction: ${mark(c.pass)} (target ${c.target}; before: 1 per transaction)`,
  );
  const b = r.blocks;
  console.log(
    `${b.blockSeconds} s blocks: ${b.relayed.clients} paying clients, p50 ${b.relayed.p50Ms} ms = ${b.p50Blocks} blocks, p95 ${b.p95Blocks} blocks, ${b.relayed.txPerSec} ops/s ` +
      `(${b.relayed.confirmed} confirmed, ${b.relayed.failed} failed), ${b.txPerOperation} chain tx per operation: ${mark(b.pass)} (target ${b.target})`,
  );
  const bc = b.crossChain;
  console.log(
    `${b.blockSeconds} s blocks, paid on another chain (faucet claims): ${bc.relayed.clients} clients, ${bc.relayed.txPerSec} ops/s, p50 ${bc.relayed.p50Ms} ms, ` +
      `${bc.payments} payments in ${bc.settlementTransactions} settlement transactions = ${bc.paymentsPerSettlement} per transaction: ${mark(bc.pass)} (target ${bc.target})`,
  );
  console.log(
    `baseline before (two transactions per paid operation, bench/results/volume.md): 22–26 ops/s vs raw 45–54 tx/s; 2 s blocks: p50 4.0 s = 2 blocks`,
  );
  writeBenchResult("paid-relay.json", r);
  return !r.pass;
}

/**
 * Paid work is never given away: a hostile payer's tries (bench/payment-integrity.ts), BENCH_INTEGRITY_ROUNDS rounds
 * (default 2). Targets: operations given away 0, relayer gas on unpaid work 0, paid reads given away 0.
 */
async function integrityPart(): Promise<boolean> {
  console.log(
    "\nPayment integrity: a hostile payer against the service (instant chains, the payment chain held where a case needs it)",
  );
  const r = await measurePaymentIntegrity(hre, { rounds: Number(process.env.BENCH_INTEGRITY_ROUNDS ?? 2) });
  for (const [name, n] of Object.entries(r.attempts)) console.log(`  ${name}: ${n}`);
  const mark = (ok: boolean) => (ok ? "PASS" : "FAIL");
  console.log(`operations given away: ${r.operationsGivenAway} ${mark(r.operationsGivenAway === 0)} (target 0)`);
  console.log(
    `relayer gas spent on unpaid work: ${r.relayerGasOnUnpaidWorkWei} wei ${mark(r.relayerGasOnUnpaidWorkWei === "0")} (target 0)`,
  );
  console.log(`paid reads given away: ${r.paidReadsGivenAway} ${mark(r.paidReadsGivenAway === 0)} (target 0)`);
  console.log(
    `payments kept for an operation that then failed (charged for the attempt, the written policy): ${r.chargedForTheAttempt}`,
  );
  writeBenchResult("payment-integrity.json", r);
  return !r.pass;
}

/**
 * Paid relayed operations per block per relayer wallet on 2 s blocks (bench/lanes.ts): BENCH_LANES_KEYS (default
 * 1,2,4) × BENCH_LANES_CLIENTS (default 100,150), BENCH_LANES_SECONDS each (default 30). Target: one key carries 100
 * paid operations per block with p50 within 1.5 blocks.
 */
async function lanesPart(): Promise<boolean> {
  console.log(
    "\nRelayer lanes: paid relayed operations per block, by relayer keys and paying clients (2 s blocks, chains in their own process)",
  );
  const list = (value: string | undefined, fallback: number[]) => (value ? value.split(",").map(Number) : fallback);
  const database = (process.env.BENCH_LANES_DATABASE ?? "embedded") as BenchDatabase;
  const runs = await inRuns(
    `lanes-${database}`,
    `Relayer lanes (closed loop), ${database === "postgres" ? "PostgreSQL" : "embedded database"}: paid relayed operations per 2 s block`,
    `BENCH_ONLY=lanes${database === "postgres" ? " BENCH_LANES_DATABASE=postgres" : ""} npm run bench`,
    [
      "instances",
      "keys",
      "clients",
      "ops/block",
      "p50 blocks",
      "p95 blocks",
      "failed",
      "CPU service / chains / clients",
      "database per operation",
    ],
    () =>
      measureLanes(hre, {
        keys: list(process.env.BENCH_LANES_KEYS, [1, 2, 4]),
        clients: list(process.env.BENCH_LANES_CLIENTS, [100, 150]),
        seconds: Number(process.env.BENCH_LANES_SECONDS ?? 30),
        database,
        instances: list(process.env.BENCH_LANES_INSTANCES, [1]),
      }),
    (rows) =>
      rows.map((r) => [
        r.instances,
        r.keys,
        r.clients,
        r.opsPerBlock,
        r.p50Blocks,
        r.p95Blocks,
        r.failed,
        `${r.serviceCpu} / ${r.chainsCpu} / ${r.benchCpu}`,
        describeDbWork(r.dbWork),
      ]),
  );
  const rows = runs[runs.length - 1];
  console.log("");
  console.log(
    "instances  keys  clients  ops/block  per key  p50 blocks  p95 blocks  failed  CPU: service  chains  clients",
  );
  for (const r of rows) {
    console.log(
      `${String(r.instances).padStart(9)}  ${String(r.keys).padStart(4)}  ${String(r.clients).padStart(7)}  ${String(r.opsPerBlock).padStart(9)}  ${String(r.opsPerBlockPerKey).padStart(7)}  ${String(r.p50Blocks).padStart(10)}  ${String(r.p95Blocks).padStart(10)}  ${String(r.failed).padStart(6)}  ${String(r.serviceCpu).padStart(12)}  ${String(r.chainsCpu).padStart(6)}  ${String(r.benchCpu).padStart(7)}`,
    );
    console.log(`  database per operation: ${describeDbWork(r.dbWork)}`);
  }
  const passes = (rs: LaneRow[]) =>
    rs
      .filter((r) => r.keys === 1 && r.instances === 1)
      .some(
        (r) => r.opsPerBlockPerKey >= LANE_TARGET.opsPerBlock && r.p50Blocks <= LANE_TARGET.p50Blocks && r.failed === 0,
      );
  const pass = runs.every(passes);
  console.log(
    `one key, one process: ${runs.filter(passes).length} of ${runs.length} runs at ${LANE_TARGET.opsPerBlock} per block with p50 ≤ ${LANE_TARGET.p50Blocks} blocks: ${pass ? "PASS" : "FAIL"}`,
  );
  writeBenchResult("lanes.json", {
    measuredAt: new Date().toISOString(),
    cpus: os.cpus().length,
    loadAverage: os.loadavg(),
    database,
    rows,
  });
  return !pass;
}

/**
 * The lanes bench's open loop (bench/capacity.ts): operations arriving at BENCH_CAPACITY_RATES per block (default
 * 50,100,150,200,250) for BENCH_CAPACITY_SECONDS each (20), on BENCH_CAPACITY_DATABASES (embedded,postgres); the knee
 * per database. Figures, no target.
 */
async function capacityPart(): Promise<boolean> {
  console.log("\nCapacity curve: paid relayed operations arriving at a set rate (open loop, 2 s blocks, one key)");
  const list = (value: string | undefined) => value?.split(",").map((v) => v.trim());
  const runs = await inRuns<CapacityResult>(
    "capacity",
    "Capacity curve (lanes, open loop): paid relayed operations arriving at a set rate, 2 s blocks, one key, one process",
    "BENCH_ONLY=capacity npm run bench",
    [
      "database",
      "offered per block",
      "confirmed per block",
      "p50 blocks",
      "p95 blocks",
      "failed / arrived",
      "CPU service / chains / clients / PostgreSQL",
      "database per operation",
    ],
    () =>
      measureCapacity(hre, {
        rates: list(process.env.BENCH_CAPACITY_RATES)?.map(Number),
        seconds: Number(process.env.BENCH_CAPACITY_SECONDS ?? 20),
        databases: list(process.env.BENCH_CAPACITY_DATABASES) as BenchDatabase[] | undefined,
      }),
    (result) =>
      result.rows.map((r) => [
        r.database,
        r.offeredPerBlock,
        r.opsPerBlock,
        r.p50Blocks,
        r.p95Blocks,
        `${r.failed} / ${r.arrived}`,
        `${r.cpu.service} / ${r.cpu.chains} / ${r.cpu.clients} / ${r.cpu.postgres}`,
        describeDbWork(r.dbWork),
      ]),
    (results) => [
      `The knee (the highest offered rate with ≥ ${KEEPS_UP.share * 100} % of it confirmed per block, p50 ≤ ${KEEPS_UP.p50Blocks} blocks, no failure), per run: ` +
        results
          .map(
            (r, i) =>
              `run ${i + 1}: ${
                Object.entries(r.knee)
                  .map(([db, rate]) => `${db} ${rate}`)
                  .join(", ") || "none"
              }`,
          )
          .join("; ") +
        ".",
    ],
  );
  const last = runs[runs.length - 1];
  console.log(`knee: ${JSON.stringify(last.knee)}`);
  writeBenchResult("capacity.json", {
    measuredAt: new Date().toISOString(),
    cpus: os.cpus().length,
    loadAverage: os.loadavg(),
    ...last,
  });
  return false;
}

async function volumeRunsPart(): Promise<boolean> {
  console.log("\nVolume: 20 paying clients (service-relayed), 20 signers (client-signed) beside raw, memory");
  const result = await measureVolume(hre, {
    seconds: Number(process.env.BENCH_VOLUME_SECONDS ?? 60),
    clientSignedSeconds: Number(process.env.BENCH_CLIENT_SIGNED_SECONDS ?? 15),
    identicalRuns: Number(process.env.BENCH_IDENTICAL_RUNS ?? 2),
    skipPostgres: process.env.BENCH_SKIP_POSTGRES === "1",
  });
  console.log("");
  for (const r of result.relayed) {
    console.log(
      `${r.run}: ${r.txPerSec} tx/s, p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, nonces ${r.relayer.contiguous ? "contiguous" : "NOT contiguous"} ${r.pass ? "PASS" : "FAIL"} (target ${r.target})`,
    );
  }
  const one = result.singleClient;
  console.log(
    `1 client alone: ${one.txPerSec} tx/s, p50 ${one.p50Ms} ms (prepare ${one.prepareP50Ms} ms, send ${one.sendP50Ms} ms)`,
  );
  for (const note of result.notes) console.log(`bound: ${note}`);
  const c = result.clientSigned;
  console.log(`client-signed ${c.service.txPerSec} tx/s vs raw ${c.raw.txPerSec} tx/s (${c.ratio}×)`);
  const m = result.memory;
  const after = (pick: (x: MemorySample) => number) =>
    m.afterRuns.map((x, i) => `after run ${i + 1} ${pick(x)}`).join(", ");
  console.log(
    `service after a full GC: RSS idle ${m.idle.rssMiB} MiB, ${after((x) => x.rssMiB)} MiB (last run's growth ${m.growth.rssMiB} MiB)`,
  );
  console.log(
    `  heap used idle ${m.idle.heapUsedMiB} MiB, ${after((x) => x.heapUsedMiB)} MiB (last run's growth ${m.growth.heapUsedMiB} MiB)`,
  );
  writeBenchResult("volume.json", result);
  return result.relayed.some((r) => !r.pass);
}

/**
 * Scale-out on the PostgreSQL server (BENCH_DATABASE_URL): one instance, then two sharing one schema, driven by the
 * same paying clients for BENCH_SCALE_OUT_SECONDS each (default 30). Passes when both keep the relayer's nonces
 * contiguous and settle every payment once; the throughputs are figures, with what bounds them.
 */
async function scaleOutPart(): Promise<boolean> {
  console.log("\nScale-out: relayed x402-paid operations through 1 and 2 instances sharing one PostgreSQL database");
  const result = await measureScaleOut(hre, { seconds: Number(process.env.BENCH_SCALE_OUT_SECONDS ?? 30) });
  console.log("");
  for (const r of result.runs) {
    const x = r.relayed;
    console.log(
      `${r.instances} instance${r.instances > 1 ? "s" : ""}: ${x.txPerSec} relayed ops/s (${x.confirmed} confirmed, ${x.failed} failed), p50 ${x.p50Ms} ms; ` +
        `relayer nonces ${x.relayer.contiguous ? "contiguous" : "NOT contiguous"} (${x.relayer.nonceSpan} span, ${x.relayer.duplicates} duplicates); ` +
        `${r.payments.settled} payments ${r.payments.settledOnce ? "each settled once" : "NOT settled once"}; CPU services ${x.cpu.services.join("/")}, chains + clients ${x.cpu.benchProcess}`,
    );
  }
  console.log(
    `2 instances / 1 instance: ${result.speedup}× ; nonces contiguous and payments settled once: ${result.pass ? "PASS" : "FAIL"}`,
  );
  for (const note of result.notes) console.log(`bound: ${note}`);
  writeBenchResult("scale-out.json", result);
  return !result.pass;
}

/**
 * Webhook delivery: latency from commit to receiver (p50, p95) for batches' events and single test events, and the
 * events per second one instance delivers from a backlog (BENCH_EVENTS_BACKLOG, default 4000). Figures, no target.
 */
async function eventsPart(): Promise<boolean> {
  console.log(
    "\nEvents: webhook delivery latency (commit → receiver) and one instance's delivery rate (embedded database)",
  );
  const result = await measureEvents(hre, { backlog: Number(process.env.BENCH_EVENTS_BACKLOG ?? 4000) });
  const l = result.latency;
  console.log(
    `batch events: p50 ${l.batchEvents.p50Ms} ms, p95 ${l.batchEvents.p95Ms} ms, max ${l.batchEvents.maxMs} ms (${l.batchEvents.samples} events)`,
  );
  console.log(
    `test events one at a time: p50 ${l.testEvents.p50Ms} ms, p95 ${l.testEvents.p95Ms} ms, max ${l.testEvents.maxMs} ms (${l.testEvents.samples} events)`,
  );
  const t = result.throughput;
  console.log(
    `one instance drained ${t.events} events in ${t.seconds} s: ${t.eventsPerSec} events/s (WEBHOOK_CONCURRENCY ${t.concurrency})`,
  );
  for (const note of result.notes) console.log(`note: ${note}`);
  writeBenchResult("events.json", result);
  return false;
}

async function memoryPart(): Promise<boolean> {
  console.log("\nMemory and start-up of the built service (node dist/service/main.js, production dependencies only)");
  const result = await measureMemory(hre);
  const t = MEMORY_TARGETS;
  console.log(
    `run  load        database  state     /health after  serving after  start CPU  RSS at 20 s  heap used  external`,
  );
  for (const s of result.starts) {
    console.log(
      `${String(s.run).padEnd(4)} ${s.load.join("→").padEnd(11)} ${s.database.padEnd(9)} ${s.state.padEnd(9)} ${`${s.healthAfterMs} ms`.padStart(13)}  ${`${s.servingAfterMs} ms`.padStart(13)}  ${`${s.startCpuSeconds} s`.padStart(9)}  ${`${s.rssMiB} MiB`.padStart(11)}  ${`${s.heapUsedMiB}`.padStart(9)}  ${`${s.externalMiB}`.padStart(8)}`,
    );
  }
  console.log(
    `postgres after ${result.load.afterRunsMiB.length} identical load runs: ${result.load.afterRunsMiB.join(", ")} MiB RSS (idle before ${result.load.idleMiB}); after a full GC ${result.load.afterGcMiB.join(", ")} MiB RSS, heap ${result.load.heapAfterGcMiB.join(", ")} MiB (last run ${result.load.flatMiB >= 0 ? "+" : ""}${result.load.flatMiB} MiB)`,
  );
  const mark = (ok: boolean) => (ok ? "PASS" : "FAIL");
  console.log(
    `postgres RSS 20 s after launch ≤ ${t.postgresIdleMiB} MiB: ${mark(result.pass.postgresIdle)}; after load ≤ ${t.postgresAfterLoadMiB} MiB: ${mark(result.pass.postgresAfterLoad)}; heap after a full GC flat (±${t.flatHeapMiB} MiB): ${mark(result.pass.flatBetweenRuns)}`,
  );
  console.log(`machine load average while measuring: ${result.loadAverage.join(", ")} on ${result.cpus} cores`);
  console.log(
    `/health ≤ ${t.healthFreshMs} ms after launch on a fresh database: ${mark(result.pass.healthFresh)}; ≤ ${t.healthExistingMs} ms on an existing one: ${mark(result.pass.healthExisting)}`,
  );
  console.log(
    `(/health is liveness: "starting" from the moment the port opens; "serving after" is when it said "ok" and the API answered, no target)`,
  );
  writeBenchResult("memory.json", result);
  return Object.values(result.pass).some((ok) => !ok);
}

/**
 * The operator console on a busy embedded database (10,000 batches, 10,000 payments, 10,000 webhook deliveries): each
 * page and list, BENCH_CONSOLE_ROUNDS times (default 40). Target: p95 ≤ 300 ms per page.
 */
async function consolePart(): Promise<boolean> {
  console.log(
    "\nOperator console: pages on the embedded database with 10,000 batches, 10,000 payments and 10,000 webhook deliveries",
  );
  const result = await measureConsole(hre, { rounds: Number(process.env.BENCH_CONSOLE_ROUNDS ?? 40) });
  console.log(`(seeded in ${result.seedSeconds} s)`);
  const width = Math.max(...result.rows.map((r) => r.page.length));
  console.log(`${"page".padEnd(width)}  status   p50 ms   p95 ms   max ms  target`);
  for (const r of result.rows) {
    console.log(
      `${r.page.padEnd(width)}  ${String(r.status).padStart(6)}  ${String(r.p50Ms).padStart(7)}  ${String(r.p95Ms).padStart(7)}  ${String(r.maxMs).padStart(7)}  ${r.pass ? "PASS" : "FAIL"} (p95 ≤ ${CONSOLE_TARGET_MS} ms)`,
    );
  }
  writeBenchResult("console.json", {
    measuredAt: new Date().toISOString(),
    cpus: os.cpus().length,
    loadAverage: os.loadavg(),
    ...result,
  });
  return result.rows.some((r) => !r.pass);
}

/**
 * What an agent loads: tools/list bytes and estimated tokens (bytes / 4) by default, per toolset, everything and
 * read-only, over HTTP and stdio. Target: the default list ≤ 40 tools and ≤ 48 KB on both transports.
 */
async function mcpPart(): Promise<boolean> {
  console.log("\nMCP: tools/list as an agent loads it (HTTP: POST /mcp; stdio: the stdio server with a wallet)");
  const rows = await measureMcp(hre);
  const width = Math.max(...rows.map((r) => r.toolsets.length));
  console.log(`transport  ${"toolsets".padEnd(width)}  tools     bytes  ~tokens  target`);
  for (const r of rows) {
    const mark =
      r.pass === undefined
        ? ""
        : `${r.pass ? "PASS" : "FAIL"} (≤ ${MCP_TARGET.tools} tools, ≤ ${MCP_TARGET.bytes} bytes)`;
    console.log(
      `${r.transport.padEnd(9)}  ${r.toolsets.padEnd(width)}  ${String(r.tools).padStart(5)}  ${String(r.bytes).padStart(8)}  ${String(r.estimatedTokens).padStart(7)}  ${mark}`,
    );
  }
  writeBenchResult("mcp.json", { measuredAt: new Date().toISOString(), target: MCP_TARGET, rows });
  return rows.some((r) => r.pass === false);
}

async function sandboxPart(): Promise<boolean> {
  console.log(
    "\nMemory of npm start (the service and its chains' process, from the sources) and of each half on its own",
  );
  const result = await measureSandboxMemory();
  writeBenchResult("sandbox-memory.json", result);
  console.log("\nSpeed on npm start: latency beside the chain's own calls, then paying clients on 2 s blocks");
  const clients = Number(process.env.BENCH_SANDBOX_CLIENTS ?? 150);
  const runs = await inRuns(
    "sandbox-speed",
    "Speed on `npm start` (scripts/dev.ts: the service from the sources on the embedded database, its chains in a process of their own)",
    "BENCH_ONLY=sandbox npm run bench",
    ["what", "service p50", "raw p50 / blocks", "ratio / p50 blocks", "service RPC requests per op", "result"],
    () => measureSandboxSpeed({ clients, seconds: Number(process.env.BENCH_SANDBOX_SECONDS ?? 30) }),
    (r) => [
      ...r.latency.map((l) => [
        l.operation,
        `${l.serviceP50Ms} ms`,
        `${l.rawP50Ms} ms`,
        `${l.ratio}×`,
        l.rpc.serviceRoundTrips,
        l.pass ? "PASS" : "FAIL",
      ]),
      [
        `${r.lanes.clients} paying clients, 2 s blocks (CPU service ${r.lanes.cpu.service}, chains ${r.lanes.cpu.chains}, clients ${r.lanes.cpu.clients})`,
        `${r.lanes.opsPerBlock} per block`,
        `${r.lanes.blocks} blocks`,
        `p50 ${r.lanes.p50Blocks} (p95 ${r.lanes.p95Blocks})`,
        `${r.lanes.failed} failed`,
        r.lanes.pass ? "PASS" : "FAIL",
      ],
    ],
  );
  const last = runs[runs.length - 1];
  writeBenchResult("sandbox-speed.json", { measuredAt: new Date().toISOString(), loadAverage: os.loadavg(), ...last });
  const passed = runs.every((r) => r.latency.every((l) => l.pass) && r.lanes.pass);
  console.log(
    `npm start: latency within ${LATENCY_RATIO}× and ${LANE_TARGET.opsPerBlock} per block at p50 ≤ ${LANE_TARGET.p50Blocks} blocks in ${runs.filter((r) => r.latency.every((l) => l.pass) && r.lanes.pass).length} of ${runs.length} runs: ${passed ? "PASS" : "FAIL"}`,
  );
  return !passed;
}

async function main(): Promise<void> {
  const parts = selectedParts();
  const failed: string[] = [];
  if (parts.has("gas") && (await gasPart())) failed.push("gas");
  if (parts.has("latency") && (await latencyPart())) failed.push("latency");
  if (parts.has("reads") && (await readsPart())) failed.push("reads");
  if (parts.has("volume") && (await volumePart())) failed.push("volume");
  if (parts.has("integrity") && (await integrityPart())) failed.push("integrity");
  if (parts.has("lanes") && (await lanesPart())) failed.push("lanes");
  if (parts.has("capacity") && (await capacityPart())) failed.push("capacity");
  if (parts.has("scaleout") && (await scaleOutPart())) failed.push("scaleout");
  if (parts.has("events") && (await eventsPart())) failed.push("events");
  if (parts.has("memory") && (await memoryPart())) failed.push("memory");
  if (parts.has("sandbox") && (await sandboxPart())) failed.push("sandbox");
  if (parts.has("console") && (await consolePart())) failed.push("console");
  if (parts.has("mcp") && (await mcpPart())) failed.push("mcp");
  if (failed.length) {
    console.error(`${failed.join(" and ")} target FAILED`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
