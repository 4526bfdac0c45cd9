import type { EIP1193Provider, HardhatNetworkConfig, HardhatRuntimeEnvironment } from "hardhat/types";
import { createProvider } from "hardhat/internal/core/providers/construction";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";
import { callsInOrder } from "./calls-in-order";
import { MULTICALL3_ADDRESS } from "../../service/chains/networks";

/** An in-process Hardhat chain with a chosen chain id, served over JSON-RPC on 127.0.0.1. */
export interface LocalChain {
  chainId: number;
  url: string;
  port: number;
  /** The EIP-1193 provider behind the server (for evm_* helpers in tests). */
  provider: EIP1193Provider;
  /** Seconds between blocks (0: a block per transaction, mined at once). */
  blockTime: number;
  /** Switches between instant mining (0) and interval mining every `seconds` (fractions allowed, millisecond grain). */
  setBlockTime(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export interface LocalChainOptions {
  chainId: number;
  /** 0 picks a free port (tests); `npm start` uses 8545 and 8546. */
  port?: number;
  hostname?: string;
  /** Seconds between blocks; 0 (default) mines every transaction at once. See {@link LocalChain.setBlockTime}. */
  blockTime?: number;
  /**
   * Under instant mining, mine an empty block once no block has come for this many seconds (0, the default: never),
   * so the latest block's timestamp stays close to the clock while nobody sends anything, as on a network where
   * blocks keep coming. Calls that read "latest" (eth_call, x402 verification, preflight checks of start and end
   * dates) then see the present, not the moment of the last transaction. Paused while automine is off (a test
   * holding transactions in the mempool) and under interval mining (which already mines on a schedule).
   */
  idleBlockTime?: number;
  /** The genesis block's base fee in wei (default: Hardhat's, 1 gwei); EIP-1559 moves it from there with each block's gas. */
  initialBaseFeePerGas?: bigint;
  /** Gas limit of every block (default: Hardhat's, 60,000,000); the base fee rises only when blocks are more than half full. */
  blockGasLimit?: number;
  /**
   * The genesis accounts as private keys and balances in wei (default: the 20 Hardhat test accounts with 10,000 ETH
   * each). An account given balance 0 starts empty, as a fresh wallet on a public network does.
   */
  accounts?: { privateKey: string; balance: bigint }[];
}

/** Milliseconds of a block time in seconds; refuses what a chain cannot do. */
export function blockTimeMs(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`block time must be a number of seconds >= 0, got ${seconds}`);
  const ms = Math.round(seconds * 1000);
  if (seconds > 0 && ms < 1) throw new Error(`block time must be at least 0.001 s, got ${seconds}`);
  return ms;
}

/**
 * Instant mining (0 ms) or interval mining every `ms` on a chain's provider (in this process, or over JSON-RPC).
 * Answers `ms`.
 */
export async function switchMining(provider: Pick<EIP1193Provider, "request">, ms: number): Promise<number> {
  if (ms === 0) {
    await provider.request({ method: "evm_setIntervalMining", params: [0] });
    await provider.request({ method: "evm_setAutomine", params: [true] });
    // Whatever waited in the mempool under interval mining is mined now.
    await provider.request({ method: "evm_mine", params: [] });
  } else {
    await provider.request({ method: "evm_setAutomine", params: [false] });
    await provider.request({ method: "evm_setIntervalMining", params: [ms] });
  }
  return ms;
}

/**
 * Starts an EDR (Hardhat network) chain in this process and serves it over HTTP, like `hardhat node` but with any
 * chain id and any number of chains per process. It has the well-known Hardhat test accounts, funded with 10,000 ETH,
 * and Multicall3 at its canonical address.
 *
 * Blocks carry the wall clock's time, like a real network's: the chain starts at now, and a block mined
 * within the same second as its parent shares its timestamp (`allowBlocksWithSameTimestamp`) instead of being pushed
 * one second ahead, so chain time never runs ahead of the clock however many transactions are mined; with
 * `idleBlockTime`, an idle chain's latest block does not fall behind it either.
 * (`evm_increaseTime` / `evm_setNextBlockTimestamp` still move it on purpose.)
 */
export async function startLocalChain(hre: HardhatRuntimeEnvironment, options: LocalChainOptions): Promise<LocalChain> {
  const hostname = options.hostname ?? "127.0.0.1";
  const networkName = "hardhat";
  blockTimeMs(options.blockTime ?? 0); // bad times fail before anything starts
  const idleMs = blockTimeMs(options.idleBlockTime ?? 0);
  const network: Partial<HardhatNetworkConfig> = {
    ...hre.config.networks.hardhat,
    chainId: options.chainId,
    loggingEnabled: false,
    allowBlocksWithSameTimestamp: true,
    mining: { ...hre.config.networks.hardhat.mining, auto: true, interval: 0 },
    ...(options.initialBaseFeePerGas !== undefined
      ? { initialBaseFeePerGas: Number(options.initialBaseFeePerGas) }
      : {}),
    ...(options.blockGasLimit !== undefined ? { blockGasLimit: options.blockGasLimit } : {}),
    ...(options.accounts
      ? { accounts: options.accounts.map((a) => ({ privateKey: a.privateKey, balance: a.balance.toString() })) }
      : {}),
  };
  // No initial date: EDR then starts the chain at its own "now". Hardhat resolves the config's default once, when the
  // process loads its config, so a chain started minutes later (a test's own sandbox) would begin, and stay, minutes
  // behind the wall clock; and a date taken here would be behind by the time the provider takes to build (~1 s).
  delete network.initialDate;
  const config = {
    ...hre.config,
    networks: { ...hre.config.networks, [networkName]: network as HardhatNetworkConfig },
  };
  const provider = (await createProvider(config, networkName, hre.artifacts)) as unknown as EIP1193Provider;
  // Real chains have Multicall3 at its canonical address; give local chains the same.
  const multicall = await hre.artifacts.readArtifact("Multicall3");
  await provider.request({ method: "hardhat_setCode", params: [MULTICALL3_ADDRESS, multicall.deployedBytecode] });
  // A batch's calls answered in order, as geth answers them (a receipt asked after a send sees what the send mined).
  const server = new JsonRpcServer({ hostname, port: options.port ?? 0, provider: callsInOrder(provider) });
  const address = await server.listen();
  let idleTimer: NodeJS.Timeout | undefined;
  const chain: LocalChain = {
    chainId: options.chainId,
    port: address.port,
    url: `http://${hostname}:${address.port}`,
    provider,
    blockTime: 0,
    async setBlockTime(seconds: number) {
      chain.blockTime = (await switchMining(provider, blockTimeMs(seconds))) / 1000;
    },
    close: async () => {
      // Stop the timers first so nothing mines into a closed server.
      if (idleTimer) clearInterval(idleTimer);
      if (chain.blockTime > 0)
        await provider.request({ method: "evm_setIntervalMining", params: [0] }).catch(() => undefined);
      await server.close();
    },
  };
  if (options.blockTime) await chain.setBlockTime(options.blockTime);
  if (idleMs > 0) {
    // Watch the head a few times per idle period; mine once it has not moved for idleMs.
    let head = -1;
    let movedAt = Date.now();
    let ticking = false;
    idleTimer = setInterval(
      () => {
        if (ticking || chain.blockTime > 0) return;
        ticking = true;
        void (async () => {
          const current = Number(await provider.request({ method: "eth_blockNumber", params: [] }));
          if (current !== head) {
            head = current;
            movedAt = Date.now();
            return;
          }
          // Idle, and transactions are mined as they come (automine): nothing waits in a mempool this block would take.
          if (
            Date.now() - movedAt >= idleMs &&
            (await provider.request({ method: "hardhat_getAutomine", params: [] })) === true
          ) {
            await provider.request({ method: "evm_mine", params: [] });
          }
        })()
          .catch(() => undefined)
          .finally(() => (ticking = false));
      },
      Math.max(50, Math.min(250, Math.floor(idleMs / 4))),
    );
    idleTimer.unref();
  }
  return chain;
}
