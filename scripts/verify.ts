import hre from "hardhat";
import { readDeployment, type Deployment } from "../service/chains/deployments";
import { networkById } from "../service/chains/networks";
import { suiteSteps, type Progress } from "./lib/deploy-suite";

/** One contract of a deployment to publish: where it is and the constructor arguments it was deployed with. */
export interface Verification {
  name: string;
  /** Fully qualified, so the plugin never has to guess between contracts with the same bytecode. */
  contract: string;
  address: string;
  constructorArguments: unknown[];
}

/**
 * The contracts of a deployment that the suite deployed itself (never the network's USDC or USDT, nor a production
 * governance token), each with the constructor arguments deploySuite gave it.
 */
export async function verificationPlan(deployment: Deployment): Promise<Verification[]> {
  const production = networkById(deployment.chainId)?.environment === "production";
  const deployed = deployment.contracts as Progress;
  const plan: Verification[] = [];
  for (const step of suiteSteps({ local: false, production })) {
    const artifact = await hre.artifacts.readArtifact(step.contract);
    plan.push({
      name: step.name,
      contract: `${artifact.sourceName}:${artifact.contractName}`,
      address: deployed[step.name]!,
      constructorArguments: step.args(deployed, deployment.deployer),
    });
  }
  return plan;
}

/**
 * `npx hardhat run scripts/verify.ts --network sepolia|baseSepolia|base` with ETHERSCAN_API_KEY (an etherscan.io key:
 * the v2 API serves Sepolia, Base Sepolia and Base with it) and the DEPLOYMENTS_DIR the deploy wrote to: publishes the
 * source of every contract of <DEPLOYMENTS_DIR>/<chainId>.json on the network's explorer. Already verified contracts
 * are reported and skipped; re-running is safe.
 */
async function main() {
  if (!hre.config.etherscan.apiKey)
    throw new Error(
      "Set ETHERSCAN_API_KEY (an etherscan.io API key; the v2 API covers Sepolia, Base Sepolia and Base)",
    );
  const chainId = Number((await hre.ethers.provider.getNetwork()).chainId);
  const deployment = readDeployment(process.env.DEPLOYMENTS_DIR ?? "deployments", chainId);
  if (!deployment)
    throw new Error(
      `No deployment of chain ${chainId} in ${process.env.DEPLOYMENTS_DIR ?? "deployments"}: deploy first (scripts/deploy.ts)`,
    );
  let failed = 0;
  for (const item of await verificationPlan(deployment)) {
    console.log(`${item.name} at ${item.address} (${item.contract})`);
    try {
      await hre.run("verify:verify", {
        address: item.address,
        contract: item.contract,
        constructorArguments: item.constructorArguments,
      });
    } catch (error) {
      const message = (error as Error).message;
      if (/already verified/i.test(message)) console.log("  already verified");
      else {
        failed++;
        console.error(`  not verified: ${message}`);
      }
    }
  }
  if (failed) throw new Error(`${failed} contract(s) not verified; run again to retry them`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
