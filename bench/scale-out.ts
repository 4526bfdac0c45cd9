import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, Wallet } from "ethers";
import { Pool } from "pg";
import type { Sandbox } from "../scripts/lib/sandbox";
import { createSandboxProcess } from "../scripts/lib/chains-process";
import { USDC__factory } from "../typechain-types";
import { BENCH_DATABASE_URL, benchSchema, dropSchema, serviceEnv } from "./reads";
import { startServiceProcess, type ServiceProcess } from "./service-process";
import { boundOf, fund, relayedRun, type RelayedRun } from "./volume";
import { fundRelayerKeys } from "./relayer-keys";

export interface ScaleOutRun {
  instances: number;
  relayed: RelayedRun;
  /** Payments this run settled (the database), the distinct settlement transactions they name, and the USDC they moved. */
  payments: {
    settled: number;
    distinctSettlements: number;
    settledAmount: string;
    payeeReceived: string;
    settledOnce: boolean;
  };
  bound: string;
}

export interface ScaleOutResult {
  measuredAt: string;
  cpus: number;
  seconds: number;
  clients: number;
  runs: ScaleOutRun[];
  /** Two instances' confirmed operations/s over one instance's, same clients, same database server, same run. */
  speedup: number;
  pass: boolean;
  notes: string[];
}

/**
 * Scale-out on the PostgreSQL server: the same paying clients drive service-relayed, x402-paid agentCreateToken
 * through one instance, then through two instances sharing one schema (a fresh one per run, dropped after), for
 * `seconds` each. Both runs check what sharing a database must keep: the relayer's nonces contiguous (no gap, no
 * duplicate), and every payment settled once (each settled payment names its own settlement transaction, and the
 * payee received exactly the sum the database says was settled).
 */
export async function measureScaleOut(
  hre: HardhatRuntimeEnvironment,
  opts: { seconds?: number; clients?: number; log?: (line: string) => void } = {},
): Promise<ScaleOutResult> {
  const seconds = opts.seconds ?? 30;
  const clients = opts.clients ?? 20;
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-scale-"));
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments") });
  const chain = sandbox.baseSepolia;
  const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const payers = Array.from({ length: clients }, () => new Wallet(Wallet.createRandom().privateKey, provider));
    await fund(sandbox, provider, payers, []);
    await fundRelayerKeys(sandbox);
    const runs: ScaleOutRun[] = [];
    for (const instances of [1, 2]) runs.push(await oneRun(sandbox, provider, payers, instances, seconds, dir, log));
    const [one, two] = runs;
    const speedup = Math.round((two.relayed.txPerSec / one.relayed.txPerSec) * 100) / 100;
    const notes = runs.map((r) => `${r.instances} instance(s): ${r.bound}`);
    const pass = runs.every((r) => r.relayed.relayer.contiguous && r.payments.settledOnce && r.relayed.confirmed > 0);
    return {
      measuredAt: new Date().toISOString(),
      cpus: os.cpus().length,
      seconds,
      clients,
      runs,
      speedup,
      pass,
      notes,
    };
  } finally {
    provider.destroy();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function oneRun(
  sandbox: Sandbox,
  provider: JsonRpcProvider,
  payers: Wallet[],
  count: number,
  seconds: number,
  dir: string,
  log: (line: string) => void,
): Promise<ScaleOutRun> {
  const schema = benchSchema();
  const env = serviceEnv(sandbox, path.join(dir, `pg-${count}`), "postgres", schema);
  const instances: ServiceProcess[] = [];
  try {
    // One at a time: the first migrates the fresh schema, the others find it done.
    for (let i = 0; i < count; i++) instances.push(await startServiceProcess(env));
    const usdc = USDC__factory.connect(sandbox.deployments[sandbox.baseSepolia.chainId].contracts.USDC, provider);
    const payTo = await payeeOf(instances[0]);
    const before = await usdc.balanceOf(payTo);
    const label = `relayed, ${count} instance${count > 1 ? "s" : ""}, one PostgreSQL schema`;
    const relayed = await relayedRun(sandbox, provider, instances, payers, seconds, "postgres", label, log);
    // Settlements finish after the answers (a send answers once its operation is confirmed): wait until none is left.
    const payments = await settledPayments(schema, async () => (await usdc.balanceOf(payTo)) - before);
    const result: ScaleOutRun = { instances: count, relayed, payments, bound: boundOf(relayed) };
    log(
      `${label}: ${payments.settled} payments settled by ${payments.distinctSettlements} settlement transactions, ` +
        `${payments.settledAmount} settled = ${payments.payeeReceived} received: ${payments.settledOnce ? "each settled once" : "NOT settled once"}`,
    );
    return result;
  } finally {
    await Promise.all(instances.map((s) => s.stop()));
    await dropSchema(schema);
  }
}

/** Where the instances' x402 payments go (the requirements of a paid call name it). */
async function payeeOf(instance: ServiceProcess): Promise<string> {
  const res = await fetch(`${instance.url}/x402/token/create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      chainId: "84532",
      name: "Payee probe",
      symbol: "PAYEE",
      agentWallet: Wallet.createRandom().address,
    }),
  });
  const body = (await res.json()) as {
    x402Requirements?: { payTo: string } | { payTo: string }[];
    accepts?: { payTo: string }[];
  };
  const requirements = body.x402Requirements ?? body.accepts;
  const first = Array.isArray(requirements) ? requirements[0] : requirements;
  if (!first?.payTo) throw new Error(`no payTo in ${JSON.stringify(body).slice(0, 300)}`);
  return first.payTo;
}

async function settledPayments(schema: string, received: () => Promise<bigint>): Promise<ScaleOutRun["payments"]> {
  const pool = new Pool({ connectionString: BENCH_DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
  try {
    for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const [{ open }] = (
        await pool.query<{ open: number }>(
          "SELECT count(*)::int AS open FROM payments WHERE status IN ('reserved', 'settling')",
        )
      ).rows;
      if (open === 0 || Date.now() > deadline) break;
    }
    const [row] = (
      await pool.query<{ settled: number; distinct_settlements: number; amount: string }>(
        "SELECT count(*)::int AS settled, count(DISTINCT settle_tx_hash)::int AS distinct_settlements, COALESCE(sum(amount), 0)::text AS amount FROM payments WHERE status = 'settled'",
      )
    ).rows;
    const payeeReceived = await received();
    return {
      settled: row.settled,
      distinctSettlements: row.distinct_settlements,
      settledAmount: row.amount,
      payeeReceived: payeeReceived.toString(),
      settledOnce: row.distinct_settlements === row.settled && BigInt(row.amount) === payeeReceived,
    };
  } finally {
    await pool.end();
  }
}
