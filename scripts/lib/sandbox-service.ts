import fs from "node:fs";
import path from "node:path";
import type { Wallet } from "ethers";
import { loadConfig } from "../../service/config";
import { startService, type RunningService } from "../../service/server";
import { makePrivate, privateDirectory } from "../../service/store/private-files";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { ACCOUNT_ROLES, createSandbox, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "./sandbox";
import { createSandboxProcess } from "./chains-process";

/** What `npm run chains` leaves for `npm run service`: where the local chains answer and their deployments. */
export interface SandboxChainsFile {
  pid: number;
  blockTime: number;
  deploymentsDir: string;
  chains: Record<string, { rpcUrl: string }>;
}

export const sandboxDir = (dataDir: string) => path.join(dataDir, "sandbox");
export const chainsFilePath = (dataDir: string) => path.join(sandboxDir(dataDir), "chains.json");

/**
 * The sandbox's two local chains on their ports (LOCAL_SEPOLIA_PORT, LOCAL_BASE_SEPOLIA_PORT; 8545 and 8546), deployed
 * and funded: in this process (`npm run chains`), or with `ownProcess` in a process of their own (`npm start`: the
 * service then shares its event loop with no chain, as a deployment's does not).
 */
export async function startSandboxChains(
  hre: HardhatRuntimeEnvironment,
  dataDir: string,
  blockTime: number,
  options: { ownProcess?: boolean } = {},
): Promise<Sandbox> {
  // Private like everything else in the data directory (the database, the secrets): directories 0700, files 0600.
  const deploymentsDir = path.join(sandboxDir(dataDir), "deployments");
  privateDirectory(dataDir);
  privateDirectory(sandboxDir(dataDir));
  privateDirectory(deploymentsDir);
  const sandbox = await (options.ownProcess ? createSandboxProcess : createSandbox)(hre, {
    blockTime,
    deploymentsDir,
    ports: {
      sepolia: Number(process.env.LOCAL_SEPOLIA_PORT ?? 8545),
      baseSepolia: Number(process.env.LOCAL_BASE_SEPOLIA_PORT ?? 8546),
    },
    log: (line) => console.log(line),
  });
  makePrivate(deploymentsDir);
  return sandbox;
}

/** Writes a file of the sandbox's data directory, private to this user (0600 in a 0700 directory). */
export function writePrivateFile(file: string, text: string): void {
  privateDirectory(path.dirname(file));
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

export interface SandboxServiceOptions {
  dataDir: string;
  deploymentsDir: string;
  blockTime: number;
  chains: { chainId: number; url: string }[];
  accounts: Wallet[];
}

export interface SandboxCredentials {
  baseUrl: string;
  blockTime: number;
  apiKey: string;
  chains: Record<string, { rpcUrl: string; deployment: unknown }>;
  accounts: { address: string; privateKey: string; role: string }[];
}

/**
 * The sandbox service against local chains that are already running (in this process for `npm start`, in another for
 * `npm run service`): sandbox environment on the embedded database, the test accounts' relayer and settlement keys,
 * a sandbox API key on the Enterprise plan kept across restarts, the user accounts whitelisted, and
 * <DATA_DIR>/sandbox/dev-credentials.json with what a newcomer needs.
 */
export async function startSandboxService(
  options: SandboxServiceOptions,
): Promise<{ service: RunningService; credentials: SandboxCredentials; credentialsFile: string }> {
  const { accounts, dataDir } = options;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ENVIRONMENT: "sandbox",
    LOG_FORMAT: process.env.LOG_FORMAT ?? "pretty",
    DATA_DIR: dataDir,
    DEPLOYMENTS_DIR: options.deploymentsDir,
    RELAYER_PRIVATE_KEY: process.env.RELAYER_PRIVATE_KEY ?? accounts[RELAYER_INDEX].privateKey,
    X402_SETTLEMENT_PRIVATE_KEY: process.env.X402_SETTLEMENT_PRIVATE_KEY ?? accounts[SETTLEMENT_INDEX].privateKey,
    // Local chains never reorg: one block is final there (the public networks' defaults would only slow the sandbox).
    CONFIRMATIONS: process.env.CONFIRMATIONS ?? "1",
  };
  for (const chain of options.chains) env[`RPC_URL_${chain.chainId}`] = chain.url;
  const service = await startService(loadConfig(env, { profile: "local" }));
  const { apiKeys, signers } = service.services;

  const credentialsFile = path.join(sandboxDir(dataDir), "dev-credentials.json");
  const previous = fs.existsSync(credentialsFile) ? JSON.parse(fs.readFileSync(credentialsFile, "utf8")) : undefined;
  let apiKey: string | undefined = previous?.apiKey;
  if (!apiKey || !(await apiKeys.verify(apiKey))) {
    apiKey = (await apiKeys.create({ email: "sandbox@localhost", plan: "Enterprise" })).key;
    console.log("created the sandbox API key (Enterprise plan)");
  }
  const userAccounts = accounts
    .slice(0, ACCOUNT_ROLES.length)
    .filter((_, i) => i !== SETTLEMENT_INDEX && i !== RELAYER_INDEX);
  // The user accounts are Hardhat's well-known test accounts, whose keys everyone has: the sandbox whitelists them for
  // every key and for x402 payers (the operator's explicit `signers add --all-keys`), so the sandbox key, keys made
  // for trying tenants and payers without a key all use them. A real deployment whitelists each signer for its key.
  for (const account of userAccounts) await signers.add(account.address, "all-keys");

  const deployments = Object.fromEntries(
    options.chains.map((c) => [
      String(c.chainId),
      {
        rpcUrl: c.url,
        deployment: JSON.parse(fs.readFileSync(path.join(options.deploymentsDir, `${c.chainId}.json`), "utf8")),
      },
    ]),
  );
  const credentials: SandboxCredentials = {
    baseUrl: service.url,
    blockTime: options.blockTime,
    apiKey,
    chains: deployments,
    accounts: accounts
      .slice(0, ACCOUNT_ROLES.length)
      .map((a, i) => ({ address: a.address, privateKey: a.privateKey, role: ACCOUNT_ROLES[i] })),
  };
  fs.mkdirSync(sandboxDir(dataDir), { recursive: true });
  fs.writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return { service, credentials, credentialsFile };
}

/** LOCAL_BLOCK_TIME: seconds between blocks on the local chains; unset, empty or 0 mines every transaction at once. */
export function localBlockTime(value: string | undefined, validate: (seconds: number) => unknown): number {
  if (value === undefined || value.trim() === "") return 0;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`LOCAL_BLOCK_TIME must be a number of seconds >= 0 (0 = instant), got "${value}"`);
  validate(seconds);
  return seconds;
}

export function blockTimeLine(blockTime: number): string {
  return `  blocks         ${blockTime ? `every ${blockTime} s (LOCAL_BLOCK_TIME)` : "mined at once, one per transaction (LOCAL_BLOCK_TIME=2 mines every 2 s)"}; chain time follows the wall clock`;
}

/** What another kind of run (`npm run rehearsal`) says instead of the sandbox's title, blocks and funding lines. */
export interface BannerText {
  title: string;
  blocks: string[];
  accounts: string;
  more?: string[];
}

export function printServiceBanner(
  credentials: SandboxCredentials,
  file: string,
  stops: string,
  text?: BannerText,
): void {
  const lines = [
    "",
    `Tokenized-Asset Transaction API — ${text?.title ?? "sandbox is up"}`,
    `  API            ${credentials.baseUrl}   (try: curl '${credentials.baseUrl}/get-network-info?chainId=aa36a7')`,
    `  API key        ${credentials.apiKey}   (header x-api-key)`,
    ...Object.entries(credentials.chains).map(([id, c]) => `  chain ${id.padEnd(9)}${c.rpcUrl}`),
    ...(text?.blocks ?? [blockTimeLine(credentials.blockTime)]),
    ...(text?.more ?? []),
    text?.accounts ??
      "  accounts (Hardhat test mnemonic; each funded with ETH, 1,000,000 USDC and USDT, 100,000 BKN on both chains):",
    ...credentials.accounts.map((a, i) => `    #${i} ${a.address}  ${a.role}`),
    `  everything above, with private keys: ${file}`,
    `  Ctrl-C stops ${stops}.`,
    "",
  ];
  console.log(lines.join("\n"));
}

/** Runs `stop` once on Ctrl-C or SIGTERM, then exits. */
export function onStopSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = async () => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping…");
    await stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void handler());
  process.on("SIGTERM", () => void handler());
}
