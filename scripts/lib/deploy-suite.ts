import fs from "node:fs";
import path from "node:path";
import type { ContractFactory, Signer } from "ethers";
import { deploymentPath, readDeployment, writeDeployment, type ContractName, type Deployment } from "../../service/chains/deployments";
import { networkById } from "../../service/chains/networks";
import {
  AgentTokenFactory__factory,
  AgentToken__factory,
  BKN__factory,
  SecurityToken__factory,
  StoEscrow__factory,
  TokenFactory__factory,
  USDC__factory,
  USDT__factory,
} from "../../typechain-types";

export interface DeployOptions {
  /** Where <chainId>.json is written. */
  deploymentsDir: string;
  log?: (line: string) => void;
}

export interface DeployResult {
  deployment: Deployment;
  /** False when a complete deployment was already there and nothing was sent. */
  deployed: boolean;
  file: string;
}

type Progress = Partial<Record<ContractName, string>> & { deploymentBlock?: number };

/**
 * Deploys the suite (payment assets, token and escrow implementations, factory) with `deployer`, and writes
 * <deploymentsDir>/<chainId>.json. Idempotent: a complete deployment whose contracts all have code is left alone,
 * and an interrupted run resumes from <chainId>.partial.json, reusing what it already deployed.
 */
export async function deploySuite(deployer: Signer, options: DeployOptions): Promise<DeployResult> {
  const log = options.log ?? (() => undefined);
  const provider = deployer.provider!;
  const chainId = Number((await provider.getNetwork()).chainId);
  const network = networkById(chainId);
  const file = deploymentPath(options.deploymentsDir, chainId);

  const existing = readDeployment(options.deploymentsDir, chainId);
  if (existing && (await allHaveCode(deployer, Object.values(existing.contracts)))) {
    log(`chain ${chainId}: complete deployment found in ${file}; nothing to do`);
    return { deployment: existing, deployed: false, file };
  }

  const progressFile = file.replace(/\.json$/, ".partial.json");
  const progress: Progress = fs.existsSync(progressFile) ? JSON.parse(fs.readFileSync(progressFile, "utf8")) : {};
  const save = () => {
    fs.mkdirSync(path.dirname(progressFile), { recursive: true });
    fs.writeFileSync(progressFile, JSON.stringify(progress, null, 2));
  };

  const step = async (name: ContractName, deploy: () => Promise<{ address: string; block: number }>) => {
    const known = progress[name];
    if (known && (await allHaveCode(deployer, [known]))) {
      log(`chain ${chainId}: ${name} already at ${known}`);
      return known;
    }
    const { address, block } = await deploy();
    progress[name] = address;
    progress.deploymentBlock ??= block;
    save();
    log(`chain ${chainId}: ${name} deployed at ${address}`);
    return address;
  };

  const viaFactory = (factory: ContractFactory, ...args: unknown[]) => async () => {
    const contract = await factory.deploy(...args);
    const receipt = await contract.deploymentTransaction()!.wait();
    return { address: await contract.getAddress(), block: receipt!.blockNumber };
  };

  await step("USDC", viaFactory(new USDC__factory(deployer)));
  await step("USDT", viaFactory(new USDT__factory(deployer)));
  await step("BKN", viaFactory(new BKN__factory(deployer)));
  const tokenImpl = await step("SecurityTokenImplementation", viaFactory(new SecurityToken__factory(deployer)));
  const escrowImpl = await step("StoEscrowImplementation", viaFactory(new StoEscrow__factory(deployer)));
  await step("TokenFactory", viaFactory(new TokenFactory__factory(deployer), tokenImpl, escrowImpl));
  const agentTokenImpl = await step("AgentTokenImplementation", viaFactory(new AgentToken__factory(deployer)));
  await step("AgentTokenFactory", viaFactory(new AgentTokenFactory__factory(deployer), agentTokenImpl));

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
      USDC: progress.USDC!,
      USDT: progress.USDT!,
      BKN: progress.BKN!,
      AgentTokenImplementation: progress.AgentTokenImplementation!,
      AgentTokenFactory: progress.AgentTokenFactory!,
    },
  };
  writeDeployment(options.deploymentsDir, deployment);
  fs.rmSync(progressFile, { force: true });
  log(`chain ${chainId}: deployment written to ${file}`);
  return { deployment, deployed: true, file };
}

async function allHaveCode(signer: Signer, addresses: string[]): Promise<boolean> {
  for (const address of addresses) {
    if ((await signer.provider!.getCode(address)) === "0x") return false;
  }
  return true;
}
