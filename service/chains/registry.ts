import { ConfigError, type Config } from "../config";
import { badRequest } from "../errors";
import type { Logger } from "../logger";
import { BlockWatcher } from "./blocks";
import { readDeployment, type Deployment } from "./deployments";
import { chainIdHex, DEFAULT_CONFIRMATIONS, networkById, parseChainId, type Network } from "./networks";
import { ReorgWatch } from "./reorg-watch";
import { ResilientRpcProvider, type RpcObserver } from "./rpc";

/** A chain this deployment serves: its table row, its deployed contracts and an RPC provider. */
export interface Chain {
  chainId: number;
  network: Network;
  deployment: Deployment;
  /** Its RPC URLs (RPC_URL_<chainId>, comma-separated), in the operator's order. */
  rpcUrls: string[];
  /** Every call fails over between the URLs and retries passing failures. */
  provider: ResilientRpcProvider;
  /** Blocks (counting its own) before a transaction on this chain counts as confirmed. */
  confirmations: number;
  /** The chain's head, watched while someone waits for a block (one watcher per chain). */
  blocks: BlockWatcher;
  /** Blocks of recently confirmed transactions, watched for reorgs deeper than their confirmations. */
  reorgWatch: ReorgWatch;
  /** Reorgs that took a transaction off this chain before its confirmations were reached. */
  shallowReorgs: number;
  /** The only method areas served on it (a sandbox chain a production deployment serves for RAMS); absent: all. */
  areas?: string[];
  /** Contracts (lower-case) the operator allows a RAMS call to name beyond this version's own code (RAMS_ALLOWED_CONTRACTS). */
  allowedContracts: ReadonlySet<string>;
}

/** A network is served by an environment when it belongs to it or is only "listed" (usable wherever configured). */
function servedBy(network: Network, environment: Config["ENVIRONMENT"]): boolean {
  return network.environment === environment || network.environment === "listed";
}

/**
 * The chains this deployment can act on: each chain with an RPC URL (RPC_URL_<chainId>) and a deployment file. A chain
 * of the network table (NETWORKS) is served only by its environment (or anywhere when "listed"); any other EVM chain an
 * operator configures, such as 31337 for `npx hardhat node`, is served as it is. A configured chain that cannot be
 * served (no deployment file, or a network of the other environment) stops the start with a ConfigError saying what
 * to do.
 */
export class ChainRegistry {
  private readonly chains = new Map<number, Chain>();

  constructor(
    private readonly config: Config,
    logger?: Logger,
  ) {
    const problems: string[] = [];
    for (const [chainId, rpcUrls] of config.rpcEndpoints) {
      const known = networkById(chainId);
      const areas = known && !servedBy(known, config.ENVIRONMENT) ? known.alsoServes?.[config.ENVIRONMENT] : undefined;
      if (known && !servedBy(known, config.ENVIRONMENT) && !areas) {
        problems.push(
          `RPC_URL_${chainId}: ${known.name} is a ${known.environment} network, not served with ENVIRONMENT=${config.ENVIRONMENT}; remove RPC_URL_${chainId} or set ENVIRONMENT=${known.environment}`,
        );
        continue;
      }
      const deployment = readDeployment(config.DEPLOYMENTS_DIR, chainId);
      if (!deployment) {
        problems.push(
          `RPC_URL_${chainId}: no deployment file ${chainId}.json in DEPLOYMENTS_DIR (${config.DEPLOYMENTS_DIR}); deploy there first (npx hardhat run scripts/deploy.ts) or remove RPC_URL_${chainId}`,
        );
        continue;
      }
      const network = known ?? operatorNetwork(chainId, deployment);
      const provider = new ResilientRpcProvider(
        chainId,
        rpcUrls,
        {
          attemptTimeoutMs: config.RPC_TIMEOUT_MS,
          budgetMs: config.RPC_RETRY_BUDGET_MS,
          failuresBeforeRest: 3,
          restMs: 30_000,
        },
        logger ? logFailovers(logger.child({ component: "rpc", chainId })) : undefined,
      );
      const confirmations = config.confirmationsByChain.get(chainId) ?? config.CONFIRMATIONS ?? network.confirmations;
      const blocks = new BlockWatcher(provider);
      const reorgWatch = new ReorgWatch(provider, blocks, Math.max(config.REORG_WATCH_BLOCKS, confirmations));
      const allowedContracts = new Set((config.RAMS_ALLOWED_CONTRACTS ?? []).map((a) => a.toLowerCase()));
      this.chains.set(chainId, {
        chainId,
        network,
        deployment,
        rpcUrls,
        provider,
        confirmations,
        blocks,
        reorgWatch,
        shallowReorgs: 0,
        allowedContracts,
        ...(areas ? { areas } : {}),
      });
    }
    if (problems.length) {
      this.destroy();
      throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
    }
  }

  list(): Chain[] {
    return [...this.chains.values()];
  }

  find(chainId: number): Chain | undefined {
    return this.chains.get(chainId);
  }

  /**
   * Resolves a client-sent chainId (in any form clients send) to a served chain, or throws the 400 a client
   * can act on: missing, not a known network, or known but not served by this deployment.
   */
  resolve(input: unknown, field = "chainId"): Chain {
    if (input === undefined || input === null || input === "") throw badRequest(`${field} is required`, { field });
    const chainId = parseChainId(input);
    const served = chainId === undefined ? undefined : this.chains.get(chainId);
    if (served) return served;
    const network = chainId === undefined ? undefined : networkById(chainId);
    if (chainId === undefined || !network) {
      const value =
        typeof input === "object" ? JSON.stringify(input) : (input as string | number | boolean | bigint).toString();
      throw badRequest(`Unsupported ${field}: ${value}. ${this.acceptedForms(field, value)}`, {
        field,
        value,
        available: this.list().map((c) => c.chainId),
      });
    }
    throw badRequest(
      `${field} ${chainId} (${network.name}) is not available on the ${this.config.ENVIRONMENT} deployment`,
      {
        field,
        chainId,
        available: this.list().map((c) => c.chainId),
      },
    );
  }

  /**
   * What a chain id may look like, with the chains this deployment serves, and a guess when the value names one of them
   * ("sepolia", "Base Sepolia", "base-sepolia"): names are not chain ids, but the hint says which id was meant.
   */
  private acceptedForms(field: string, value: string): string {
    const served = this.list();
    const squeeze = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");
    const named = served.find((c) => squeeze(c.network.name) === squeeze(value));
    const example = served[0];
    const forms = example
      ? `a decimal number (${example.chainId}), 0x hex (${chainIdHex(example.chainId)}) or the network's hex code (${example.network.hexCode})`
      : "a decimal number, 0x hex or the network's hex code";
    const list = served.map((c) => `${c.chainId} (${c.network.name})`).join(", ");
    return `${named ? `Did you mean ${named.chainId} (${named.network.name})? ` : ""}${field} is ${forms}; this deployment serves ${list || "no chain"}`;
  }

  destroy(): void {
    for (const chain of this.chains.values()) {
      chain.reorgWatch.destroy();
      chain.blocks.destroy();
      chain.provider.destroy();
    }
  }
}

/** A chain outside the network table that the operator configured: described by its deployment file. */
function operatorNetwork(chainId: number, deployment: Deployment): Network {
  return {
    chainId,
    name: deployment.chainName,
    hexCode: chainId.toString(16),
    environment: "listed",
    currencyName: deployment.currencyName,
    blockExplorerUrl: deployment.blockExplorerUrl,
    confirmations: DEFAULT_CONFIRMATIONS,
  };
}

/** Logs a URL's failures once they make it rest (not every passing error: public providers fail all the time). */
function logFailovers(log: Logger): RpcObserver {
  return ({ endpoint, outcome, detail }) => {
    if (outcome === "ok" || outcome === "throttled") return;
    if (endpoint.failures === 3)
      log.warn(
        { endpoint: endpoint.label, outcome, detail },
        "RPC URL failing (3 in a row); retrying, other URLs first when configured",
      );
  };
}
