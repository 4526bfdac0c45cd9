import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { JsonRpcProvider, Wallet } from "ethers";
import type { Sandbox } from "../scripts/lib/sandbox";
import { switchMining } from "../scripts/lib/local-chain";
import { payWithEthers } from "../test/helpers/x402";
import { measureLatencyOn, type LatencyRow } from "./latency";
import { LANE_TARGET } from "./lanes";
import { postJson } from "./reads";
import { script, stop, until } from "./sandbox-memory";
import { childPids, cpuSeconds, type ServiceProcess } from "./service-process";
import { distinctClient, drive, fund, nextSymbol } from "./volume";

/** What `npm start` writes for a newcomer (scripts/lib/sandbox-service.ts). */
interface Credentials {
  baseUrl: string;
  apiKey: string;
  chains: Record<string, { rpcUrl: string; deployment: any }>;
  accounts: { address: string; privateKey: string }[];
}

export interface SandboxSpeed {
  /** prepare and send until confirmed against the chain's own calls, side by side, on chains mining at once. */
  latency: LatencyRow[];
  /** Paying clients on 2 s blocks (switched on the running chains), as the lanes bench's closed loop. */
  lanes: {
    clients: number;
    seconds: number;
    blocks: number;
    confirmed: number;
    failed: number;
    opsPerBlock: number;
    p50Blocks: number;
    p95Blocks: number;
    cpu: { service: number; chains: number; clients: number };
    pass: boolean;
    errors: string[];
  };
}

/**
 * Speed on what a newcomer starts: `npm start` itself (scripts/dev.ts from the sources: the service on the embedded
 * database in its process, the chains in a child process of their own), on a fresh data directory. First prepare and
 * send until confirmed beside the chain's own calls (bench/latency.ts, against its chains mining at once), then the
 * chains switched to 2 s blocks and `clients` paying clients preparing, paying and sending agentCreateToken in a loop
 * (bench/lanes.ts's closed loop). Target: each latency ratio ≤ 1.5, and ≥ 100 operations per block with p50 ≤ 1.5 blocks.
 */
export async function measureSandboxSpeed(
  opts: { rounds?: number; clients?: number; seconds?: number; log?: (line: string) => void } = {},
): Promise<SandboxSpeed> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-sandbox-speed-"));
  const dev = script("dev", dataDir, {
    LOCAL_BLOCK_TIME: "0",
    LOG_LEVEL: process.env.BENCH_SANDBOX_LOG_LEVEL ?? "warn",
  });
  try {
    await until("npm start", dev, "sandbox is up");
    const credentials = JSON.parse(
      fs.readFileSync(path.join(dataDir, "sandbox", "dev-credentials.json"), "utf8"),
    ) as Credentials;
    const adminToken = fs.readFileSync(path.join(dataDir, "sandbox", "admin-token"), "utf8").trim();
    const admin = async (command: Record<string, unknown>) => {
      const res = await fetch(`${credentials.baseUrl}/admin/command`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-token": adminToken },
        body: JSON.stringify(command),
      });
      const body = (await res.json()) as any;
      if (res.status !== 200)
        throw new Error(`admin ${String(command.command)}: ${res.status} ${JSON.stringify(body)}`);
      return body.result;
    };
    const issuer = new Wallet(credentials.accounts[1].privateKey);
    await admin({ command: "signers.add", address: issuer.address, allKeys: true });
    log("  npm start is up: prepare and send until confirmed beside the chain's own calls…");
    const latency = await measureLatencyOn(
      {
        url: credentials.baseUrl,
        chainUrl: credentials.chains["11155111"].rpcUrl,
        blockTime: 0,
        issuer,
        newKey: async (email) => (await admin({ command: "keys.create", email, plan: "Enterprise" })).apiKey,
        tokenAddress: async (symbol, key) => {
          const res = await fetch(`${credentials.baseUrl}/get-tokenizer-info?tokenSymbol=${symbol}`, {
            headers: { "x-api-key": key },
          });
          const body = (await res.json()) as { tokenAddress?: string };
          if (!body.tokenAddress) throw new Error(`no address for ${symbol}: ${JSON.stringify(body)}`);
          return body.tokenAddress;
        },
        serviceRpc: { snapshot: () => rpcRequests(credentials.baseUrl, "11155111") },
      },
      opts.rounds ?? 50,
    );
    const lanes = await lanesOn(credentials, dev.child.pid!, opts.clients ?? 150, opts.seconds ?? 30, log);
    return { latency, lanes };
  } finally {
    await stop(dev.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The service's RPC requests to a chain so far, from its /metrics (tak_rpc_calls_total, answered ones). */
async function rpcRequests(baseUrl: string, chainId: string): Promise<{ calls: number; roundTrips: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(
    new RegExp(`^tak_rpc_calls_total\\{chain_id="${chainId}",[^}]*outcome="ok"\\} ([0-9.e+]+)$`, "gm"),
  ))
    n += Number(m[1]);
  return { calls: n, roundTrips: n };
}

async function lanesOn(
  credentials: Credentials,
  devPid: number,
  clients: number,
  seconds: number,
  log: (line: string) => void,
): Promise<SandboxSpeed["lanes"]> {
  const blockSeconds = 2;
  const chainUrl = credentials.chains["84532"].rpcUrl;
  const provider = new JsonRpcProvider(chainUrl, 84532, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const accounts = credentials.accounts.map((a) => new Wallet(a.privateKey));
    const sandboxLike = {
      accounts,
      deployments: { 84532: credentials.chains["84532"].deployment },
      baseSepolia: { chainId: 84532 },
    } as unknown as Sandbox;
    const payers = Array.from({ length: clients }, () => new Wallet(Wallet.createRandom().privateKey, provider));
    await fund(sandboxLike, provider, payers, []);
    await switchMining({ request: ({ method, params }) => provider.send(method, params ?? []) }, blockSeconds * 1000);
    await new Promise((r) => setTimeout(r, blockSeconds * 2000));
    const chainsPid = childPids(devPid)[0];
    const chainsBefore = cpuSeconds(chainsPid);
    const started = performance.now();
    const headBefore = await provider.getBlockNumber();
    const service = { url: credentials.baseUrl, child: { pid: devPid } } as unknown as ServiceProcess;
    const agentWallet = accounts[6].address;
    const run = await drive(
      `npm start, ${clients} clients, 2 s blocks`,
      [service],
      clients,
      seconds,
      log,
      async (client) => {
        const prepared = await postJson(
          `${credentials.baseUrl}/x402/token/create`,
          { chainId: "84532", name: "Sandbox lane token", symbol: nextSymbol("S"), agentWallet },
          distinctClient(),
        );
        const res = await fetch(`${credentials.baseUrl}/send-transactions`, {
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
    const blocks = (await provider.getBlockNumber()) - headBefore;
    const elapsed = (performance.now() - started) / 1000;
    const opsPerBlock = Math.round((run.confirmed / Math.max(1, blocks)) * 10) / 10;
    const inBlocks = (ms: number) => Math.round((ms / (blockSeconds * 1000)) * 100) / 100;
    const lanes = {
      clients,
      seconds: run.seconds,
      blocks,
      confirmed: run.confirmed,
      failed: run.failed,
      opsPerBlock,
      p50Blocks: inBlocks(run.p50Ms),
      p95Blocks: inBlocks(run.p95Ms),
      cpu: {
        service: run.cpu.services[0],
        chains: Math.round(((cpuSeconds(chainsPid) - chainsBefore) / elapsed) * 100) / 100,
        clients: run.cpu.benchProcess,
      },
      pass: opsPerBlock >= LANE_TARGET.opsPerBlock && inBlocks(run.p50Ms) <= LANE_TARGET.p50Blocks && run.failed === 0,
      errors: run.errors,
    };
    log(
      `  npm start, ${clients} paying clients on 2 s blocks: ${opsPerBlock} per block, p50 ${lanes.p50Blocks} blocks, p95 ${lanes.p95Blocks}, ${run.failed} failed; CPU service ${lanes.cpu.service}, chains ${lanes.cpu.chains}, clients ${lanes.cpu.clients}`,
    );
    return lanes;
  } finally {
    provider.destroy();
  }
}
