import { JsonRpcProvider, type Wallet } from "ethers";
import type { LocalChain } from "../../scripts/lib/local-chain";
import type { Deployment } from "../../service/chains/deployments";
import type { RpcFaultProxy } from "../helpers/rpc-faults";
import type { ApiClient } from "../helpers/service";

/**
 * Stops and resumes a chain's block production, whatever its mode: instant (a block per transaction, plus idle blocks)
 * or interval (a block every N seconds, like the rehearsal network). Scenarios that must decide what a block holds
 * (a dropped transaction, a fee spike, a reorg) hold mining, mine by hand, then resume.
 */
export class MiningControl {
  private held = false;
  constructor(
    readonly chain: LocalChain,
    /** A chain that keeps a base-fee floor of its own (the rehearsal's Base Sepolia): spikes go through it. */
    private readonly floor?: { set(wei: bigint): void; normal: bigint },
  ) {}

  private rpc(method: string, params: unknown[] = []): Promise<unknown> {
    return this.chain.provider.request({ method, params });
  }

  async hold(): Promise<void> {
    if (this.held) return;
    this.held = true;
    if (this.chain.blockTime > 0) await this.rpc("evm_setIntervalMining", [0]);
    await this.rpc("evm_setAutomine", [false]);
  }

  /** Mines `n` blocks, each with what the pool holds (subject to the base fee), optionally at a set base fee. */
  async mine(n = 1, baseFeePerGas?: bigint): Promise<void> {
    for (let i = 0; i < n; i++) {
      if (baseFeePerGas !== undefined) {
        this.floor?.set(baseFeePerGas);
        await this.rpc("hardhat_setNextBlockBaseFeePerGas", ["0x" + baseFeePerGas.toString(16)]);
      }
      await this.rpc("evm_mine");
    }
    if (baseFeePerGas !== undefined) this.floor?.set(this.floor.normal);
  }

  async resume(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    if (this.chain.blockTime > 0) {
      await this.rpc("evm_setIntervalMining", [Math.round(this.chain.blockTime * 1000)]);
    } else {
      await this.rpc("evm_setAutomine", [true]);
      await this.rpc("evm_mine"); // what waited in the pool
    }
  }

  /** Hashes of the transactions in the pool, not mined yet. */
  async pending(): Promise<string[]> {
    const block = (await this.rpc("eth_getBlockByNumber", ["pending", false])) as { transactions?: string[] } | null;
    return block?.transactions ?? [];
  }

  async drop(hash: string): Promise<boolean> {
    return (await this.rpc("hardhat_dropTransaction", [hash])) as boolean;
  }

  async snapshot(): Promise<string> {
    return (await this.rpc("evm_snapshot")) as string;
  }

  async revert(id: string): Promise<void> {
    if (!(await this.rpc("evm_revert", [id]))) throw new Error(`snapshot ${id} could not be reverted`);
  }

  async head(): Promise<number> {
    return Number(await this.rpc("eth_blockNumber"));
  }

  async baseFee(): Promise<bigint> {
    const block = (await this.rpc("eth_getBlockByNumber", ["latest", false])) as { baseFeePerGas?: string };
    return BigInt(block.baseFeePerGas ?? "0x0");
  }
}

/** One chain as a scenario sees it: the fault proxy the service talks through, direct access, mining control. */
export interface ChaosChain {
  chainId: number;
  chain: LocalChain;
  proxy: RpcFaultProxy;
  /** Straight to the chain (the faults are between the service and the chain only). */
  provider: JsonRpcProvider;
  mining: MiningControl;
  deployment: Deployment;
}

/** Everything a scenario acts with. */
export interface ChaosWorld {
  /** The service (no key). */
  api: ApiClient;
  /** A key for client-signed operations (credits enough for every scenario). */
  apiKey: string;
  base: ChaosChain;
  /**
   * The faucet's chain (Sepolia, no faults): its claims are paid on `base`, so their payments are settled after them,
   * in settlement batches, through the faults.
   */
  faucet: { provider: JsonRpcProvider; bkn: string };
  /**
   * Whitelisted signers for client-signed operations, one per operation running at once (a wallet's operations
   * prepared together would share a nonce); a payer with USDC for relayed ones; the agents' wallet.
   */
  signers: Wallet[];
  payer: Wallet;
  agentWallet: string;
  /** The confirmations the service counts on the payment chain. */
  confirmations: number;
  /** Seconds between blocks when nothing holds mining (0: instant). */
  blockTime: number;
  /** How long an operation may take to reach a terminal status before it counts as stuck. */
  opDeadlineMs: number;
}

export function directProvider(chain: LocalChain): JsonRpcProvider {
  return new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 100 });
}
