import type { Environment } from "../config";

/** One row of the API's network table. */
export interface Network {
  chainId: number;
  name: string;
  /** The hex code clients send without 0x (docs/wire-conventions.md, Numbers, amounts and chain ids), e.g. "aa36a7". */
  hexCode: string;
  /** Which deployment serves it; "listed" networks are known but belong to neither by default. */
  environment: Environment | "listed";
  currencyName: string;
  blockExplorerUrl: string;
  /** Native or payment-chain facts used by the x402 surface. */
  x402Payments?: boolean;
  /** Method areas another environment serves on it too (RAMS runs on Sepolia in both environments). */
  alsoServes?: Partial<Record<Environment, string[]>>;
  /**
   * The network's real payment assets, which a deployment to it names instead of deploying its own: Circle's USDC
   * (EIP-3009, EIP-712 "USDC" / "2") wherever Circle issues it, Tether's USDT where Tether issues it.
   */
  paymentAssets?: { USDC?: string; USDT?: string };
  /**
   * Blocks on the canonical chain (counting the transaction's own) before a transaction counts as confirmed, unless
   * CONFIRMATIONS says otherwise: deep enough that the reorgs the network sees in practice do not undo it.
   */
  confirmations: number;
}

export const NETWORKS: readonly Network[] = [
  {
    chainId: 1,
    name: "Ethereum mainnet",
    hexCode: "1",
    environment: "production",
    currencyName: "ETH",
    blockExplorerUrl: "https://etherscan.io",
    paymentAssets: {
      USDC: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
      USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
    },
    confirmations: 12,
  },
  {
    chainId: 8453,
    name: "Base mainnet",
    hexCode: "2105",
    environment: "production",
    currencyName: "ETH",
    blockExplorerUrl: "https://basescan.org",
    x402Payments: true,
    paymentAssets: { USDC: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
    confirmations: 3,
  },
  {
    chainId: 56,
    name: "BNB Smart Chain",
    hexCode: "38",
    environment: "production",
    currencyName: "BNB",
    blockExplorerUrl: "https://bscscan.com",
    paymentAssets: { USDT: "0x55d398326f99059fF775485246999027B3197955" },
    confirmations: 15,
  },
  {
    chainId: 43114,
    name: "Avalanche C-Chain",
    hexCode: "a86a",
    environment: "production",
    currencyName: "AVAX",
    blockExplorerUrl: "https://snowtrace.io",
    paymentAssets: {
      USDC: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
      USDT: "0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7",
    },
    confirmations: 1,
  },
  {
    chainId: 137,
    name: "Polygon mainnet",
    hexCode: "89",
    environment: "listed",
    currencyName: "POL",
    blockExplorerUrl: "https://polygonscan.com",
    paymentAssets: {
      USDC: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      USDT: "0xc2132D05D31c914a87C6611C10748AEb04B58e8F",
    },
    confirmations: 20,
  },
  {
    chainId: 11155111,
    name: "Sepolia",
    hexCode: "aa36a7",
    environment: "sandbox",
    currencyName: "SepoliaETH",
    blockExplorerUrl: "https://sepolia.etherscan.io",
    alsoServes: { production: ["rams"] },
    paymentAssets: { USDC: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238" },
    confirmations: 3,
  },
  {
    chainId: 84532,
    name: "Base Sepolia",
    hexCode: "14a34",
    environment: "sandbox",
    currencyName: "ETH",
    blockExplorerUrl: "https://sepolia.basescan.org",
    x402Payments: true,
    paymentAssets: { USDC: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" },
    confirmations: 2,
  },
  {
    chainId: 80002,
    name: "Polygon Amoy",
    hexCode: "13882",
    environment: "listed",
    currencyName: "POL",
    blockExplorerUrl: "https://amoy.polygonscan.com",
    paymentAssets: { USDC: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582" },
    confirmations: 5,
  },
];

/**
 * Multicall3's canonical address, the same on every public chain (https://www.multicall3.com); local chains get the
 * project's stand-in there (scripts/lib/local-chain.ts).
 */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Confirmations on a chain outside the table (an operator's own node): one block, as a local node never reorgs. */
export const DEFAULT_CONFIRMATIONS = 1;

const byId = new Map(NETWORKS.map((n) => [n.chainId, n]));
const byHexCode = new Map(NETWORKS.map((n) => [n.hexCode, n]));

export function networkById(chainId: number): Network | undefined {
  return byId.get(chainId);
}

/**
 * Parses a chainId the way existing clients send it (docs/wire-conventions.md): a JSON number, "0x…" hex, the bare hex
 * codes of the network table ("aa36a7", "14a34", "38", …), or a decimal string. Bare codes are resolved through the
 * table first, so "38" is BNB Smart Chain (56) and "89" is Polygon (137); any other all-digit string is decimal and any
 * other string with hex letters is hex. Returns undefined when the input is not a chain id at all.
 */
export function parseChainId(input: unknown): number | undefined {
  if (typeof input === "number") return Number.isSafeInteger(input) && input > 0 ? input : undefined;
  if (typeof input === "bigint")
    return input > 0n && input <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(input) : undefined;
  if (typeof input !== "string") return undefined;
  const text = input.trim().toLowerCase();
  if (text === "") return undefined;
  let value: number;
  if (/^0x[0-9a-f]+$/.test(text)) value = parseInt(text.slice(2), 16);
  else if (byHexCode.has(text)) value = byHexCode.get(text)!.chainId;
  else if (/^[0-9]+$/.test(text)) value = parseInt(text, 10);
  else if (/^[0-9a-f]+$/.test(text)) value = parseInt(text, 16);
  else return undefined;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** "0xaa36a7" */
export function chainIdHex(chainId: number): string {
  return "0x" + chainId.toString(16);
}
