import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { formatEther, JsonRpcProvider, NonceManager, parseEther, parseUnits, type Wallet } from "ethers";
import { readDeployment, type Deployment } from "../../service/chains/deployments";
import { networkById } from "../../service/chains/networks";
import { adminTokenPath, dataEncryptionKeyPath, keptSecret } from "../../service/runtime-files";
import { installCircleUsdc, mintCircleUsdc } from "./circle-usdc";
import { blockTimeMs, startLocalChain, type LocalChain } from "./local-chain";
import {
  ACCOUNT_ROLES,
  RAMS_COMPLIANCE_OWNER_INDEX,
  RAMS_ENFORCER_INDEX,
  RELAYER_INDEX,
  SETTLEMENT_INDEX,
  testAccounts,
} from "./sandbox";
import {
  migrateDatabase,
  startServiceProcess,
  type ServiceProcess,
  type ServiceProcessOptions,
} from "./service-process";

const ROOT = path.resolve(__dirname, "../..");

/** One public test network the rehearsal stands in for, and how its local twin behaves. */
export interface RehearsalNetwork {
  key: "sepolia" | "baseSepolia";
  chainId: number;
  /** The hardhat.config.ts network `scripts/deploy.ts` is run with, and the variable that network reads its URL from. */
  hardhatNetwork: string;
  rpcUrlVariable: string;
  /** Seconds between blocks on the public network. */
  blockTime: number;
  /** Variable that overrides the block time (seconds, fractions allowed). */
  blockTimeVariable: string;
  /** Base fee of the first block, in wei. */
  initialBaseFeePerGas: bigint;
  /** The base fee never falls below this (wei; 0: no floor, it may decay to 7 wei on an idle chain). */
  minBaseFeePerGas: bigint;
  blockGasLimit: number;
}

/**
 * Sepolia: 12 s slots, 60M gas blocks, EIP-1559 with elasticity 2 (what Hardhat implements), a quiet network's
 * 1 gwei to start with and no floor. Base Sepolia: 2 s blocks and the 200,000 wei minimum base fee it has had since
 * Jovian; its real blocks are far larger (elasticity 15 on a 1.2B gas limit), so its base fee hardly ever leaves the
 * floor there: here the blocks are Sepolia-sized, so that load moves the fee and fee handling can be rehearsed.
 */
export const REHEARSAL_NETWORKS: readonly RehearsalNetwork[] = [
  {
    key: "sepolia",
    chainId: 11155111,
    hardhatNetwork: "sepolia",
    rpcUrlVariable: "RPC_URL_11155111",
    blockTime: 12,
    blockTimeVariable: "REHEARSAL_BLOCK_TIME_11155111",
    initialBaseFeePerGas: parseUnits("1", "gwei"),
    minBaseFeePerGas: 0n,
    blockGasLimit: 60_000_000,
  },
  {
    key: "baseSepolia",
    chainId: 84532,
    hardhatNetwork: "baseSepolia",
    rpcUrlVariable: "RPC_URL_84532",
    blockTime: 2,
    blockTimeVariable: "REHEARSAL_BLOCK_TIME_84532",
    initialBaseFeePerGas: parseUnits("0.001", "gwei"),
    minBaseFeePerGas: 200_000n,
    blockGasLimit: 60_000_000,
  },
];

/**
 * Roles of the Hardhat test accounts on the rehearsal network. #0..#9 as in the sandbox (so `npm run demo` and the
 * sandbox's habits carry over), except that the deployer (#0), the settlement wallet (#8) and the relayer (#9) start
 * with no ETH and are funded by the faucet account, as the deploy guide tells a developer to fund them.
 */
export const REHEARSAL_ACCOUNT_ROLES = [
  "deployer: starts empty, funded from the faucet; RAMS registry admin on Sepolia",
  ...ACCOUNT_ROLES.slice(1, SETTLEMENT_INDEX),
  "x402 settlement wallet and payee (service-held): starts empty, funded on Base Sepolia",
  "relayer (service-held): starts empty, funded on both chains",
];
export const DEPLOYER_INDEX = 0;
export const CIRCLE_PROXY_ADMIN_INDEX = 10;
export const CIRCLE_OWNER_INDEX = 11;
export const CIRCLE_MINTER_INDEX = 12;
/** Stands for a testnet faucet: the ETH the empty wallets receive comes from it. */
export const FAUCET_INDEX = 19;
const EMPTY_AT_GENESIS = [DEPLOYER_INDEX, SETTLEMENT_INDEX, RELAYER_INDEX];

/** What the faucet sends (ETH) and what Circle's minter mints to each of accounts #0..#9 (USDC, 6 decimals). */
export const REHEARSAL_FUNDING = {
  deployer: parseEther("0.5"),
  relayer: parseEther("0.5"),
  settlement: parseEther("0.1"),
  USDC: parseUnits("1000000", 6),
} as const;

export interface RehearsalChain extends LocalChain {
  network: RehearsalNetwork;
  /** Circle's USDC (FiatToken v2.2 behind FiatTokenProxy) at Circle's address on the public network. */
  usdc: string;
  /** The current floor of the base fee (wei). */
  readonly minBaseFeePerGas: bigint;
  /**
   * Moves the floor (0n: none). A base-fee spike is a floor raised for a few blocks and put back: the next block
   * after the call is priced at least `wei`, and so on until it is lowered again.
   */
  setMinBaseFee(wei: bigint): void;
}

export interface RehearsalWallets {
  deployer: Wallet;
  relayer: Wallet;
  settlement: Wallet;
  ramsEnforcer: Wallet;
  ramsComplianceOwner: Wallet;
  circleProxyAdmin: Wallet;
  circleOwner: Wallet;
  circleMinter: Wallet;
  faucet: Wallet;
}

export interface RehearsalOptions {
  /** Where `scripts/deploy.ts` writes the deployment files (DEPLOYMENTS_DIR); never the repository's deployments/. */
  deploymentsDir: string;
  /** The service's DATA_DIR (its embedded database and operator files go to <dataDir>/sandbox/). */
  dataDir: string;
  /** Seconds between blocks per chain id (default: 12 and 2, or REHEARSAL_BLOCK_TIME_<chainId> from the environment). */
  blockTimes?: Partial<Record<number, number>>;
  /** Ports of the chains' JSON-RPC servers per chain id (default 0: free ports). */
  ports?: Partial<Record<number, number>>;
  /** Progress lines of the set-up (and the deploy script's output). */
  log?: (line: string) => void;
}

export interface Rehearsal {
  sepolia: RehearsalChain;
  baseSepolia: RehearsalChain;
  chains: RehearsalChain[];
  deploymentsDir: string;
  dataDir: string;
  /** The deployment files `scripts/deploy.ts` wrote, by chain id. */
  deployments: Record<number, Deployment>;
  /** The 20 Hardhat test accounts, with their private keys (roles: {@link REHEARSAL_ACCOUNT_ROLES}). */
  accounts: Wallet[];
  wallets: RehearsalWallets;
  /** Seconds between blocks per chain id, as the chains mine now. */
  blockTimes: Record<number, number>;
  /** The service's environment for a production-like run against these chains; `overrides` win (e.g. RPC_URL_<id> at a proxy). */
  serviceEnv(overrides?: Record<string, string | undefined>): Record<string, string>;
  /** Starts the service as its own process with {@link serviceEnv}; {@link close} stops it if the caller has not. */
  startService(
    overrides?: Record<string, string | undefined>,
    options?: ServiceProcessOptions,
  ): Promise<ServiceProcess>;
  /**
   * The operator's first steps on a running service, through its admin command (what `npm run admin` sends to a
   * running service): an API key on the Enterprise plan and the user accounts whitelisted as its signers.
   */
  onboard(service: ServiceProcess, email?: string): Promise<{ apiKey: string; keyId: string }>;
  close(): Promise<void>;
}

/** Block times from the environment: REHEARSAL_BLOCK_TIME_<chainId> (seconds), else the public network's. */
export function blockTimesFromEnv(env: NodeJS.ProcessEnv = process.env): Record<number, number> {
  const times: Record<number, number> = {};
  for (const network of REHEARSAL_NETWORKS) {
    const value = env[network.blockTimeVariable];
    if (value === undefined || value.trim() === "") times[network.chainId] = network.blockTime;
    else {
      const seconds = Number(value);
      if (!Number.isFinite(seconds) || seconds <= 0)
        throw new Error(`${network.blockTimeVariable} must be a number of seconds > 0, got "${value}"`);
      blockTimeMs(seconds);
      times[network.chainId] = seconds;
    }
  }
  return times;
}

/**
 * Starts the rehearsal network: two local chains with the public ids 11155111 and 84532, their public block times
 * and an EIP-1559 base fee; Circle's USDC (FiatToken v2.2 behind its proxy) at Circle's addresses, minted to accounts
 * #0..#9; the deployer funded from the faucet account and the suite deployed by `scripts/deploy.ts --network sepolia`
 * / `baseSepolia` run as a developer runs it (a child process with RPC_URL_11155111 / RPC_URL_84532,
 * DEPLOYER_PRIVATE_KEY, DEPLOYMENTS_DIR and the RAMS role addresses); then the relayer and settlement wallets funded.
 * The set-up mines each transaction at once (so a start takes seconds, not minutes of 12 s blocks); then the base fee
 * is put back to the network's starting value and the chains mine on their interval.
 */
export async function createRehearsal(hre: HardhatRuntimeEnvironment, options: RehearsalOptions): Promise<Rehearsal> {
  const log = options.log ?? (() => undefined);
  const blockTimes = { ...blockTimesFromEnv(), ...options.blockTimes } as Record<number, number>;
  for (const seconds of Object.values(blockTimes)) blockTimeMs(seconds);
  const accounts = testAccounts(hre, 20);
  const wallets: RehearsalWallets = {
    deployer: accounts[DEPLOYER_INDEX],
    relayer: accounts[RELAYER_INDEX],
    settlement: accounts[SETTLEMENT_INDEX],
    ramsEnforcer: accounts[RAMS_ENFORCER_INDEX],
    ramsComplianceOwner: accounts[RAMS_COMPLIANCE_OWNER_INDEX],
    circleProxyAdmin: accounts[CIRCLE_PROXY_ADMIN_INDEX],
    circleOwner: accounts[CIRCLE_OWNER_INDEX],
    circleMinter: accounts[CIRCLE_MINTER_INDEX],
    faucet: accounts[FAUCET_INDEX],
  };
  const genesis = accounts.map((a, i) => ({
    privateKey: a.privateKey,
    balance: EMPTY_AT_GENESIS.includes(i) ? 0n : parseEther("10000"),
  }));
  const chains: RehearsalChain[] = [];
  const services: ServiceProcess[] = [];
  const children = new Set<ChildProcess>();
  const metricsToken = randomBytes(24).toString("base64url");
  const close = async () => {
    await Promise.all(services.map((s) => s.stop()));
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(chains.map((c) => c.close()));
  };

  try {
    for (const network of REHEARSAL_NETWORKS) {
      chains.push(await startRehearsalChain(hre, network, genesis, options.ports?.[network.chainId] ?? 0));
    }
    const deployments: Record<number, Deployment> = {};
    await Promise.all(
      chains.map(async (chain) => {
        const provider = new JsonRpcProvider(chain.url, chain.chainId, {
          staticNetwork: true,
          cacheTimeout: -1,
          pollingInterval: 50,
        });
        try {
          const signer = (w: Wallet) => new NonceManager(w.connect(provider));
          const faucet = signer(wallets.faucet);
          await (
            await faucet.sendTransaction({ to: wallets.deployer.address, value: REHEARSAL_FUNDING.deployer })
          ).wait();
          log(
            `chain ${chain.chainId}: the deployer ${wallets.deployer.address} funded with ${formatEther(REHEARSAL_FUNDING.deployer)} ETH from the faucet`,
          );
          // Circle's token is there before anything of ours on a public network; here the two go side by side (other
          // accounts, so other nonces): the deploy script only names the token's address.
          const circle = (async () => {
            await installCircleUsdc(chain, chain.usdc, {
              proxyAdmin: signer(wallets.circleProxyAdmin),
              owner: signer(wallets.circleOwner),
              minter: signer(wallets.circleMinter),
            });
            log(`chain ${chain.chainId}: Circle's FiatToken v2.2 behind FiatTokenProxy at ${chain.usdc}`);
            await mintCircleUsdc(
              signer(wallets.circleMinter),
              chain.usdc,
              accounts.slice(0, REHEARSAL_ACCOUNT_ROLES.length).map((a) => a.address),
              REHEARSAL_FUNDING.USDC,
            );
          })();
          const deploy = runDeployScript(chain, {
            deployerKey: wallets.deployer.privateKey,
            deploymentsDir: options.deploymentsDir,
            ramsRoles:
              chain.chainId === 11155111
                ? { enforcer: wallets.ramsEnforcer.address, complianceOwner: wallets.ramsComplianceOwner.address }
                : undefined,
            log,
            children,
          });
          await Promise.all([circle, deploy]);
          deployments[chain.chainId] = readDeployment(options.deploymentsDir, chain.chainId)!;
          await (
            await faucet.sendTransaction({ to: wallets.relayer.address, value: REHEARSAL_FUNDING.relayer })
          ).wait();
          if (chain.chainId === 84532)
            await (
              await faucet.sendTransaction({ to: wallets.settlement.address, value: REHEARSAL_FUNDING.settlement })
            ).wait();
        } finally {
          provider.destroy();
        }
      }),
    );
    for (const chain of chains) {
      await chain.provider.request({
        method: "hardhat_setNextBlockBaseFeePerGas",
        params: ["0x" + chain.network.initialBaseFeePerGas.toString(16)],
      });
      await chain.setBlockTime(blockTimes[chain.chainId]);
      log(`chain ${chain.chainId}: a block every ${blockTimes[chain.chainId]} s`);
    }

    const [sepolia, baseSepolia] = chains;
    const serviceDirs = { environmentDir: rehearsalServiceDir(options.dataDir) };
    const serviceEnv = (overrides: Record<string, string | undefined> = {}): Record<string, string> => {
      const env: Record<string, string | undefined> = {
        ENVIRONMENT: "sandbox",
        HOST: "127.0.0.1",
        PORT: "0",
        DATA_DIR: options.dataDir,
        DEPLOYMENTS_DIR: options.deploymentsDir,
        ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
        // The production posture needs both secrets given: the rehearsal keeps its own beside its database.
        ADMIN_TOKEN: keptSecret(serviceDirs, adminTokenPath(serviceDirs)),
        DATA_ENCRYPTION_KEY: keptSecret(serviceDirs, dataEncryptionKeyPath(serviceDirs)),
        METRICS_TOKEN: metricsToken,
        RELAYER_PRIVATE_KEY: wallets.relayer.privateKey,
        X402_SETTLEMENT_PRIVATE_KEY: wallets.settlement.privateKey,
        ...Object.fromEntries(chains.map((c) => [`RPC_URL_${c.chainId}`, c.url])),
        ...overrides,
      };
      return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
    };
    return {
      sepolia,
      baseSepolia,
      chains,
      deploymentsDir: options.deploymentsDir,
      dataDir: options.dataDir,
      deployments,
      accounts,
      wallets,
      blockTimes,
      serviceEnv,
      async startService(overrides, serviceOptions) {
        // As the deploy guide says: the schema first (`npm run migrate`), then the service, which only checks it.
        await migrateDatabase(serviceEnv(overrides));
        const service = await startServiceProcess(serviceEnv(overrides), serviceOptions);
        services.push(service);
        return service;
      },
      async onboard(service, email = "rehearsal@localhost") {
        const admin = async (command: Record<string, unknown>) => {
          const response = await fetch(`${service.url}/admin/command`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-admin-token": serviceEnv().ADMIN_TOKEN },
            body: JSON.stringify(command),
          });
          const body = (await response.json()) as { result?: any; message?: string };
          if (!response.ok)
            throw new Error(`admin ${String(command.command)}: ${response.status} ${String(body.message)}`);
          return body.result;
        };
        const created = await admin({ command: "keys.create", email, plan: "Enterprise" });
        const users = accounts
          .slice(0, REHEARSAL_ACCOUNT_ROLES.length)
          .filter((_, i) => i !== SETTLEMENT_INDEX && i !== RELAYER_INDEX);
        // Whitelisted for the rehearsal's key, as an operator whitelists a tenant's signers (signers are per key).
        for (const user of users) await admin({ command: "signers.add", address: user.address, keyId: created.id });
        return { apiKey: created.apiKey as string, keyId: created.id as string };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A local chain behaving like `network`, with Circle's USDC address named, and a keeper of its base-fee floor. */
async function startRehearsalChain(
  hre: HardhatRuntimeEnvironment,
  network: RehearsalNetwork,
  accounts: { privateKey: string; balance: bigint }[],
  port: number,
): Promise<RehearsalChain> {
  const usdc = networkById(network.chainId)?.paymentAssets?.USDC;
  if (!usdc) throw new Error(`the network table names no USDC for chain ${network.chainId}`);
  const local = await startLocalChain(hre, {
    chainId: network.chainId,
    port,
    initialBaseFeePerGas: network.initialBaseFeePerGas,
    blockGasLimit: network.blockGasLimit,
    accounts,
  });
  let floor = network.minBaseFeePerGas;
  let checkedBlock = -1;
  let busy = false;
  // After each block: when EIP-1559 would take the next block under the floor, price it at the floor instead.
  const keeper = setInterval(() => {
    if (busy || floor === 0n) return;
    busy = true;
    void (async () => {
      const block = (await local.provider.request({ method: "eth_getBlockByNumber", params: ["latest", false] })) as {
        number: string;
        baseFeePerGas: string;
        gasUsed: string;
        gasLimit: string;
      };
      const number = Number(block.number);
      if (number === checkedBlock) return;
      checkedBlock = number;
      if (nextBaseFee(BigInt(block.baseFeePerGas), BigInt(block.gasUsed), BigInt(block.gasLimit)) < floor) {
        await local.provider.request({
          method: "hardhat_setNextBlockBaseFeePerGas",
          params: ["0x" + floor.toString(16)],
        });
      }
    })()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, 100);
  keeper.unref();
  const chain = local as RehearsalChain;
  chain.network = network;
  chain.usdc = usdc;
  Object.defineProperty(chain, "minBaseFeePerGas", { get: () => floor });
  chain.setMinBaseFee = (wei: bigint) => {
    floor = wei;
    checkedBlock = -1;
  };
  // `chain` is `local`: keep its own close before replacing it (calling local.close() would call this one again).
  const closeLocal = local.close.bind(local);
  chain.close = async () => {
    clearInterval(keeper);
    await closeLocal();
  };
  return chain;
}

/** EIP-1559's next base fee with elasticity 2 and denominator 8 (what Hardhat computes). */
export function nextBaseFee(baseFee: bigint, gasUsed: bigint, gasLimit: bigint): bigint {
  const target = gasLimit / 2n;
  if (gasUsed === target) return baseFee;
  if (gasUsed > target) {
    const delta = (baseFee * (gasUsed - target)) / target / 8n;
    return baseFee + (delta > 0n ? delta : 1n);
  }
  return baseFee - (baseFee * (target - gasUsed)) / target / 8n;
}

export interface DeployScriptOptions {
  deployerKey: string;
  deploymentsDir: string;
  ramsRoles?: { enforcer: string; complianceOwner: string };
  log?: (line: string) => void;
  /** Running children are added here while they run (so a caller can end them). */
  children?: Set<ChildProcess>;
  /** More environment for the script. */
  env?: Record<string, string>;
}

/**
 * `npx hardhat run scripts/deploy.ts --network sepolia|baseSepolia` against a rehearsal chain, as a child process
 * with the variables docs/deploying.md gives a developer: the network's RPC URL variable, DEPLOYER_PRIVATE_KEY,
 * DEPLOYMENTS_DIR and, on Sepolia, RAMS_ENFORCER_ADDRESS and RAMS_COMPLIANCE_OWNER_ADDRESS. `--no-compile`: the
 * contracts are compiled before the rehearsal starts, and the two chains deploy at once. Rejects with the script's
 * output when it fails.
 */
export async function runDeployScript(chain: RehearsalChain, options: DeployScriptOptions): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TS_NODE_TRANSPILE_ONLY: "true",
    [chain.network.rpcUrlVariable]: chain.url,
    DEPLOYER_PRIVATE_KEY: options.deployerKey,
    DEPLOYMENTS_DIR: options.deploymentsDir,
    ...(options.ramsRoles
      ? {
          RAMS_ENFORCER_ADDRESS: options.ramsRoles.enforcer,
          RAMS_COMPLIANCE_OWNER_ADDRESS: options.ramsRoles.complianceOwner,
        }
      : {}),
    ...options.env,
  };
  const cli = require.resolve("hardhat/internal/cli/bootstrap", { paths: [ROOT] });
  const child = spawn(
    process.execPath,
    [cli, "run", "--no-compile", "scripts/deploy.ts", "--network", chain.network.hardhatNetwork],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  options.children?.add(child);
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  options.children?.delete(child);
  // Its progress lines (not the deployment it prints at the end, which is in the file).
  for (const line of output.split("\n")) if (/^(chain \d+:|RAMS:|deploy)/.test(line)) options.log?.(line);
  if (code !== 0)
    throw new Error(
      `scripts/deploy.ts --network ${chain.network.hardhatNetwork} failed (exit ${code}):\n${output.slice(-4000)}`,
    );
  return output;
}

/** Where the service of a rehearsal with `dataDir` keeps its files (ENVIRONMENT=sandbox): database, tokens, credentials. */
export const rehearsalServiceDir = (dataDir: string) => path.join(dataDir, "sandbox");

/** Empties a deployments directory of a previous rehearsal (the chains start empty, so its files name nothing). */
export function clearDeployments(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const file of fs.readdirSync(dir)) if (/^\d+(\.partial)?\.json$/.test(file)) fs.rmSync(path.join(dir, file));
}
