import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { Pool } from "pg";
import { Wallet } from "ethers";
import { createSandbox, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../scripts/lib/sandbox";
import { cpuSeconds, startServiceProcess, type ServiceProcess } from "./service-process";
import { relayerKeysEnv } from "./relayer-keys";

export type BenchDatabase = "embedded" | "postgres";

export interface ReadRow {
  database: BenchDatabase;
  route: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** The service's CPU time per request served (user + system over the run / requests): less sensitive to a noisy machine than req/s. */
  serviceCpuUsPerRequest: number;
  /** req/s over the req/s of GET /get-network-info measured right before it (its baseline row). */
  ratio: number;
  target: string;
  pass: boolean | null;
}

export const BENCH_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CONNECTIONS = 50;
const SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 5);
/**
 * Each read and its baseline take turns, one second at a time, for SECONDS each: on a shared machine whose speed
 * drifts by half within a minute, both sides of a ratio then see the same drift.
 */
const SLICE_SECONDS = 1;
/**
 * Targets, as ratios to GET /get-network-info's req/s in the same run (absolute req/s on a shared, busy machine says
 * more about the machine than the service): every keyed read ≥ 0.8×, the liveness probe ≥ 0.9×.
 */
export const MIN_KEYED_RATIO = 0.8;
export const MIN_HEALTH_RATIO = 0.9;

/**
 * The service's environment against a sandbox: the embedded database in `dataDir`, or a fresh schema on the server;
 * with the relayer's extra keys when the part funded them (bench/relayer-keys.ts).
 */
export function serviceEnv(
  sandbox: Sandbox,
  dataDir: string,
  database: BenchDatabase,
  schema?: string,
): Record<string, string> {
  return {
    ENVIRONMENT: "sandbox",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    DEPLOYMENTS_DIR: sandbox.deploymentsDir,
    [`RPC_URL_${sandbox.sepolia.chainId}`]: sandbox.sepolia.url,
    [`RPC_URL_${sandbox.baseSepolia.chainId}`]: sandbox.baseSepolia.url,
    RELAYER_PRIVATE_KEY: sandbox.accounts[RELAYER_INDEX].privateKey,
    X402_SETTLEMENT_PRIVATE_KEY: sandbox.accounts[SETTLEMENT_INDEX].privateKey,
    ...relayerKeysEnv(sandbox),
    SEND_WAIT_MS: "60000",
    CONFIRMATIONS: "1",
    ...(database === "postgres" ? { DATABASE_URL: BENCH_DATABASE_URL, DATABASE_SCHEMA: schema ?? benchSchema() } : {}),
  };
}

export const benchSchema = () => "bench_" + randomBytes(5).toString("hex");

export async function dropSchema(schema: string): Promise<void> {
  const pool = new Pool({ connectionString: BENCH_DATABASE_URL, max: 1 });
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await pool.end();
}

/** POST JSON, answer the parsed body or throw with the status. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** One autocannon run of GET `pathname`. */
export async function hammer(
  url: string,
  pathname: string,
  headers: Record<string, string> = {},
  seconds = SECONDS,
  servicePid?: number,
) {
  const cpuBefore = servicePid ? cpuSeconds(servicePid) : NaN;
  // In a worker thread: the chains answer from this process's main thread, which the load generator must not starve.
  const result = await autocannon({
    url: url + pathname,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    workers: 1,
  });
  const cpuUsed = servicePid ? cpuSeconds(servicePid) - cpuBefore : NaN;
  return {
    requests: result.requests.total,
    reqPerSec: Math.round(result.requests.average),
    serviceCpuUsPerRequest: Math.round((cpuUsed / result.requests.total) * 1e6),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

type Hammered = Awaited<ReturnType<typeof hammer>>;

/**
 * Two routes measured in turns (see SLICE_SECONDS): each side's req/s and CPU per request over all its slices, its p50
 * the median of its slices' and its p99 the highest.
 */
async function hammerInTurns(
  url: string,
  a: { path: string; headers?: Record<string, string> },
  b: { path: string; headers?: Record<string, string> },
  servicePid: number,
): Promise<[Hammered, Hammered]> {
  const slices: [Hammered[], Hammered[]] = [[], []];
  for (let i = 0; i < Math.max(1, Math.round(SECONDS / SLICE_SECONDS)); i++) {
    slices[0].push(await hammer(url, a.path, a.headers, SLICE_SECONDS, servicePid));
    slices[1].push(await hammer(url, b.path, b.headers, SLICE_SECONDS, servicePid));
  }
  const combine = (runs: Hammered[]): Hammered => {
    const requests = runs.reduce((sum, r) => sum + r.requests, 0);
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
    return {
      requests,
      reqPerSec: Math.round(requests / (runs.length * SLICE_SECONDS)),
      serviceCpuUsPerRequest: Math.round(
        runs.reduce((sum, r) => sum + r.serviceCpuUsPerRequest * r.requests, 0) / requests,
      ),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
      errors: runs.reduce((sum, r) => sum + r.errors, 0),
      non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    };
  };
  return [combine(slices[0]), combine(slices[1])];
}

/**
 * Read throughput of the service (its own process) with 50 connections: the public network-info (no database, no
 * chain: the ceiling of the HTTP stack), health, a final batch's status, and the key-surface reads get-token-info and
 * get-balance-whitelist. Ratios are against network-info of the same run.
 */
export async function measureReads(
  hre: HardhatRuntimeEnvironment,
  opts: { database: BenchDatabase },
): Promise<ReadRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-reads-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const schema = benchSchema();
  const service = await startServiceProcess(serviceEnv(sandbox, dir, opts.database, schema));
  try {
    const setup = await setupReads(service, sandbox);
    const routes: { route: string; path: string; headers?: Record<string, string>; minRatio?: number }[] = [
      { route: "GET /get-network-info", path: "/get-network-info?chainId=aa36a7" },
      { route: "GET /health", path: "/health", minRatio: MIN_HEALTH_RATIO },
      // A batch prepared under a key is read with that key (another caller gets 404).
      {
        route: "GET /get-transaction-status (final batch)",
        path: `/get-transaction-status?txId=${setup.txId}`,
        headers: { "x-api-key": setup.key },
        minRatio: MIN_KEYED_RATIO,
      },
      {
        route: "GET /get-token-info",
        path: `/get-token-info?tokenSymbol=${setup.symbol}`,
        headers: { "x-api-key": setup.key },
        minRatio: MIN_KEYED_RATIO,
      },
      {
        route: "GET /get-balance-whitelist",
        path: `/get-balance-whitelist?tokenSymbol=${setup.symbol}&investorAddress=${setup.investor}`,
        headers: { "x-api-key": setup.key },
        minRatio: MIN_KEYED_RATIO,
      },
    ];
    // Warm-up (JIT, pools, caches), then the measured runs.
    for (const r of routes) await hammer(service.url, r.path, r.headers, 1);
    const rows: ReadRow[] = [];
    // Each read takes turns with its own baseline, network-info, so a machine that gets busier or quieter during the
    // part moves both sides of a ratio together.
    const [baselineRoute, ...reads] = routes;
    for (const r of reads) {
      const [base, m] = await hammerInTurns(service.url, baselineRoute, r, service.child.pid!);
      const ratio = Math.round((m.reqPerSec / base.reqPerSec) * 100) / 100;
      const ok = m.errors === 0 && m.non2xx === 0;
      const baseOk = base.errors === 0 && base.non2xx === 0;
      rows.push({
        database: opts.database,
        route: `${baselineRoute.route} (baseline of the next row)`,
        ...base,
        ratio: 1,
        target: "",
        pass: baseOk ? null : false,
      });
      rows.push({
        database: opts.database,
        route: r.route,
        ...m,
        ratio,
        target: r.minRatio ? `≥ ${r.minRatio}× network-info` : "",
        pass: r.minRatio ? ok && ratio >= r.minRatio : ok ? null : false,
      });
      console.log(
        `  [${opts.database}] ${baselineRoute.route}: ${base.reqPerSec} req/s, service CPU ${base.serviceCpuUsPerRequest} µs/request`,
      );
      console.log(
        `  [${opts.database}] ${r.route}: ${m.reqPerSec} req/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, service CPU ${m.serviceCpuUsPerRequest} µs/request, ratio ${ratio}${ok ? "" : ` (errors ${m.errors}, non-2xx ${m.non2xx})`}`,
      );
    }
    return rows;
  } finally {
    await service.stop();
    await sandbox.close();
    if (opts.database === "postgres") await dropSchema(schema);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A key, a token it created (client-signed by the issuer) and a whitelisted investor: what the reads read. */
export async function setupReads(service: ServiceProcess, sandbox: Sandbox) {
  const issuer = sandbox.accounts[1];
  const investor = Wallet.createRandom().address;
  const { apiKey: key, id: keyId } = await service.admin({
    command: "keys.create",
    email: "bench@example.com",
    plan: "Enterprise",
  });
  await service.admin({ command: "signers.add", address: issuer.address, keyId });
  const symbol = "R" + randomBytes(2).toString("hex").toUpperCase();
  const send = async (body: Record<string, unknown>) => {
    const prepared = await postJson(
      `${service.url}/prepare-transactions`,
      { chainId: "aa36a7", signerAddress: issuer.address, ...body },
      { "x-api-key": key },
    );
    const signed = await Promise.all(prepared.transactions.map((t: object) => issuer.signTransaction(t)));
    const sent = await postJson(
      `${service.url}/send-transactions`,
      { txId: prepared.txId, signedTransactions: signed },
      { "x-api-key": key },
    );
    if (sent.status !== "success") throw new Error(`setup ${String(body.method)} ended ${String(sent.status)}`);
    return prepared.txId as string;
  };
  await send({ method: "newTokenization", tokenizerEmail: "bench@example.com", name: symbol, tokenSymbol: symbol });
  const txId = await send({
    method: "whitelist",
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: investor, whitelistStatus: true }],
  });
  return { key, symbol, investor, txId };
}

export function printReadRows(rows: ReadRow[]): void {
  const width = Math.max(...rows.map((r) => r.route.length));
  console.log(`${"database".padEnd(9)} ${"route".padEnd(width)}  req/s    p50   p99  µs/req  ratio  target`);
  for (const r of rows) {
    const pass = r.pass === null ? "baseline" : `${r.pass ? "PASS" : "FAIL"} (${r.target})`;
    console.log(
      `${r.database.padEnd(9)} ${r.route.padEnd(width)} ${String(r.reqPerSec).padStart(6)} ${String(r.p50Ms).padStart(6)} ${String(r.p99Ms).padStart(5)} ${String(r.serviceCpuUsPerRequest).padStart(7)} ${r.ratio.toFixed(2).padStart(6)}  ${pass}`,
    );
  }
}

export function writeBenchResult(name: string, value: unknown): void {
  const out = path.join(__dirname, "results", name);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(value, null, 2) + "\n");
  console.log(`written ${path.relative(process.cwd(), out)}`);
}
