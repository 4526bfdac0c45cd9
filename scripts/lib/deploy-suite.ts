import fs from "node:fs";
import path from "node:path";
import type { ContractFactory, Signer } from "ethers";
import {
  deploymentPath,
  readDeployment,
  writeDeployment,
  type ContractName,
  type Deployment,
} from "../../service/chains/deployments";
import { networkById } from "../../service/chains/networks";
import { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { AgentTokenFactory__factory } from "../../typechain-types/factories/contracts/agents/AgentTokenFactory__factory";
import { AgentToken__factory } from "../../typechain-types/factories/contracts/agents/AgentToken__factory";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import { ComplianceProvider__factory } from "../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";
import { IdentityRegistry__factory } from "../../typechain-types/factories/contracts/agents/IdentityRegistry__factory";
import { ReputationRegistry__factory } from "../../typechain-types/factories/contracts/agents/ReputationRegistry__factory";
import { SecurityToken__factory } from "../../typechain-types/factories/contracts/tokenization/SecurityToken__factory";
import { StoEscrow__factory } from "../../typechain-types/factories/contracts/tokenization/StoEscrow__factory";
import { TokenFactory__factory } from "../../typechain-types/factories/contracts/tokenization/TokenFactory__factory";
import { PaidRelayDelegate__factory } from "../../typechain-types/factories/contracts/payments/PaidRelayDelegate__factory";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import { USDT__factory } from "../../typechain-types/factories/contracts/payments/USDT__factory";

export interface DeployOptions {
  /** Where <chainId>.json is written. */
  deploymentsDir: string;
  /**
   * "local": a local chain gets our own payment assets (USDC with EIP-3009, USDT). "network" (the default): a public
   * network's real ones are named from the network table (service/chains/networks.ts), never deployed.
   */
  paymentAssets?: "local" | "network";
  /** The governance token on a production network; our BKN (with its faucet) is deployed on testnets and local chains only. */
  governanceToken?: string;
  log?: (line: string) => void;
}

export interface DeployResult {
  deployment: Deployment;
  /** False when a complete deployment was already there and nothing was sent. */
  deployed: boolean;
  file: string;
}

export type Progress = Partial<Record<ContractName, string>> & { deploymentBlock?: number };

/** One contract the suite deploys: its factory and constructor arguments from what is deployed before it. */
interface SuiteStep {
  name: ContractName;
  /** The Solidity contract it deploys. */
  contract: string;
  factory: new (signer: Signer) => ContractFactory;
  args: (deployed: Progress, deployer: string) => unknown[];
}

const none = () => [];

/** The contracts the suite deploys itself, in order (payment assets on local chains only, BKN off production). */
export function suiteSteps(what: { local: boolean; production: boolean }): SuiteStep[] {
  const steps: SuiteStep[] = [];
  if (what.local)
    steps.push(
      { name: "USDC", contract: "USDC", factory: USDC__factory, args: none },
      { name: "USDT", contract: "USDT", factory: USDT__factory, args: none },
    );
  if (!what.production) steps.push({ name: "BKN", contract: "BKN", factory: BKN__factory, args: none });
  steps.push(
    { name: "SecurityTokenImplementation", contract: "SecurityToken", factory: SecurityToken__factory, args: none },
    { name: "StoEscrowImplementation", contract: "StoEscrow", factory: StoEscrow__factory, args: none },
    {
      name: "TokenFactory",
      contract: "TokenFactory",
      factory: TokenFactory__factory,
      // The deployer owns the factory: it publishes later versions' implementations (docs/issuer-controls.md).
      args: (d, deployer) => [d.SecurityTokenImplementation, d.StoEscrowImplementation, deployer],
    },
    { name: "AgentTokenImplementation", contract: "AgentToken", factory: AgentToken__factory, args: none },
    {
      name: "AgentTokenFactory",
      contract: "AgentTokenFactory",
      factory: AgentTokenFactory__factory,
      args: (d) => [d.AgentTokenImplementation],
    },
    { name: "IdentityRegistry", contract: "IdentityRegistry", factory: IdentityRegistry__factory, args: none },
    {
      name: "ReputationRegistry",
      contract: "ReputationRegistry",
      factory: ReputationRegistry__factory,
      args: (d) => [d.IdentityRegistry],
    },
    // ERC-8226 (RAMS): the deployer is the registry admin and the compliance provider's first owner; the roles are
    // handed out afterwards (scripts/lib/rams-roles.ts), so every contract here stays one deployment transaction.
    {
      name: "AgentMandate",
      contract: "AgentMandate",
      factory: AgentMandate__factory,
      args: (_d, deployer) => [deployer],
    },
    {
      name: "ComplianceProvider",
      contract: "ComplianceProvider",
      factory: ComplianceProvider__factory,
      args: (_d, deployer) => [deployer],
    },
    // The relayer's EIP-7702 code: an x402 payment settled in the relayed operation's own transaction.
    { name: "PaidRelayDelegate", contract: "PaidRelayDelegate", factory: PaidRelayDelegate__factory, args: none },
  );
  return steps;
}

/** Where a run stands on a chain: the deployment file, whether it is complete, and what an interrupted run left. */
export interface DeployState {
  chainId: number;
  network: ReturnType<typeof networkById>;
  file: string;
  local: boolean;
  production: boolean;
  /** A complete deployment whose contracts all have code: nothing to do. */
  complete?: Deployment;
  progress: Progress;
  progressFile: string;
}

export async function deployState(
  deployer: Signer,
  options: DeployOptions,
  log: (line: string) => void = () => undefined,
): Promise<DeployState> {
  const chainId = Number((await deployer.provider!.getNetwork()).chainId);
  const network = networkById(chainId);
  const file = deploymentPath(options.deploymentsDir, chainId);
  const local = options.paymentAssets === "local";
  const production = network?.environment === "production";
  if (production && !options.governanceToken) {
    throw new Error(
      `chain ${chainId} (${network.name}) is a production network: give the governance token's address (BKN_ADDRESS); BKN with a faucet is deployed on testnets and local chains only`,
    );
  }
  // What this suite deploys itself (the network's payment assets and a production governance token are named, not ours).
  const ours = (contracts: Deployment["contracts"]) =>
    Object.entries(contracts)
      .filter(([name]) => (local || (name !== "USDC" && name !== "USDT")) && !(production && name === "BKN"))
      .map(([, address]) => address)
      .filter((address): address is string => !!address);
  const existing = readOlderDeployment(options.deploymentsDir, chainId, log);
  const progressFile = file.replace(/\.json$/, ".partial.json");
  const state: DeployState = { chainId, network, file, local, production, progressFile, progress: {} };
  if (
    existing.complete &&
    existing.complete.contracts.PaidRelayDelegate &&
    (await allHaveCode(deployer, ours(existing.complete.contracts)))
  ) {
    return { ...state, complete: existing.complete };
  }
  // A file without the relayer's delegate (written before it joined the suite) is completed: the rest is reused.
  if (existing.complete && !existing.complete.contracts.PaidRelayDelegate)
    existing.older = { ...existing.complete.contracts, deploymentBlock: existing.complete.deploymentBlock };
  // A file written before later contracts joined the suite resumes like an interrupted run: what it names is reused.
  state.progress = fs.existsSync(progressFile)
    ? JSON.parse(fs.readFileSync(progressFile, "utf8"))
    : { ...existing.older };
  return state;
}

/**
 * Deploys the suite (token and escrow implementations and factory, agent-token factory, ERC-8004 registries, RAMS
 * registry and compliance provider, the governance token on testnets, and the payment assets on local chains only)
 * with `deployer`, and writes
 * <deploymentsDir>/<chainId>.json. Idempotent: a complete deployment whose contracts all have code is left alone,
 * and an interrupted run resumes from <chainId>.partial.json, reusing what it already deployed.
 */
export async function deploySuite(deployer: Signer, options: DeployOptions): Promise<DeployResult> {
  const log = options.log ?? (() => undefined);
  const { chainId, network, file, local, production, complete, progress, progressFile } = await deployState(
    deployer,
    options,
    log,
  );
  if (complete) {
    log(`chain ${chainId}: complete deployment found in ${file}; nothing to do`);
    return { deployment: complete, deployed: false, file };
  }
  const save = () => {
    fs.mkdirSync(path.dirname(progressFile), { recursive: true });
    fs.writeFileSync(progressFile, JSON.stringify(progress, null, 2));
  };

  if (!local) {
    const assets = network?.paymentAssets ?? {};
    progress.USDC = assets.USDC;
    progress.USDT = assets.USDT;
    log(
      `chain ${chainId}: payment assets of the network: USDC ${assets.USDC ?? "none"}, USDT ${assets.USDT ?? "none"}`,
    );
  }
  if (production) progress.BKN = options.governanceToken;
  const deployerAddress = await deployer.getAddress();
  for (const step of suiteSteps({ local, production })) {
    const known = progress[step.name];
    if (known && (await allHaveCode(deployer, [known]))) {
      log(`chain ${chainId}: ${step.name} already at ${known}`);
      continue;
    }
    const contract = await new step.factory(deployer).deploy(...step.args(progress, deployerAddress));
    const receipt = await contract.deploymentTransaction()!.wait();
    progress[step.name] = await contract.getAddress();
    progress.deploymentBlock ??= receipt!.blockNumber;
    save();
    log(`chain ${chainId}: ${step.name} deployed at ${progress[step.name]}`);
  }

  const deployment: Deployment = {
    chainId,
    chainName: network?.name ?? `chain ${chainId}`,
    currencyName: network?.currencyName ?? "ETH",
    blockExplorerUrl: network?.blockExplorerUrl ?? "",
    deploymentBlock: progress.deploymentBlock ?? 0,
    deployer: await deployer.getAddress(),
    deployedAt: new Date().toISOString(),
    contracts: {
      TokenFactory: progress.TokenFactory!,
      SecurityTokenImplementation: progress.SecurityTokenImplementation!,
      StoEscrowImplementation: progress.StoEscrowImplementation!,
      ...(progress.USDC ? { USDC: progress.USDC } : {}),
      ...(progress.USDT ? { USDT: progress.USDT } : {}),
      BKN: progress.BKN!,
      AgentTokenImplementation: progress.AgentTokenImplementation!,
      AgentTokenFactory: progress.AgentTokenFactory!,
      IdentityRegistry: progress.IdentityRegistry!,
      ReputationRegistry: progress.ReputationRegistry!,
      AgentMandate: progress.AgentMandate!,
      ComplianceProvider: progress.ComplianceProvider!,
      PaidRelayDelegate: progress.PaidRelayDelegate!,
    },
  };
  writeDeployment(options.deploymentsDir, deployment);
  fs.rmSync(progressFile, { force: true });
  log(`chain ${chainId}: deployment written to ${file}`);
  return { deployment, deployed: true, file };
}

/**
 * The deployment file of a chain: complete (valid under today's schema), or written for this chain by an older suite
 * that lacked later contracts, whose addresses then seed the progress of this run. Anything else still throws.
 */
function readOlderDeployment(
  dir: string,
  chainId: number,
  log: (line: string) => void,
): { complete?: Deployment; older?: Progress } {
  try {
    return { complete: readDeployment(dir, chainId) };
  } catch (error) {
    const raw = JSON.parse(fs.readFileSync(deploymentPath(dir, chainId), "utf8")) as {
      chainId?: unknown;
      contracts?: unknown;
      deploymentBlock?: unknown;
    };
    if (raw.chainId !== chainId || typeof raw.contracts !== "object" || raw.contracts === null) throw error;
    const older: Progress = {};
    for (const [name, address] of Object.entries(raw.contracts)) {
      if (typeof address === "string" && /^0x[0-9a-fA-F]{40}$/.test(address)) older[name as ContractName] = address;
    }
    if (typeof raw.deploymentBlock === "number") older.deploymentBlock = raw.deploymentBlock;
    log(`chain ${chainId}: ${(error as Error).message}; completing it`);
    return { older };
  }
}

async function allHaveCode(signer: Signer, addresses: string[]): Promise<boolean> {
  for (const address of addresses) {
    if ((await signer.provider!.getCode(address)) === "0x") return false;
  }
  return true;
}
