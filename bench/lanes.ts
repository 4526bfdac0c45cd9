import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, Wallet, parseEther, toQuantity } from "ethers";
import { payWithEthers } from "../test/helpers/x402";
import { createSandboxProcess } from "../scripts/lib/chains-process";
import { benchSchema, dropSchema, postJson, serviceEnv, type BenchDatabase } from "./reads";
import { cpuSeconds, startServiceProcess, type ServiceProcess } from "./service-process";
import { PAID_RELAYED_KINDS, perOperation, readDbWork, type DbWorkFigures } from "./db-work";
import { distinctClient, drive, fund, nextSymbol } from "./volume";

/**
 * Paid relayed operations per block and per relayer wallet: on the sandbox's Base Sepolia mining every `blockSeconds`
 * (default 2) in a process of its own, one service process (embedded database) with `keys` relayer keys, `clients`
 * paying clients each preparing, paying and sending agentCreateToken in a loop. A row per keys × clients: operations
 * per block (confirmed operations over the blocks mined during the run), per block per key, p50 and p95 in blocks, the
 * CPU of the service, of the chains' process and of the bench (the clients), each as a share of one core. Target: one key carries 100 paid operations per block with p50 within 1.5 blocks.
 */
export interface LaneRow {
  keys: number;
  clients: number;
  /** Service processes sharing one PostgreSQL schema (and every relayer key); 1 on the embedded database. */
  instances: number;
  seconds: number;
  blocks: number;
  confirmed: number;
  failed: number;
  opsPerBlock: number;
  opsPerBlockPerKey: number;
  p50Blocks: number;
  p95Blocks: number;
  /** The service processes' CPU, summed. */
  serviceCpu: number;
  /** The chains' process (Hardhat: one thread, which also runs every pending-block read and mines the blocks). */
  chainsCpu: number;
  benchCpu: number;
  /** Per operation: the prepare's and the send's database trips, statements and time (bench/db-work.ts). */
  dbWork: Record<string, DbWorkFigures>;
  errors: string[];
}

export const LANE_TARGET = { opsPerBlock: 100, p50Blocks: 1.5 };

export async function measureLanes(
  hre: HardhatRuntimeEnvironment,
  opts: {
    keys?: number[];
    clients?: number[];
    seconds?: number;
    blockSeconds?: number;
    database?: BenchDatabase;
    /** With PostgreSQL: rows for these numbers of service processes sharing the schema (default [1]). */
    instances?: number[];
    log?: (line: string) => void;
  } = {},
): Promise<LaneRow[]> {
  const keyCounts = opts.keys ?? [1, 2, 4];
  const clientCounts = opts.clients ?? [100, 150];
  const seconds = opts.seconds ?? 30;
  const blockSeconds = opts.blockSeconds ?? 2;
  const database = opts.database ?? "embedded";
  const instanceCounts = database === "postgres" ? (opts.instances ?? [1]) : [1];
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-lanes-"));
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments") });
  const chain = sandbox.baseSepolia;
  const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  const rows: LaneRow[] = [];
  try {
    const payers = Array.from(
      { length: Math.max(...clientCounts) },
      () => new Wallet(Wallet.createRandom().privateKey, provider),
    );
    await fund(sandbox, provider, payers, []);
    const extraKeys = Array.from(
      { length: Math.max(...keyCounts) - 1 },
      () => new Wallet(Wallet.createRandom().privateKey),
    );
    for (const key of extraKeys)
      await chain.provider.request({
        method: "hardhat_setBalance",
        params: [key.address, toQuantity(parseEther("1000"))],
      });
    await chain.setBlockTime(blockSeconds);
    for (const instanceCount of instanceCounts)
      for (const keys of keyCounts) {
        for (const clients of clientCounts) {
          const extra = extraKeys.slice(0, keys - 1);
          const schema = database === "postgres" ? benchSchema() : undefined;
          // Instances sharing one database share its data key.
          const dataKey = randomBytes(32).toString("hex");
          const envOf = (n: number): Record<string, string> => ({
            ...serviceEnv(sandbox, path.join(dir, `i${instanceCount}k${keys}c${clients}-${n}`), database, schema),
            DATA_ENCRYPTION_KEY: dataKey,
            ...(extra.length ? { RELAYER_EXTRA_PRIVATE_KEYS: extra.map((k) => k.privateKey).join(",") } : {}),
          });
          // One after the other: the first migrates the shared schema.
          const services: ServiceProcess[] = [];
          for (let n = 0; n < instanceCount; n++) services.push(await startServiceProcess(envOf(n)));
          try {
            await new Promise((r) => setTimeout(r, blockSeconds * 2000)); // its delegations mined
            const agentWallet = sandbox.accounts[6].address;
            const headBefore = await provider.getBlockNumber();
            const [chainsCpuBefore, startedAt] = [cpuSeconds(sandbox.pid), performance.now()];
            const workBefore = await Promise.all(services.map((s) => readDbWork(s.url)));
            const run = await drive(
              `${instanceCount} instance(s), ${keys} key(s), ${clients} clients, ${blockSeconds} s blocks`,
              services,
              clients,
              seconds,
              log,
              async (client, service) => {
                const prepared = await postJson(
                  `${service.url}/x402/token/create`,
                  { chainId: "84532", name: "Lane agent token", symbol: nextSymbol("L"), agentWallet },
                  distinctClient(),
                );
                const res = await fetch(`${service.url}/send-transactions`, {
                  method: "POST",
                  headers: {
                    "content-type": "application/json",
                    "X-PAYMENT": await payWithEthers(payers[client], prepared.x402Requirements),
                  },
                  body: JSON.stringify({ txId: prepared.txId }),
                });
                const body = (await res.json()) as any;
                if (res.status !== 200 || body.status !== "success")
                  throw new Error(
                    `send answered ${res.status} ${body.status ?? ""} ${body.error?.message ?? ""}`.slice(0, 160),
                  );
                return {};
              },
            );
            const chainsCpu = (cpuSeconds(sandbox.pid) - chainsCpuBefore) / ((performance.now() - startedAt) / 1000);
            const workAfter = await Promise.all(services.map((s) => readDbWork(s.url)));
            const blocks = (await provider.getBlockNumber()) - headBefore;
            if (process.env.BENCH_LANES_INSPECT) {
              for (let n = headBefore + 1; n <= headBefore + blocks; n++) {
                const block = (await provider.send("eth_getBlockByNumber", [toQuantity(n), true])) as {
                  transactions: { gas: string }[];
                  gasUsed: string;
                  gasLimit: string;
                };
                const limits = block.transactions.reduce((sum, t) => sum + BigInt(t.gas), 0n);
                log(
                  `  block ${n}: ${block.transactions.length} txs, gas used ${BigInt(block.gasUsed)}, sum of tx gas limits ${limits}, block gas limit ${BigInt(block.gasLimit)}`,
                );
              }
            }
            const perBlock = Math.round((run.confirmed / Math.max(1, blocks)) * 10) / 10;
            const inBlocks = (ms: number) => Math.round((ms / (blockSeconds * 1000)) * 100) / 100;
            const row: LaneRow = {
              keys,
              clients,
              instances: instanceCount,
              seconds: run.seconds,
              blocks,
              confirmed: run.confirmed,
              failed: run.failed,
              opsPerBlock: perBlock,
              opsPerBlockPerKey: Math.round((perBlock / keys) * 10) / 10,
              p50Blocks: inBlocks(run.p50Ms),
              p95Blocks: inBlocks(run.p95Ms),
              serviceCpu: Math.round(run.cpu.services.reduce((a, b) => a + b, 0) * 100) / 100,
              chainsCpu: Math.round(chainsCpu * 100) / 100,
              benchCpu: run.cpu.benchProcess,
              dbWork: perOperation(workBefore, workAfter, PAID_RELAYED_KINDS, run.confirmed + run.failed),
              errors: run.errors,
            };
            log(
              `${instanceCount} instance(s), ${keys} key(s) × ${clients} clients: ${row.opsPerBlock} ops/block (${row.opsPerBlockPerKey} per key), p50 ${row.p50Blocks} blocks, p95 ${row.p95Blocks} blocks, ${row.failed} failed, CPU: service ${row.serviceCpu}, chains ${row.chainsCpu}, clients ${row.benchCpu}`,
            );
            rows.push(row);
          } finally {
            await Promise.all(services.map((service) => service.stop()));
            if (schema) await dropSchema(schema);
          }
        }
      }
    return rows;
  } finally {
    provider.destroy();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
