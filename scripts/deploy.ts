import hre from "hardhat";
import { networkById } from "../service/chains/networks";
import {
  checkDeployerBalance,
  describeEstimate,
  estimateDeployment,
  InsufficientDeployerFunds,
} from "./lib/deploy-cost";
import { deploySuite } from "./lib/deploy-suite";
import { setupRamsRoles } from "./lib/rams-roles";

/**
 * `npx hardhat run scripts/deploy.ts --network sepolia|baseSepolia|base` (RPC URL and DEPLOYER_PRIVATE_KEY from the
 * environment): deploys the suite and writes deployments/<chainId>.json, naming the network's real USDC/USDT (and, on
 * a production network, the governance token at BKN_ADDRESS). Safe to re-run. The deployer is the RAMS
 * registry admin and the compliance provider's first owner: RAMS_ENFORCER_ADDRESS (another wallet than the deployer,
 * and not the service's relayer) receives ENFORCER_ROLE and RAMS_COMPLIANCE_OWNER_ADDRESS the compliance provider.
 * Before sending anything it estimates the deployment's cost (gas × the network's current fees) and refuses, naming
 * the amount to send, when the deployer holds less than that.
 */
async function main() {
  const [deployer] = await hre.ethers.getSigners();
  if (!deployer) throw new Error(`No deployer account for network ${hre.network.name}: set DEPLOYER_PRIVATE_KEY`);
  const deploymentsDir = process.env.DEPLOYMENTS_DIR ?? "deployments";
  // A node of one's own (`npx hardhat node`, --network localhost) gets our payment assets; a public network names its
  // real ones from the network table. DEPLOY_PAYMENT_ASSETS=local|network overrides.
  const paymentAssets =
    (process.env.DEPLOY_PAYMENT_ASSETS as "local" | "network" | undefined) ??
    (["hardhat", "localhost"].includes(hre.network.name) ? "local" : "network");
  const options = {
    deploymentsDir,
    paymentAssets,
    governanceToken: process.env.BKN_ADDRESS || undefined,
    log: (line: string) => console.log(line),
  };
  const roles = {
    enforcer: process.env.RAMS_ENFORCER_ADDRESS || undefined,
    complianceOwner: process.env.RAMS_COMPLIANCE_OWNER_ADDRESS || undefined,
  };

  const network = networkById(Number((await hre.ethers.provider.getNetwork()).chainId));
  const [name, currency] = [network?.name ?? hre.network.name, network?.currencyName ?? "ETH"];
  const estimate = await estimateDeployment(deployer, {
    ...options,
    roleTransactions: [roles.enforcer, roles.complianceOwner].filter(Boolean).length,
  });
  const balance = await hre.ethers.provider.getBalance(deployer.address);
  checkDeployerBalance(estimate, deployer.address, balance, name, currency);
  console.log(
    `deployer ${deployer.address} holds ${hre.ethers.formatEther(balance)} ${currency}; cost estimate: ${describeEstimate(estimate, name, currency)}`,
  );

  const result = await deploySuite(deployer, options);
  await setupRamsRoles(deployer, result.deployment, roles, (line) => console.log(line));
  if (!roles.enforcer)
    console.log(
      "RAMS: no RAMS_ENFORCER_ADDRESS given; grant ENFORCER_ROLE to a wallet other than the deployer before freezing agents",
    );
  console.log(JSON.stringify(result.deployment, null, 2));
}

main().catch((error) => {
  console.error(error instanceof InsufficientDeployerFunds ? error.message : error);
  process.exitCode = 1;
});
