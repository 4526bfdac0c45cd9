import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { Wallet } from "ethers";
import { createSandbox } from "../scripts/lib/sandbox";
import { loadConfig } from "../service/config";
import { startService } from "../service/server";

export interface LatencyRow {
  operation: string;
  calls: number;
  p50Ms: number;
  p95Ms: number;
  meanMs: number;
}

const CALLS = 100;

function summarize(operation: string, samples: number[]): LatencyRow {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (v: number) => Math.round(v * 10) / 10;
  return { operation, calls: samples.length, p50Ms: round(at(0.5)), p95Ms: round(at(0.95)), meanMs: round(samples.reduce((s, v) => s + v, 0) / samples.length) };
}

/**
 * HTTP latency of the write flow, measured end to end against the real service (embedded database on disk) and an
 * in-process chain that mines instantly: POST /prepare-transactions (a one-transaction whitelist batch: schema, key,
 * signer, token scope, chain reads, gas estimate, persist) and POST /send-transactions (verify the signed transaction,
 * spend the credit, broadcast, wait for the receipt, record the events).
 */
export async function measureLatency(hre: HardhatRuntimeEnvironment): Promise<LatencyRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-bench-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const config = loadConfig({
    ENVIRONMENT: "sandbox",
    PORT: "0",
    DATA_DIR: dir,
    DEPLOYMENTS_DIR: sandbox.deploymentsDir,
    LOG_LEVEL: "silent",
    RPC_URL_11155111: sandbox.sepolia.url,
    RPC_URL_84532: sandbox.baseSepolia.url,
    X402_ENABLED: "false",
  });
  const service = await startService(config);
  const issuer = sandbox.accounts[1];
  await service.services.signers.add(issuer.address);
  const call = async (key: string, pathname: string, body: unknown) => {
    const started = performance.now();
    const res = await fetch(service.url + pathname, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify(body) });
    const json = (await res.json()) as any;
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${pathname} answered ${res.status}: ${JSON.stringify(json)}`);
    return { ms, json };
  };
  // Each phase under its own key, so the per-key prepare rate limit (burst 120) stays out of the measurement.
  const tokenFor = async (symbol: string) => {
    const { key } = await service.services.apiKeys.create({ email: "bench@example.com", plan: "Enterprise" });
    const prepared = await call(key, "/prepare-transactions", { method: "newTokenization", chainId: "aa36a7", signerAddress: issuer.address, tokenizerEmail: "bench@example.com", name: symbol, tokenSymbol: symbol });
    const signed = await Promise.all(prepared.json.transactions.map((t: object) => issuer.signTransaction(t)));
    await call(key, "/send-transactions", { txId: prepared.json.txId, signedTransactions: signed });
    return key;
  };
  const whitelistBody = (symbol: string, address: string) => ({
    method: "whitelist",
    chainId: "aa36a7",
    signerAddress: issuer.address,
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: address, whitelistStatus: true }],
  });

  const prepareKey = await tokenFor("BNCHA");
  const prepareSamples: number[] = [];
  const target = Wallet.createRandom().address;
  for (let i = 0; i < CALLS; i++) prepareSamples.push((await call(prepareKey, "/prepare-transactions", whitelistBody("BNCHA", target))).ms);

  const sendKey = await tokenFor("BNCHB");
  const sendSamples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const prepared = await call(sendKey, "/prepare-transactions", whitelistBody("BNCHB", Wallet.createRandom().address));
    const signed = [await issuer.signTransaction(prepared.json.transactions[0])];
    sendSamples.push((await call(sendKey, "/send-transactions", { txId: prepared.json.txId, signedTransactions: signed })).ms);
  }

  await service.stop();
  await sandbox.close();
  return [summarize("POST /prepare-transactions (whitelist, 1 tx)", prepareSamples), summarize("POST /send-transactions (1 tx, until confirmed)", sendSamples)];
}
