import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { JsonRpcProvider, Transaction, Wallet, ZeroHash, type TransactionRequest } from "ethers";
import { createSandboxProcess } from "../scripts/lib/chains-process";
import { loadConfig } from "../service/config";
import { securityTokenInterface } from "../service/chains/contracts";
import { startService } from "../service/server";
import { postJsonRaw } from "./http-client";

export interface LatencyOptions {
  /** Seconds between blocks of the local chains; 0 (default) mines each transaction at once. */
  blockTime?: number;
  /** Samples per operation, service and raw each (default 50). */
  rounds?: number;
}

export interface LatencyRow {
  operation: string;
  serviceP50Ms: number;
  serviceP95Ms: number;
  rawP50Ms: number;
  /** serviceP50Ms / rawP50Ms */
  ratio: number;
  target: string;
  pass: boolean;
  /**
   * Context, not a target: p50 of a request the service refuses after checking its key (HTTP, routing, one store
   * read, no chain work), measured in the same run: the part of serviceP50Ms no RPC batching can remove.
   */
  requestFloorP50Ms: number;
  /** JSON-RPC calls and HTTP round trips to the chain per operation (mean over the measured rounds), service and raw. */
  rpc: { serviceCalls: number; serviceRoundTrips: number; rawCalls: number; rawRoundTrips: number };
}

/** What a side has sent to the chain so far: JSON-RPC calls, and the HTTP round trips they travelled in. */
export interface RpcCounts {
  snapshot(): Promise<{ calls: number; roundTrips: number }>;
}

/** Counts the JSON-RPC calls an ethers provider sends (`send`) and the HTTP requests they travel in (`_send`). */
class RpcCounter implements RpcCounts {
  calls = 0;
  roundTrips = 0;
  constructor(provider: {
    send: (method: string, params: any) => Promise<any>;
    _send: (payload: any) => Promise<any>;
  }) {
    const send = provider.send.bind(provider);
    const post = provider._send.bind(provider);
    provider.send = (method: string, params: any) => {
      this.calls++;
      return send(method, params);
    };
    provider._send = (payload: any) => {
      this.roundTrips++;
      return post(payload);
    };
  }
  async snapshot() {
    return { calls: this.calls, roundTrips: this.roundTrips };
  }
}

/**
 * The service the latency is measured on and what the bench needs of it: its URL, the Sepolia chain it sends to, an
 * issuer account whitelisted for every key, a new Enterprise key per phase (the per-key prepare limit stays out of the
 * measurement), a token's address by symbol, and what the service sent to the chain.
 */
export interface LatencyTarget {
  url: string;
  chainUrl: string;
  blockTime: number;
  issuer: Wallet;
  newKey(email: string): Promise<string>;
  tokenAddress(symbol: string, key: string): Promise<string>;
  serviceRpc: RpcCounts;
}

const SEPOLIA = 11155111;

/** Service p50 over raw p50: prepare on both chains, send until confirmed on the chain mining at once. */
export const LATENCY_RATIO = 1.5;

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Rounds of each phase run before the measured ones, on both sides. */
const WARMUP_ROUNDS = 10;

const round1 = (v: number) => Math.round(v * 10) / 10;

/** A row: the service's figures beside the raw JSON-RPC work the same operation needs, measured in the same run. */
function row(
  operation: string,
  service: number[],
  raw: number[],
  floor: number[],
  target: { text: string; ok: (serviceP50: number, rawP50: number) => boolean },
  rpc: LatencyRow["rpc"],
): LatencyRow {
  const serviceP50 = percentile(service, 0.5);
  const rawP50 = percentile(raw, 0.5);
  return {
    rpc,
    operation,
    serviceP50Ms: round1(serviceP50),
    serviceP95Ms: round1(percentile(service, 0.95)),
    rawP50Ms: round1(rawP50),
    ratio: Math.round((serviceP50 / rawP50) * 100) / 100,
    target: target.text,
    pass: target.ok(serviceP50, rawP50),
    requestFloorP50Ms: round1(percentile(floor, 0.5)),
  };
}

/**
 * Latency of the write flow against the real service (embedded database on disk) and the local chains in a process of
 * their own (reached over HTTP JSON-RPC, as a deployment reaches its nodes), each
 * beside its raw baseline: the JSON-RPC calls the operation cannot avoid, made directly with a plain ethers provider
 * against the same chain, interleaved round by round with the service's samples so both see the same machine load.
 * Both sides use Node's http client over kept-alive connections (ethers' own, for the raw side). Each phase starts with
 * WARMUP_ROUNDS rounds on both sides that are not counted (the first run of each statement prepares it; code compiles).
 *
 * Both sides estimate and send the same transaction: the one the service plans for the body (whitelistInvestors of
 * one wallet; checked against the service's first prepare).
 *
 * - prepare (whitelist, 1 tx): POST /prepare-transactions vs. pending nonce + fee data + estimateGas + one eth_call,
 *   made together (one JSON-RPC batch, as the service makes them). Target: service p50 ≤ LATENCY_RATIO (1.5) × raw p50.
 * - send until confirmed (1 tx): POST /send-transactions vs. eth_sendRawTransaction then eth_getTransactionReceipt in a
 *   tight loop until the receipt is there. Target: ≤ 1.5 × raw on a chain mining at once; ≤ raw + one block interval on
 *   an interval-mining chain (the service may see the block up to one poll later than a loop that never rests).
 */
export async function measureLatency(hre: HardhatRuntimeEnvironment, opts: LatencyOptions = {}): Promise<LatencyRow[]> {
  const blockTime = opts.blockTime ?? 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-bench-"));
  // The chains in a process of their own, reached over HTTP as a deployment reaches its nodes.
  const sandbox = await createSandboxProcess(hre, { deploymentsDir: path.join(dir, "deployments"), blockTime });
  const config = loadConfig(
    {
      ENVIRONMENT: "sandbox",
      PORT: "0",
      DATA_DIR: dir,
      DEPLOYMENTS_DIR: sandbox.deploymentsDir,
      LOG_LEVEL: "silent",
      RPC_URL_11155111: sandbox.sepolia.url,
      RPC_URL_84532: sandbox.baseSepolia.url,
      X402_ENABLED: "false",
      // The raw side waits for the receipt (one confirmation); the service waits for the same (Sepolia's default is 3,
      // which on a chain mining at once would wait for blocks nobody mines).
      CONFIRMATIONS: "1",
    },
    { profile: "local" },
  );
  const service = await startService(config);
  try {
    const issuer = sandbox.accounts[1];
    await service.services.signers.add(issuer.address, "all-keys");
    return await measureLatencyOn(
      {
        url: service.url,
        chainUrl: sandbox.sepolia.url,
        blockTime,
        issuer,
        newKey: async (email) => (await service.services.apiKeys.create({ email, plan: "Enterprise" })).key,
        tokenAddress: async (symbol) => (await service.services.tokens.bySymbol(symbol))!.tokenAddress,
        serviceRpc: new RpcCounter(service.services.chains.find(SEPOLIA)!.provider),
      },
      opts.rounds ?? 50,
    );
  } finally {
    await service.stop();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The phases of measureLatency, on a service already running (in this process, or `npm start`'s). */
export async function measureLatencyOn(setup: LatencyTarget, rounds: number): Promise<LatencyRow[]> {
  const { blockTime } = setup;
  // The raw side: a plain provider set up like the service's (calls made together travel as one batch), no cache.
  const raw = new JsonRpcProvider(setup.chainUrl, SEPOLIA, {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 20,
    batchStallTime: 1,
  });
  // On an interval-mining chain a send's wait depends on where in the interval it starts: start each sample at a
  // random point, so neither side is phase-locked to the blocks the other one just waited for.
  const randomPhase = () =>
    blockTime ? new Promise((resolve) => setTimeout(resolve, Math.random() * blockTime * 1000)) : Promise.resolve();
  const issuer = setup.issuer.connect(raw);
  const rawCounter = new RpcCounter(raw);
  /** What each side sends to the chain during the measured part of an operation, summed over the measured rounds. */
  const tally = () => {
    const sum = { serviceCalls: 0, serviceRoundTrips: 0, rawCalls: 0, rawRoundTrips: 0 };
    const during = async <T>(
      counter: RpcCounts,
      side: "service" | "raw",
      counted: boolean,
      work: () => Promise<T>,
    ): Promise<T> => {
      const before = counted ? await counter.snapshot() : undefined;
      const result = await work();
      if (before) {
        const after = await counter.snapshot();
        sum[`${side}Calls`] += after.calls - before.calls;
        sum[`${side}RoundTrips`] += after.roundTrips - before.roundTrips;
      }
      return result;
    };
    return {
      raw: <T>(counted: boolean, work: () => Promise<T>) => during(rawCounter, "raw", counted, work),
      service: <T>(counted: boolean, work: () => Promise<T>) => during(setup.serviceRpc, "service", counted, work),
      perOperation: (n: number): LatencyRow["rpc"] => {
        const mean = (v: number) => Math.round((v / n) * 10) / 10;
        return {
          serviceCalls: mean(sum.serviceCalls),
          serviceRoundTrips: mean(sum.serviceRoundTrips),
          rawCalls: mean(sum.rawCalls),
          rawRoundTrips: mean(sum.rawRoundTrips),
        };
      },
    };
  };
  try {
    const call = async (key: string, pathname: string, body: unknown, expected = 200) => {
      const started = performance.now();
      const { status, json } = await postJsonRaw(setup.url + pathname, body, { "x-api-key": key });
      const ms = performance.now() - started;
      if (status !== expected) throw new Error(`${pathname} answered ${status}: ${JSON.stringify(json)}`);
      return { ms, json };
    };
    const floor: number[] = [];
    // Each phase under its own key, so the per-key prepare rate limit stays out of the measurement.
    const tokenFor = async (symbol: string) => {
      const email = `${symbol.toLowerCase()}@bench.example.com`;
      const key = await setup.newKey(email);
      const prepared = await call(key, "/prepare-transactions", {
        method: "newTokenization",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenizerEmail: email,
        name: symbol,
        tokenSymbol: symbol,
      });
      const signed = await Promise.all(prepared.json.transactions.map((t: object) => issuer.signTransaction(t)));
      const sent = await call(key, "/send-transactions", { txId: prepared.json.txId, signedTransactions: signed });
      if (sent.json.status !== "success") throw new Error(`token ${symbol} not created: ${JSON.stringify(sent.json)}`);
      return { key, address: await setup.tokenAddress(symbol, key) };
    };
    const whitelistBody = (symbol: string, address: string) => ({
      method: "whitelist",
      chainId: "aa36a7",
      signerAddress: issuer.address,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: address, whitelistStatus: true }],
    });
    // The call the service plans for this body (one wallet, no e-mail: bound to no investor), so both sides estimate
    // and send the same transaction.
    const whitelistData = (address: string) =>
      securityTokenInterface.encodeFunctionData("whitelistInvestors", [[address], [ZeroHash]]);

    // prepare
    const a = await tokenFor("BNCHA");
    const servicePrepare: number[] = [];
    const rawPrepare: number[] = [];
    const investor = Wallet.createRandom().address;
    // Warm-up rounds first (not counted, either side): each statement's first run prepares it, code is compiled.
    const measured = (i: number) => i >= WARMUP_ROUNDS;
    const prepareRpc = tally();
    for (let i = 0; i < WARMUP_ROUNDS + rounds; i++) {
      const started = performance.now();
      await prepareRpc.raw(measured(i), () =>
        Promise.all([
          raw.getTransactionCount(issuer.address, "pending"),
          raw.getFeeData(),
          raw.estimateGas({ from: issuer.address, to: a.address, data: whitelistData(investor) }),
          raw.call({ to: a.address, data: securityTokenInterface.encodeFunctionData("isWhitelisted", [investor]) }),
        ]),
      );
      const rawMs = performance.now() - started;
      const servicePrepared = await prepareRpc.service(measured(i), () =>
        call(a.key, "/prepare-transactions", whitelistBody("BNCHA", investor)),
      );
      const serviceMs = servicePrepared.ms;
      if (i === 0 && servicePrepared.json.transactions?.[0]?.data !== whitelistData(investor))
        throw new Error(
          `the service planned another call than the raw side's: ${JSON.stringify(servicePrepared.json)}`,
        );
      const floorMs = (await call(a.key, "/prepare-transactions", { chainId: "aa36a7" }, 400)).ms; // "method is required"
      if (!measured(i)) continue;
      rawPrepare.push(rawMs);
      servicePrepare.push(serviceMs);
      floor.push(floorMs);
    }

    // send until confirmed
    const b = await tokenFor("BNCHB");
    const serviceSend: number[] = [];
    const rawSend: number[] = [];
    const sendRpc = tally();
    for (let i = 0; i < WARMUP_ROUNDS + rounds; i++) {
      const [nonce, fees] = await Promise.all([raw.getTransactionCount(issuer.address, "pending"), raw.getFeeData()]);
      const request: TransactionRequest = {
        to: b.address,
        data: whitelistData(Wallet.createRandom().address),
        nonce,
        chainId: SEPOLIA,
        type: 2,
        gasLimit: 200_000n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      };
      const signedRaw = await issuer.signTransaction(request);
      const hash = Transaction.from(signedRaw).hash!;
      await randomPhase();
      // eth_sendRawTransaction itself, not ethers' broadcastTransaction (which also recovers the sender in JavaScript).
      const started = performance.now();
      await sendRpc.raw(measured(i), async () => {
        await raw.send("eth_sendRawTransaction", [signedRaw]);
        while (!(await raw.getTransactionReceipt(hash)));
      });
      const rawMs = performance.now() - started;

      const prepared = await call(
        b.key,
        "/prepare-transactions",
        whitelistBody("BNCHB", Wallet.createRandom().address),
      );
      const signed = [await issuer.signTransaction(prepared.json.transactions[0])];
      await randomPhase();
      const result = await sendRpc.service(measured(i), () =>
        call(b.key, "/send-transactions", { txId: prepared.json.txId, signedTransactions: signed }),
      );
      if (result.json.status !== "success") throw new Error(`send did not confirm: ${JSON.stringify(result.json)}`);
      if (!measured(i)) continue;
      rawSend.push(rawMs);
      serviceSend.push(result.ms);
    }

    const chain = blockTime ? `chain mining every ${blockTime} s` : "chain mining at once";
    const target = {
      text: `service p50 ≤ ${LATENCY_RATIO} × raw p50`,
      ok: (s: number, r: number) => s <= LATENCY_RATIO * r,
    };
    const withinBlock = {
      text: `service p50 ≤ raw p50 + ${blockTime * 1000} ms (one block)`,
      ok: (s: number, r: number) => s <= r + blockTime * 1000,
    };
    return [
      row(
        `prepare (whitelist, 1 tx), ${chain}`,
        servicePrepare,
        rawPrepare,
        floor,
        target,
        prepareRpc.perOperation(rounds),
      ),
      row(
        `send until confirmed (1 tx), ${chain}`,
        serviceSend,
        rawSend,
        floor,
        blockTime ? withinBlock : target,
        sendRpc.perOperation(rounds),
      ),
    ];
  } finally {
    raw.destroy();
  }
}
