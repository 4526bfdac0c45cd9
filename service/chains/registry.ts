import { JsonRpcProvider, Network as EthersNetwork } from "ethers";
import type { Config } from "../config";
import { badRequest } from "../errors";
import { readDeployment, type Deployment } from "./deployments";
import { networkById, parseChainId, type Network } from "./networks";

/** A chain this deployment serves: its table row, its deployed contracts and an RPC provider. */
export interface Chain {
  chainId: number;
  network: Network;
  deployment: Deployment;
  rpcUrl: string;
  provider: JsonRpcProvider;
}

/** A network is served by an environment when it belongs to it or is only "listed" (usable wherever configured). */
function servedBy(network: Network, environment: Config["ENVIRONMENT"]): boolean {
  return network.environment === environment || network.environment === "listed";
}

/** The chains this deployment can act on: in its environment, with an RPC URL and a deployment file. */
export class ChainRegistry {
  private readonly chains = new Map<number, Chain>();

  constructor(private readonly config: Config) {
    for (const [chainId, rpcUrl] of config.rpcUrls) {
      const network = networkById(chainId);
      if (!network || !servedBy(network, config.ENVIRONMENT)) continue;
      const deployment = readDeployment(config.DEPLOYMENTS_DIR, chainId);
      if (!deployment) continue;
      const provider = new JsonRpcProvider(rpcUrl, chainId, {
        staticNetwork: EthersNetwork.from(chainId),
        pollingInterval: 500,
        batchMaxCount: 20,
        // Preflight checks read state a previous request just changed: never answer from ethers' 250 ms cache.
        cacheTimeout: -1,
      });
      this.chains.set(chainId, { chainId, network, deployment, rpcUrl, provider });
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
    const network = chainId === undefined ? undefined : networkById(chainId);
    if (chainId === undefined || !network) {
      throw badRequest(`Unsupported ${field}: ${String(input)}`, { field, value: String(input) });
    }
    const chain = this.chains.get(chainId);
    if (!chain) {
      throw badRequest(`${field} ${chainId} (${network.name}) is not available on the ${this.config.ENVIRONMENT} deployment`, {
        field,
        chainId,
        available: this.list().map((c) => c.chainId),
      });
    }
    return chain;
  }

  destroy(): void {
    for (const chain of this.chains.values()) chain.provider.destroy();
  }
}
