import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { EIP1193Provider } from "hardhat/types";
import { createProvider } from "hardhat/internal/core/providers/construction";
import { JsonRpcServer } from "hardhat/internal/hardhat-network/jsonrpc/server";

export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** An in-process Hardhat chain with a chosen chain id, served over JSON-RPC on 127.0.0.1. */
export interface LocalChain {
  chainId: number;
  url: string;
  port: number;
  /** The EIP-1193 provider behind the server (for evm_* helpers in tests). */
  provider: EIP1193Provider;
  close(): Promise<void>;
}

export interface LocalChainOptions {
  chainId: number;
  /** 0 picks a free port (tests); `npm start` uses 8545 and 8546. */
  port?: number;
  hostname?: string;
}

/**
 * Starts an EDR (Hardhat network) chain in this process and serves it over HTTP, like `hardhat node` but with any
 * chain id and any number of chains per process. It has the well-known Hardhat test accounts, funded with 10,000 ETH,
 * and Multicall3 at its canonical address.
 */
export async function startLocalChain(hre: HardhatRuntimeEnvironment, options: LocalChainOptions): Promise<LocalChain> {
  const hostname = options.hostname ?? "127.0.0.1";
  const networkName = "hardhat";
  const config = {
    ...hre.config,
    networks: {
      ...hre.config.networks,
      [networkName]: { ...hre.config.networks.hardhat, chainId: options.chainId, loggingEnabled: false },
    },
  };
  const provider = (await createProvider(config, networkName, hre.artifacts)) as unknown as EIP1193Provider;
  // Real chains have Multicall3 at its canonical address; give local chains the same.
  const multicall = await hre.artifacts.readArtifact("Multicall3");
  await provider.request({ method: "hardhat_setCode", params: [MULTICALL3_ADDRESS, multicall.deployedBytecode] });
  const server = new JsonRpcServer({ hostname, port: options.port ?? 0, provider });
  const address = await server.listen();
  return {
    chainId: options.chainId,
    port: address.port,
    url: `http://${hostname}:${address.port}`,
    provider,
    close: () => server.close(),
  };
}
