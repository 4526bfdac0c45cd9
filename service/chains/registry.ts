import { JsonRpcProvider, Network as EthersNetwork } from "ethers";
import type { Config } from "../config";
import { badRequest } from "../errors";
import { BlockWatcher } from "./blocks";
import { readDeployment, type Deployment } from "./deployments";
import { networkById, parseChainId, type Network } from "./networks";

/** A chain this deployment serves: its table row, its deployed contracts and an RPC provider. */
export interface Chain {
  chainId: number;
  network: Network;
  deployment: Deployment;
  rpcUrl: string;
  provider: JsonRpcProvider;
  /** The chain's head, watched while someone waits for a block (one watcher per chain). */
  blocks: BlockWatcher;
  /** The only method areas served on it (a sandbox chain a production deployment serves for RAMS); absent: all. */
  areas?: string[];
}

/** A network is served by an environment when it belongs to it or is only "listed" (usable wherever configured). */
function servedBy(network: Network, environment: Config["ENVIRONMENT"]): boolean {
  return network.environment === environment || network.environment === "listed";
}

/**
 * The chains this deployment can act on: each chain with an RPC URL (RPC_URL_<chainId>) and a deployment file. A chain
 * of the spec's table is served only by its environment (or anywhere when "listed"); any other EVM chain an operator
 * configures, such as 31337 for `npx hardhat node`, is served as it is.
 */
export class ChainRegistry {
  private readonly chains = new Map<number, Chain>();

  constructor(private readonly config: Config) {
    for (const [chainId, rpcUrl] of config.rpcUrls) {
      const known = networkById(chainId);
      const areas = known && !servedBy(known, config.ENVIRONMENT) ? known.alsoServes?.[config.ENVIRONMENT] : undefined;
      if (known && !servedBy(known, config.ENVIRONMENT) && !areas) continue;
      const deployment = readDeployment(config.DEPLOYMENTS_DIR, chainId);
      if (!deployment) continue;
      const network = known ?? operatorNetwork(chainId, deployment);
      const provider = new JsonRpcProvider(rpcUrl, chainId, {
        staticNetwork: EthersNetwork.from(chainId),
        pollingInterval: 500,
        batchMaxCount: 20,
        // Calls made together (a prepare's nonce, fees and estimate) still go as one batch; ethers' default 10 ms
        // stall would add itself to every round trip.
        batchStallTime: 1,
        // Preflight checks read state a previous request just changed: never answer from ethers' 250 ms cache.
        cacheTimeout: -1,
      });
      this.chains.set(chainId, { chainId, network, deployment, rpcUrl, provider, blocks: new BlockWatcher(provider), ...(areas ? { areas } : {}) });
    }
  }

  list(): Chain[] {
    return [...this.chains.values()];
  }

  find(chainId: number): Chain | undefined {
    return this.chains.get(chainId);
  }

  /**
   * Resolves a client-sent chainId (any encoding of WIRE-COMPAT §1.1) to a served chain, or throws the 400 a client
   * can act on: missing, not a known network, or known but not served by this deployment.
   */
  resolve(input: unknown, field = "chainId"): Chain {
    if (input === undefined || input === null || input === "") throw badRequest(`${field} is required`, { field });
    const chainId = parseChainId(input);
    const served = chainId === undefined ? undefined : this.chains.get(chainId);
    if (served) return served;
    const network = chainId === undefined ? undefined : networkById(chainId);
    if (chainId === undefined || !network) {
      const value = typeof input === "object" ? JSON.stringify(input) : (input as string | number | boolean | bigint).toString();
      throw badRequest(`Unsupported ${field}: ${value}`, { field, value, available: this.list().map((c) => c.chainId) });
    }
    throw badRequest(`${field} ${chainId} (${network.name}) is not available on the ${this.config.ENVIRONMENT} deployment`, {
      field,
      chainId,
      available: this.list().map((c) => c.chainId),
    });
  }

  destroy(): void {
    for (const chain of this.chains.values()) {
      chain.blocks.destroy();
      chain.provider.destroy();
    }
  }
}

/** A chain outside the spec's table that the operator configured: described by its deployment file. */
function operatorNetwork(chainId: number, deployment: Deployment): Network {
  return {
    chainId,
    name: deployment.chainName,
    hexCode: chainId.toString(16),
    environment: "listed",
    currencyName: deployment.currencyName,
    blockExplorerUrl: deployment.blockExplorerUrl,
  };
}
