import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, NonceManager, Wallet, parseEther, parseUnits, type TransactionResponse } from "ethers";
import { SETTLEMENT_INDEX, type Sandbox } from "../scripts/lib/sandbox";
import { createSandboxProcess } from "../scripts/lib/chains-process";
import { AgentTokenFactory__factory, USDC__factory } from "../typechain-types";
import { benchSchema, dropSchema, postJson, serviceEnv } from "./reads";
import { payWithEthers } from "../test/helpers/x402";
import { cpuSeconds, startServiceProcess, type ServiceProcess } from "./service-process";
import { fundRelayerKeys, relayerAddresses } from "./relayer-keys";

export interface VolumeOptions {
  /** Seconds of each relayed run (default 60). */
  seconds?: number;
  /** Concurrent clients, each with its own payer or signer wallet (default 20). */
  clients?: number;
  /** Seconds of the client-signed run and of its raw twin (default 15). */
  clientSignedSeconds?: number;
  /** Identical relayed runs on the embedded-database instance, memory read after each (default 2, at least 2). */
  identicalRuns?: number;
  /** Skip the two-instance run on the PostgreSQL server. */
  skipPostgres?: boolean;
  log?: (line: string) => void;
}

export interface Throughput {
  run: string;
  clients: number;
  seconds: number;
  confirmed: number;
  failed: number;
  txPerSec: number;
  p50Ms: number;
  p95Ms: number;
  /** Where the time of one operation goes, from the client: prepare and send (send = verify, sign, broadcast, mine, receipt, records, settle). */
  prepareP50Ms?: number;
  sendP50Ms?: number;
  /** CPU used during the run, as a share of one core: each service process, and the bench process (both chains and all clients). */
  cpu: { services: number[]; benchProcess: number };
  errors: string[];
}

export interface RelayedRun extends Throughput {
  instances: number;
  database: "embedded" | "postgres";
  /**
   * The relayer's nonces over the run, over its `keys`: the span of their on-chain nonces, the relayed transactions, and
   * whether each key's are exactly its span.
   */
  relayer: { keys: number; nonceSpan: number; relayedTransactions: number; contiguous: boolean; duplicates: number };
  settlements: number;
  /** Re-sends after "nonce too high", summed over the instances (their /metrics). */
  nonceTooHighRetries: number;
  target: string;
  pass: boolean;
}

export interface MemorySample {
  rssMiB: number;
  heapUsedMiB: number;
}

export interface VolumeResult {
  measuredAt: string;
  cpus: number;
  relayed: RelayedRun[];
  clientSigned: { service: Throughput; raw: Throughput; ratio: number };
  /**
   * The embedded-database instance's resident set and V8 heap in use (from its /metrics), each read after a forced full
   * garbage collection: idle, and after each identical relayed run. Growth is the last run's (last minus the one before).
   */
  memory: { idle: MemorySample; afterRuns: MemorySample[]; growth: MemorySample };
  /** One client alone (no contention): the latency of one paid relayed operation end to end. */
  singleClient: Throughput;
  notes: string[];
}

const TARGET_TX_PER_SEC = 100;
const USDC_PER_PAYER = parseUnits("1000", 6);

/**
 * Throughput at volume against the real service in its own process (the chains and the clients stay in this one):
 * service-relayed agentCreateToken paid with x402 by `clients` wallets for `seconds` on one instance (twice: the
 * second run measures memory growth) and on two instances sharing the PostgreSQL server; then client-signed
 * agentCreateToken by `clients` signers beside the same signers sending the same call straight to the chain.
 */
export async function measureVolume(hre: HardhatRuntimeEnvironment, opts: VolumeOptions = {}): Promise<VolumeResult> {
  const seconds = opts.seconds ?? 60;
  const clients = opts.clients ?? 20;
  const clientSignedSeconds = opts.clientSignedSeconds ?? 15;
  const identicalRuns = Math.max(2, opts.identicalRuns ?? 2);
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-volume-"));
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments") });
  const notes: string[] = [];
  try {
    const chain = sandbox.baseSepolia;
    const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const payers = Array.from({ length: clients }, () => new Wallet(Wallet.createRandom().privateKey, provider));
    const signers = Array.from({ length: clients }, () => new Wallet(Wallet.createRandom().privateKey, provider));
    await fund(sandbox, provider, payers, signers);
    await fundRelayerKeys(sandbox);
    log(`funded ${clients} payers (USDC) and ${clients} signers (ETH) on chain ${chain.chainId}`);

    // One instance, embedded database: identical relayed runs (memory before, after each), then client-signed.
    const embedded = await startServiceProcess(serviceEnv(sandbox, path.join(dir, "one"), "embedded"), {
      collectableGarbage: true,
    });
    let clientSigned: VolumeResult["clientSigned"];
    const relayed: RelayedRun[] = [];
    let memory: VolumeResult["memory"];
    let singleClient: Throughput;
    try {
      await sleep(5_000);
      const idle = await memorySample(embedded);
      log(`service idle: ${idle.rssMiB} MiB RSS, heap used ${idle.heapUsedMiB} MiB (after a full GC)`);
      singleClient = await relayedRun(
        sandbox,
        provider,
        [embedded],
        payers.slice(0, 1),
        10,
        "embedded",
        "relayed, 1 client alone (latency without contention)",
        log,
      );
      const afterRuns: MemorySample[] = [];
      for (let run = 1; run <= identicalRuns; run++) {
        relayed.push(
          await relayedRun(
            sandbox,
            provider,
            [embedded],
            payers,
            seconds,
            "embedded",
            `relayed, 1 instance, embedded database (run ${run})`,
            log,
          ),
        );
        afterRuns.push(await memorySample(embedded));
        log(
          `service after run ${run} and a full GC: ${afterRuns[run - 1].rssMiB} MiB RSS, heap used ${afterRuns[run - 1].heapUsedMiB} MiB`,
        );
      }
      const [before, last] = afterRuns.slice(-2);
      const tenths = (n: number) => Math.round(n * 10) / 10;
      memory = {
        idle,
        afterRuns,
        growth: {
          rssMiB: tenths(last.rssMiB - before.rssMiB),
          heapUsedMiB: tenths(last.heapUsedMiB - before.heapUsedMiB),
        },
      };
      clientSigned = await clientSignedRuns(embedded, provider, signers, clientSignedSeconds, log);
    } finally {
      await embedded.stop();
    }

    if (!opts.skipPostgres) {
      const schema = benchSchema();
      const env = serviceEnv(sandbox, path.join(dir, "pg"), "postgres", schema);
      const first = await startServiceProcess(env); // the first one migrates; the second finds it done
      const second = await startServiceProcess(env);
      try {
        relayed.push(
          await relayedRun(
            sandbox,
            provider,
            [first, second],
            payers,
            seconds,
            "postgres",
            "relayed, 2 instances, PostgreSQL server",
            log,
          ),
        );
      } finally {
        await Promise.all([first.stop(), second.stop()]);
        await dropSchema(schema);
      }
    }
    provider.destroy();
    for (const r of relayed) notes.push(`${r.run}: ${boundOf(r)}`);
    notes.push(`client-signed: ${boundOf(clientSigned!.service)}; raw: ${boundOf(clientSigned!.raw)}`);
    return {
      measuredAt: new Date().toISOString(),
      cpus: os.cpus().length,
      relayed,
      singleClient,
      clientSigned,
      memory,
      notes,
    };
  } finally {
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface PaidRelayOptions {
  /** Clients on the instant chain: paying clients for the relayed run, signers for the raw run (default 20). */
  clients?: number;
  /** Seconds of each instant-chain run (default 20). */
  seconds?: number;
  /** Paying clients on the chain mining every `blockSeconds` (default 9). */
  blockClients?: number;
  /** Seconds of the run on that chain (default 40). */
  blockRunSeconds?: number;
  /** Its block time (default 2 s). */
  blockSeconds?: number;
  log?: (line: string) => void;
}

export interface PaidRelayResult {
  measuredAt: string;
  cpus: number;
  /** Instant (automine) chain: paid relayed operations/s beside the same chain's raw transactions/s (N signers sending the same call themselves). */
  instant: {
    relayed: Throughput;
    raw: Throughput;
    ratio: number;
    /** Chain transactions per paid operation: the relayer's and the settlement key's, over the confirmed operations. */
    txPerOperation: number;
    target: string;
    pass: boolean;
  };
  /**
   * Payments on another chain than their operation (faucet claims minted on Sepolia, paid on Base Sepolia, both
   * instant): each is settled after its operation, gathered with the others into settlement batches.
   */
  crossChain: {
    relayed: Throughput;
    payments: number;
    settlementTransactions: number;
    paymentsPerSettlement: number;
    target: string;
    pass: boolean;
  };
  /**
   * Chain mining every blockSeconds: a paid relayed operation's p50 (prepare → paid send answered confirmed) in blocks;
   * then faucet claims paid on it (`crossChain`, the faucet's chain still instant), their payments in batches.
   */
  blocks: {
    blockSeconds: number;
    relayed: Throughput;
    p50Blocks: number;
    p95Blocks: number;
    txPerOperation: number;
    target: string;
    pass: boolean;
    crossChain: PaidRelayResult["crossChain"];
  };
  pass: boolean;
}

const PAID_RATIO_TARGET = 0.9;
const PAID_P50_BLOCKS_TARGET = 1.5;

/**
 * Paid relayed operations against what the chain does: on an instant chain, `clients` paying clients for `seconds`
 * (service-relayed agentCreateToken, x402 on the same chain), then the same number of signers sending the same call
 * straight to the chain (the raw ceiling); then, on the same chain mining every `blockSeconds`, `blockClients` paying
 * clients and each operation's latency in blocks. One service process (embedded database).
 */
export async function measurePaidRelay(
  hre: HardhatRuntimeEnvironment,
  opts: PaidRelayOptions = {},
): Promise<PaidRelayResult> {
  const clients = opts.clients ?? 20;
  const seconds = opts.seconds ?? 20;
  const blockClients = opts.blockClients ?? 9;
  const blockRunSeconds = opts.blockRunSeconds ?? 40;
  const blockSeconds = opts.blockSeconds ?? 2;
  const log = opts.log ?? ((line: string) => console.log(line));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-paid-"));
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments") });
  try {
    const chain = sandbox.baseSepolia;
    const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const payers = Array.from(
      { length: Math.max(clients, blockClients) },
      () => new Wallet(Wallet.createRandom().privateKey, provider),
    );
    const signers = Array.from({ length: clients }, () => new Wallet(Wallet.createRandom().privateKey, provider));
    await fund(sandbox, provider, payers, signers);
    await fundRelayerKeys(sandbox);
    const service = await startServiceProcess(serviceEnv(sandbox, path.join(dir, "one"), "embedded"));
    try {
      await sleep(2_000);
      const txCounts = async () => ({
        relayer: (
          await Promise.all(relayerAddresses(sandbox).map((a) => provider.getTransactionCount(a, "latest")))
        ).reduce((sum, n) => sum + n, 0),
        settlement: await provider.getTransactionCount(sandbox.accounts[SETTLEMENT_INDEX].address, "latest"),
      });
      const perOperation = (
        before: { relayer: number; settlement: number },
        after: { relayer: number; settlement: number },
        ops: number,
      ) =>
        ops
          ? Math.round(((after.relayer - before.relayer + after.settlement - before.settlement) / ops) * 100) / 100
          : NaN;

      // Instant chain: paid relayed, then raw.
      let before = await txCounts();
      const relayed = await relayedRun(
        sandbox,
        provider,
        [service],
        payers.slice(0, clients),
        seconds,
        "embedded",
        `paid relayed, instant chain, ${clients} clients`,
        log,
      );
      const instantPerOp = perOperation(before, await txCounts(), relayed.confirmed);
      const factoryAddress = sandbox.deployments[chain.chainId].contracts.AgentTokenFactory;
      const managed = signers.map((w) => new NonceManager(w));
      const agentWallet = sandbox.accounts[6].address;
      const raw = await drive(
        `raw, instant chain: ${clients} signers send the same call straight to the chain`,
        [service],
        clients,
        seconds,
        log,
        async (client) => {
          const factory = AgentTokenFactory__factory.connect(factoryAddress, managed[client]);
          const tx = await factory.createAgentToken("Volume agent token", nextSymbol("R"), 18, agentWallet, 0n);
          const receipt = await tx.wait();
          if (receipt?.status !== 1) throw new Error("raw transaction reverted");
          return {};
        },
      );
      const ratio = Math.round((relayed.txPerSec / raw.txPerSec) * 100) / 100;
      const instant = {
        relayed: stripRelayed(relayed),
        raw,
        ratio,
        txPerOperation: instantPerOp,
        target: `paid relayed operations/s ≥ ${PAID_RATIO_TARGET}× raw transactions/s`,
        pass: ratio >= PAID_RATIO_TARGET && relayed.failed === 0,
      };
      log(
        `instant chain: ${relayed.txPerSec} paid relayed ops/s vs raw ${raw.txPerSec} tx/s = ${ratio}× (${instantPerOp} chain transactions per operation) ${instant.pass ? "PASS" : "FAIL"}`,
      );

      const crossChain = await crossChainRun(sandbox, service, payers.slice(0, clients), seconds, log);

      // The same chain mining every blockSeconds.
      await chain.setBlockTime(blockSeconds);
      await sleep(blockSeconds * 1000);
      before = await txCounts();
      const onBlocks = await relayedRun(
        sandbox,
        provider,
        [service],
        payers.slice(0, blockClients),
        blockRunSeconds,
        "embedded",
        `paid relayed, ${blockSeconds} s blocks, ${blockClients} clients`,
        log,
      );
      const blocksPerOp = perOperation(before, await txCounts(), onBlocks.confirmed);
      const crossChainOnBlocks = await crossChainRun(
        sandbox,
        service,
        payers.slice(0, blockClients),
        Math.ceil(blockRunSeconds / 2),
        log,
        `${blockSeconds} s blocks`,
      );
      await chain.setBlockTime(0);
      const inBlocks = (ms: number) => Math.round((ms / (blockSeconds * 1000)) * 100) / 100;
      const blocks = {
        blockSeconds,
        relayed: stripRelayed(onBlocks),
        p50Blocks: inBlocks(onBlocks.p50Ms),
        p95Blocks: inBlocks(onBlocks.p95Ms),
        txPerOperation: blocksPerOp,
        target: `a paid relayed operation's p50 ≤ ${PAID_P50_BLOCKS_TARGET} blocks`,
        pass: inBlocks(onBlocks.p50Ms) <= PAID_P50_BLOCKS_TARGET && onBlocks.failed === 0 && crossChainOnBlocks.pass,
        crossChain: crossChainOnBlocks,
      };
      log(
        `${blockSeconds} s blocks: p50 ${onBlocks.p50Ms} ms = ${blocks.p50Blocks} blocks, p95 ${blocks.p95Blocks} blocks, ${onBlocks.txPerSec} ops/s (${blocksPerOp} chain transactions per operation) ${blocks.pass ? "PASS" : "FAIL"}`,
      );
      provider.destroy();
      return {
        measuredAt: new Date().toISOString(),
        cpus: os.cpus().length,
        instant,
        crossChain,
        blocks,
        pass: instant.pass && crossChain.pass && blocks.pass,
      };
    } finally {
      await service.stop();
    }
  } finally {
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `payers` claim from the faucet (minted on Sepolia by the relayer) paying on Base Sepolia for `seconds`: each payment
 * is settled after its claim is confirmed, in a settlement batch. Counts the distinct settlement transactions the
 * answers' PAYMENT-RESPONSE name against the payments they settled.
 */
async function crossChainRun(
  sandbox: Sandbox,
  service: ServiceProcess,
  payers: Wallet[],
  seconds: number,
  log: (line: string) => void,
  paymentChain = "instant",
): Promise<PaidRelayResult["crossChain"]> {
  const claim = (headers: Record<string, string>) =>
    fetch(`${service.url}/faucet/bkn`, {
      method: "POST",
      headers: { "content-type": "application/json", "Idempotency-Key": randomUUID(), ...distinctClient(), ...headers },
      body: JSON.stringify({ recipientAddress: Wallet.createRandom().address }),
    });
  const quoted = await claim({});
  const quote = JSON.parse(Buffer.from(quoted.headers.get("payment-required")!, "base64").toString()).accepts[0];
  const settlementOf = new Map<string, number>();
  const label = `paid on another chain (faucet claims on ${sandbox.sepolia.chainId}, paid on ${sandbox.baseSepolia.chainId}, ${paymentChain}), ${payers.length} clients`;
  const relayed = await drive(label, [service], payers.length, seconds, log, async (client) => {
    const res = await claim({ "X-PAYMENT": await payWithEthers(payers[client], quote) });
    const body = (await res.json()) as any;
    const header = res.headers.get("payment-response");
    if (res.status !== 200 || body.status !== "confirmed" || !header)
      throw new Error(`claim answered ${res.status} ${body.status ?? ""} ${body.error?.message ?? ""}`.slice(0, 200));
    const transaction = JSON.parse(Buffer.from(header, "base64").toString()).transaction as string;
    settlementOf.set(transaction, (settlementOf.get(transaction) ?? 0) + 1);
    return {};
  });
  const payments = [...settlementOf.values()].reduce((sum, n) => sum + n, 0);
  const paymentsPerSettlement = settlementOf.size ? Math.round((payments / settlementOf.size) * 100) / 100 : 0;
  const result = {
    relayed,
    payments,
    settlementTransactions: settlementOf.size,
    paymentsPerSettlement,
    target: "payments settled in batches: fewer settlement transactions than payments",
    pass: relayed.failed === 0 && payments > 0 && settlementOf.size < payments,
  };
  log(
    `${label}: ${relayed.txPerSec} ops/s, p50 ${relayed.p50Ms} ms; ${payments} payments in ${settlementOf.size} settlement transactions = ${paymentsPerSettlement} per transaction ${result.pass ? "PASS" : "FAIL"}`,
  );
  return result;
}

/** A relayed run's throughput figures, without the ≥ 100 tx/s target of the volume runs. */
function stripRelayed(run: RelayedRun): Throughput {
  const {
    instances: _i,
    database: _d,
    relayer: _r,
    settlements: _s,
    nonceTooHighRetries: _n,
    target: _t,
    pass: _p,
    ...throughput
  } = run;
  return throughput;
}

/** USDC for each payer and ETH for each signer, from the deployer (account #0). */
export async function fund(
  sandbox: Sandbox,
  provider: JsonRpcProvider,
  payers: Wallet[],
  signers: Wallet[],
): Promise<void> {
  const deployer = new NonceManager(sandbox.accounts[0].connect(provider));
  const usdc = USDC__factory.connect(sandbox.deployments[sandbox.baseSepolia.chainId].contracts.USDC, deployer);
  const sent: TransactionResponse[] = [];
  for (const p of payers) sent.push(await usdc.transfer(p.address, USDC_PER_PAYER));
  for (const s of signers) sent.push(await deployer.sendTransaction({ to: s.address, value: parseEther("10") }));
  await Promise.all(sent.map((t) => t.wait()));
}

let clientIp = 1;
/** A distinct client address per prepare (the service trusts its loopback proxy): the per-IP prepare limit stays out of it. */
export const distinctClient = () => ({
  "x-forwarded-for": `10.${(clientIp >> 16) & 255}.${(clientIp >> 8) & 255}.${clientIp++ & 255}`,
});

let symbolCounter = 0;
export const nextSymbol = (prefix: string) =>
  `${prefix}${(symbolCounter++).toString(36).toUpperCase().padStart(5, "0")}${randomBytes(1).toString("hex").toUpperCase()}`;

export async function relayedRun(
  sandbox: Sandbox,
  provider: JsonRpcProvider,
  instances: ServiceProcess[],
  payers: Wallet[],
  seconds: number,
  database: "embedded" | "postgres",
  label: string,
  log: (line: string) => void,
): Promise<RelayedRun> {
  const relayers = relayerAddresses(sandbox);
  const agentWallet = sandbox.accounts[6].address;
  const retriesBefore = await sumRetries(instances);
  const noncesOnChain = () => Promise.all(relayers.map((r) => provider.getTransactionCount(r, "latest")));
  const nonceBefore = await noncesOnChain();
  const hashes: string[] = [];
  let settlements = 0;
  const run = await drive(label, instances, payers.length, seconds, log, async (client, instance) => {
    const payer = payers[client];
    const t0 = performance.now();
    const prepared = await postJson(
      `${instance.url}/x402/token/create`,
      { chainId: "84532", name: "Volume agent token", symbol: nextSymbol("V"), agentWallet },
      distinctClient(),
    );
    const t1 = performance.now();
    const payment = await payWithEthers(payer, prepared.x402Requirements);
    const res = await fetch(`${instance.url}/send-transactions`, {
      method: "POST",
      headers: { "content-type": "application/json", "X-PAYMENT": payment },
      body: JSON.stringify({ txId: prepared.txId }),
    });
    const body = (await res.json()) as any;
    if (res.status !== 200 || body.status !== "success")
      throw new Error(
        `send answered ${res.status} ${body.status ?? ""} ${body.error?.message ?? body.error ?? ""}`.slice(0, 200),
      );
    if (res.headers.get("payment-response")) settlements++;
    hashes.push(...body.txHashes);
    return { prepareMs: t1 - t0, sendMs: performance.now() - t1 };
  });
  const nonceAfter = await noncesOnChain();
  // Each relayer key's nonces: every one the key used during the run is one of the run's operations, once.
  const nonces = relayers.map((): number[] => []);
  for (let i = 0; i < hashes.length; i += 50) {
    const txs = await Promise.all(hashes.slice(i, i + 50).map((h) => provider.getTransaction(h)));
    for (const tx of txs) {
      const key = tx ? relayers.findIndex((r) => r.toLowerCase() === tx.from.toLowerCase()) : -1;
      if (key >= 0) nonces[key].push(tx!.nonce);
    }
  }
  const spans = relayers.map((_, k) => nonceAfter[k] - nonceBefore[k]);
  const span = spans.reduce((sum, n) => sum + n, 0);
  const relayedTransactions = nonces.reduce((sum, n) => sum + n.length, 0);
  const distinctCount = nonces.reduce((sum, n) => sum + new Set(n).size, 0);
  const contiguous = relayers.every(
    (_, k) => new Set(nonces[k]).size === spans[k] && nonces[k].every((n) => n >= nonceBefore[k] && n < nonceAfter[k]),
  );
  const retries = (await sumRetries(instances)) - retriesBefore;
  const result: RelayedRun = {
    ...run,
    instances: instances.length,
    database,
    relayer: {
      keys: relayers.length,
      nonceSpan: span,
      relayedTransactions,
      contiguous,
      duplicates: relayedTransactions - distinctCount,
    },
    settlements,
    nonceTooHighRetries: retries,
    target: `≥ ${TARGET_TX_PER_SEC} confirmed tx/s for ${seconds} s, relayer nonces contiguous`,
    pass: run.txPerSec >= TARGET_TX_PER_SEC && contiguous,
  };
  log(
    `${label}: ${result.txPerSec} tx/s (${result.confirmed} confirmed, ${result.failed} failed), p50 ${result.p50Ms} ms, p95 ${result.p95Ms} ms; ` +
      `relayer nonce span ${span} over ${relayers.length} key(s) = ${relayedTransactions} relayed txs: ${contiguous ? "contiguous" : "NOT contiguous"}; "nonce too high" re-sends ${retries}; ` +
      `CPU services ${run.cpu.services.join("/")}, bench process (chains + clients) ${run.cpu.benchProcess}`,
  );
  return result;
}

async function clientSignedRuns(
  service: ServiceProcess,
  provider: JsonRpcProvider,
  signers: Wallet[],
  seconds: number,
  log: (line: string) => void,
) {
  const agentWallet = Wallet.createRandom().address;
  const keys: string[] = [];
  for (let i = 0; i < signers.length; i++) {
    const created = await service.admin({
      command: "keys.create",
      email: `volume${i}@example.com`,
      plan: "Enterprise",
    });
    keys.push(created.apiKey);
    await service.admin({ command: "signers.add", address: signers[i].address, keyId: created.id });
  }
  const viaService = await drive(
    "client-signed through the service",
    [service],
    signers.length,
    seconds,
    log,
    async (client) => {
      const signer = signers[client];
      const t0 = performance.now();
      const prepared = await postJson(
        `${service.url}/prepare-transactions`,
        {
          method: "agentCreateToken",
          chainId: "84532",
          signerAddress: signer.address,
          name: "Volume agent token",
          symbol: nextSymbol("C"),
          agentWallet,
        },
        { "x-api-key": keys[client] },
      );
      const t1 = performance.now();
      const signed = await Promise.all(prepared.transactions.map((t: object) => signer.signTransaction(t)));
      const sent = await postJson(
        `${service.url}/send-transactions`,
        { txId: prepared.txId, signedTransactions: signed },
        { "x-api-key": keys[client] },
      );
      if (sent.status !== "success") throw new Error(`send ended ${sent.status}`);
      return { prepareMs: t1 - t0, sendMs: performance.now() - t1 };
    },
  );
  const factoryAddress = ((await fetch(`${service.url}/get-network-info?chainId=84532`).then((r) => r.json())) as any)
    .agentTokenFactoryAddress;
  const managed = signers.map((s) => new NonceManager(s));
  const raw = await drive(
    "raw: the same signers straight to the chain",
    [service],
    signers.length,
    seconds,
    log,
    async (client) => {
      const factory = AgentTokenFactory__factory.connect(factoryAddress, managed[client]);
      const tx = await factory.createAgentToken("Volume agent token", nextSymbol("R"), 18, agentWallet, 0n);
      const receipt = await tx.wait();
      if (receipt?.status !== 1) throw new Error("raw transaction reverted");
      return {};
    },
  );
  const ratio = Math.round((viaService.txPerSec / raw.txPerSec) * 100) / 100;
  log(`client-signed ${viaService.txPerSec} tx/s vs raw ${raw.txPerSec} tx/s: ${ratio}×`);
  return { service: viaService, raw, ratio };
}

/** Runs `op` in a loop on each of `clients` clients for `seconds` (client i on instance i mod n), and sums it up. */
export async function drive(
  label: string,
  instances: ServiceProcess[],
  clients: number,
  seconds: number,
  log: (line: string) => void,
  op: (client: number, instance: ServiceProcess) => Promise<{ prepareMs?: number; sendMs?: number }>,
): Promise<Throughput> {
  log(`${label}: ${clients} clients for ${seconds} s…`);
  const latencies: number[] = [];
  const prepares: number[] = [];
  const sends: number[] = [];
  const errors = new Map<string, number>();
  let failed = 0;
  const cpuBefore = instances.map((s) => cpuSeconds(s.child.pid!));
  const benchBefore = process.cpuUsage();
  const started = performance.now();
  const end = Date.now() + seconds * 1000;
  const progress = setInterval(
    () =>
      log(
        `  ${label}: ${latencies.length} confirmed, ${failed} failed after ${Math.round((performance.now() - started) / 1000)} s`,
      ),
    10_000,
  );
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (Date.now() < end) {
        const t0 = performance.now();
        try {
          const parts = await op(client, instances[client % instances.length]);
          latencies.push(performance.now() - t0);
          if (parts.prepareMs !== undefined) prepares.push(parts.prepareMs);
          if (parts.sendMs !== undefined) sends.push(parts.sendMs);
        } catch (error) {
          failed++;
          const message = (error as Error).message.slice(0, 160);
          errors.set(message, (errors.get(message) ?? 0) + 1);
          await sleep(100);
        }
      }
    }),
  );
  clearInterval(progress);
  const elapsed = (performance.now() - started) / 1000;
  const bench = process.cpuUsage(benchBefore);
  const share = (cpu: number) => Math.round((cpu / elapsed) * 100) / 100;
  return {
    run: label,
    clients,
    seconds: Math.round(elapsed * 10) / 10,
    confirmed: latencies.length,
    failed,
    txPerSec: Math.round((latencies.length / elapsed) * 10) / 10,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    ...(prepares.length ? { prepareP50Ms: percentile(prepares, 0.5) } : {}),
    ...(sends.length ? { sendP50Ms: percentile(sends, 0.5) } : {}),
    cpu: {
      services: instances.map((s, i) => share(cpuSeconds(s.child.pid!) - cpuBefore[i])),
      benchProcess: share((bench.user + bench.system) / 1e6),
    },
    errors: [...errors].map(([message, n]) => `${n}× ${message}`),
  };
}

/** What the CPU figures say bounds a run (2 cores: a process near 1.0 holds one of them). */
export function boundOf(run: Throughput): string {
  const busiest = Math.max(...run.cpu.services);
  const saturated = [
    ...(busiest >= 0.85 ? [`a service process (${busiest} of a core)`] : []),
    ...(run.cpu.benchProcess >= 0.85 ? [`the chains + clients process (${run.cpu.benchProcess} of a core)`] : []),
  ];
  const total = run.cpu.services.reduce((a, b) => a + b, 0) + run.cpu.benchProcess;
  if (saturated.length)
    return `CPU-bound: ${saturated.join(" and ")}; all processes together ${Math.round(total * 100) / 100} of 2 cores`;
  return `no process saturated (${run.cpu.services.join("/")} service, ${run.cpu.benchProcess} chains + clients): waits (round trips, locks, polls) bound it`;
}

/** RSS and heap in use after a forced full collection (the service was started with collectableGarbage). */
async function memorySample(instance: ServiceProcess): Promise<MemorySample> {
  await instance.collectGarbage();
  const text = await fetch(`${instance.url}/metrics`).then((r) => r.text());
  const heapUsedMiB =
    Math.round((Number(/^tak_nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? NaN) / 1048576) * 10) / 10;
  return { rssMiB: instance.rssMiB(), heapUsedMiB };
}

async function sumRetries(instances: ServiceProcess[]): Promise<number> {
  let sum = 0;
  for (const s of instances) {
    const text = await fetch(`${s.url}/metrics`).then((r) => r.text());
    sum += Number(/^tak_broadcast_nonce_ahead_retries (\d+)/m.exec(text)?.[1] ?? 0);
  }
  return sum;
}

function percentile(samples: number[], q: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
