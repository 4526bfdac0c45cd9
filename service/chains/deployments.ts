import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);

/** deployments/<chainId>.json, written by scripts/deploy.ts. */
export const deploymentSchema = z.object({
  chainId: z.number().int().positive(),
  chainName: z.string(),
  currencyName: z.string(),
  blockExplorerUrl: z.string(),
  deploymentBlock: z.number().int().nonnegative(),
  deployer: address,
  deployedAt: z.string(),
  contracts: z.object({
    TokenFactory: address,
    SecurityTokenImplementation: address,
    StoEscrowImplementation: address,
    /** Payment assets: ours on local chains, the network's real ones elsewhere (absent where the network has none). */
    USDC: address.optional(),
    USDT: address.optional(),
    BKN: address,
    AgentTokenImplementation: address,
    AgentTokenFactory: address,
    /** ERC-8004 registries (the agent surface serves them on Base and Base Sepolia). */
    IdentityRegistry: address,
    ReputationRegistry: address,
    /** ERC-8226 (RAMS) registry and compliance provider (the RAMS surface serves them on Sepolia). */
    AgentMandate: address,
    ComplianceProvider: address,
    /**
     * EIP-7702 code of the relayer (contracts/payments/PaidRelayDelegate.sol): settles an x402 payment and runs the
     * relayed operation it pays for in one transaction. Absent in files written before it joined the suite: payments
     * on that chain are then settled in a transaction of their own.
     */
    PaidRelayDelegate: address.optional(),
  }),
});

export type Deployment = z.infer<typeof deploymentSchema>;
export type ContractName = keyof Deployment["contracts"];

export function deploymentPath(dir: string, chainId: number): string {
  return path.resolve(dir, `${chainId}.json`);
}

/** Reads a deployment file; undefined when the chain has none. Throws when the file exists but is malformed. */
export function readDeployment(dir: string, chainId: number): Deployment | undefined {
  const file = deploymentPath(dir, chainId);
  if (!fs.existsSync(file)) return undefined;
  const parsed = deploymentSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file} is not a valid deployment: ${parsed.error.issues[0].message}`);
  if (parsed.data.chainId !== chainId)
    throw new Error(`${file} describes chain ${parsed.data.chainId}, not ${chainId}`);
  return parsed.data;
}

export function writeDeployment(dir: string, deployment: Deployment): string {
  const file = deploymentPath(dir, deployment.chainId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(deploymentSchema.parse(deployment), null, 2) + "\n");
  return file;
}
