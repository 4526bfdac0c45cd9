import hre from "hardhat";
import { deploySuite } from "./lib/deploy-suite";

/**
 * `npx hardhat run scripts/deploy.ts --network sepolia|baseSepolia` (RPC URL and DEPLOYER_PRIVATE_KEY from the
 * environment): deploys the suite and writes deployments/<chainId>.json. Safe to re-run.
 */
async function main() {
  const [deployer] = await hre.ethers.getSigners();
  if (!deployer) throw new Error(`No deployer account for network ${hre.network.name}: set DEPLOYER_PRIVATE_KEY`);
  const deploymentsDir = process.env.DEPLOYMENTS_DIR ?? "deployments";
  const result = await deploySuite(deployer, { deploymentsDir, log: (line) => console.log(line) });
  console.log(JSON.stringify(result.deployment, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
