import fs from "node:fs";
import { readDeployment } from "../../chains/deployments";

/**
 * What the stdio server holds fixed for its session, so that a service that changes its answers cannot point the
 * wallet elsewhere: the contracts of each chain (from the package's deployment files when it has one for the chain,
 * else the first addresses the service answered), each security token's addresses and decimals (the first answer),
 * each principal's executor and each agent token's decimals (the first seen). A later answer that differs is refused:
 * a deployment does not move during a session.
 */

/** The contracts of one chain the methods call, lower-case. */
export interface ChainContracts {
  TokenFactory?: string;
  AgentTokenFactory?: string;
  IdentityRegistry?: string;
  ReputationRegistry?: string;
  AgentMandate?: string;
  ComplianceProvider?: string;
  USDC?: string;
  USDT?: string;
  BKN?: string;
  /** Where they come from: the package's deployment file, or the service's first answer. */
  source: "file" | "service";
}

export interface PinnedToken {
  symbol: string;
  chainId: number;
  address: string;
  decimals: number;
  escrow: string;
  paymentToken: { symbol: string; address: string; decimals: number };
}

/** The service's reads the pins are taken from (the tools get_network_info, get_tokenizer_info, get_token_info). */
export type ServiceRead = (tool: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

export class PinError extends Error {}

const lower = (v: unknown) => (typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : undefined);

/** NetworkInfo's fields → the deployment's contract names. */
const NETWORK_FIELDS: Record<string, Exclude<keyof ChainContracts, "source">> = {
  factoryAddress: "TokenFactory",
  agentTokenFactoryAddress: "AgentTokenFactory",
  identityRegistryAddress: "IdentityRegistry",
  reputationRegistryAddress: "ReputationRegistry",
  agentMandateAddress: "AgentMandate",
  complianceProviderAddress: "ComplianceProvider",
  USDCAddress: "USDC",
  USDTAddress: "USDT",
  BKNAddress: "BKN",
};

/** The decimals of a payment asset by symbol: USDC is 6 everywhere, USDT 6 but on BNB Smart Chain (18). */
export const paymentDecimals = (symbol: string, chainId: number) => (symbol === "USDC" || chainId !== 56 ? 6 : 18);

export class Pins {
  private readonly chains = new Map<number, ChainContracts>();
  private readonly tokens = new Map<string, PinnedToken>();
  private readonly executors = new Map<string, string>();
  private readonly agentTokens = new Map<string, number>();

  constructor(
    private readonly read: ServiceRead,
    deploymentsDir: string,
  ) {
    for (const file of fs.existsSync(deploymentsDir) ? fs.readdirSync(deploymentsDir) : []) {
      const chainId = /^(\d+)\.json$/.exec(file)?.[1];
      if (!chainId) continue;
      const deployment = readDeployment(deploymentsDir, Number(chainId));
      if (!deployment) continue;
      const c = deployment.contracts;
      this.chains.set(deployment.chainId, {
        source: "file",
        ...Object.fromEntries(
          Object.values(NETWORK_FIELDS).flatMap((name) => (c[name] ? [[name, c[name].toLowerCase()]] : [])),
        ),
      });
    }
  }

  /** The chains pinned from deployment files at start. */
  fileChains(): number[] {
    return [...this.chains].filter(([, c]) => c.source === "file").map(([id]) => id);
  }

  /**
   * The contracts of `chainId`: the deployment file's, else the service's answer (the first one, then held to it).
   * The service is asked every time there is no file, so that a change during the session is seen and refused.
   */
  async contracts(chainId: number): Promise<ChainContracts> {
    const pinned = this.chains.get(chainId);
    if (pinned?.source === "file") return pinned;
    const answer = await this.read("get_network_info", { chainId });
    const seen: ChainContracts = { source: "service" };
    for (const [field, name] of Object.entries(NETWORK_FIELDS)) {
      const address = lower(answer[field]);
      if (address) seen[name] = address;
    }
    if (!pinned) {
      this.chains.set(chainId, seen);
      return seen;
    }
    for (const name of Object.values(NETWORK_FIELDS))
      if (seen[name] !== pinned[name])
        throw new PinError(
          `the service's ${name} on chain ${chainId} changed during this session (${pinned[name] ?? "none"} → ${seen[name] ?? "none"})`,
        );
    return pinned;
  }

  /** A security token by symbol: its addresses (get_tokenizer_info) and decimals (get_token_info), first answers. */
  async token(symbol: string): Promise<PinnedToken> {
    const pinned = this.tokens.get(symbol);
    if (pinned) return pinned;
    const [info, record] = await Promise.all([
      this.read("get_tokenizer_info", { tokenSymbol: symbol }),
      this.read("get_token_info", { tokenSymbol: symbol }),
    ]);
    const payment = record.paymentToken as { symbol?: string; decimals?: number } | undefined;
    const token: PinnedToken = {
      symbol,
      chainId: Number(info.chainId),
      address: lower(info.tokenAddress) ?? "",
      decimals: Number(record.allowedTokenDecimals),
      escrow: lower(info.escrowAddress) ?? "",
      paymentToken: {
        symbol: typeof info.paymentTokenSymbol === "string" ? info.paymentTokenSymbol : String(payment?.symbol),
        address: lower(info.paymentTokenAddress) ?? "",
        decimals: Number(payment?.decimals),
      },
    };
    if (!token.address || !Number.isInteger(token.decimals) || !Number.isInteger(token.paymentToken.decimals))
      throw new PinError(`the service's record of ${symbol} lacks its address or decimals`);
    this.tokens.set(symbol, token);
    return token;
  }

  /** The executor a principal acts through on a chain: the one named, or the first one seen (then held to it). */
  executor(chainId: number, principal: string, seen: string): string {
    const key = `${chainId}:${principal.toLowerCase()}`;
    const pinned = this.executors.get(key);
    if (pinned && pinned !== seen.toLowerCase())
      throw new PinError(`the executor of ${principal} changed during this session (${pinned} → ${seen})`);
    this.executors.set(key, seen.toLowerCase());
    return seen.toLowerCase();
  }

  /** Remembers an agent token's decimals (the request that created it said them). */
  rememberAgentToken(address: string, decimals: number): void {
    this.agentTokens.set(address.toLowerCase(), decimals);
  }

  agentTokenDecimals(address: string): number | undefined {
    return this.agentTokens.get(address.toLowerCase());
  }
}
