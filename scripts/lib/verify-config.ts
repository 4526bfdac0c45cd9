import { networkById } from "../../service/chains/networks";

/** Etherscan's multichain API (v2): one key for every Etherscan-family explorer, the chain named by `chainid`. */
export const ETHERSCAN_V2_API_URL = "https://api.etherscan.io/v2/api";

/** The hardhat.config.ts networks whose contracts `npx hardhat verify` / scripts/verify.ts publish, by chain id. */
const VERIFIED_NETWORKS = { sepolia: 11155111, baseSepolia: 84532, base: 8453 } as const;

export interface EtherscanChain {
  network: string;
  chainId: number;
  urls: { apiURL: string; browserURL: string };
}

/**
 * `etherscan` of hardhat.config.ts (@nomicfoundation/hardhat-verify): the Etherscan API key from ETHERSCAN_API_KEY
 * (a single key, so the plugin uses the v2 API for every chain), and each network's explorer stated here, from the
 * network table (service/chains/networks.ts: Sepolia → sepolia.etherscan.io, Base Sepolia → sepolia.basescan.org),
 * so the explorer a verification links to is the one the API's own responses name.
 */
export function etherscanConfig(env: NodeJS.ProcessEnv = process.env): {
  apiKey: string;
  customChains: EtherscanChain[];
} {
  return {
    apiKey: env.ETHERSCAN_API_KEY ?? "",
    customChains: Object.entries(VERIFIED_NETWORKS).map(([network, chainId]) => ({
      network,
      chainId,
      urls: { apiURL: ETHERSCAN_V2_API_URL, browserURL: networkById(chainId)!.blockExplorerUrl },
    })),
  };
}
