import type { Environment } from "../config";

/** One row of the API's network table. */
export interface Network {
  chainId: number;
  name: string;
  /** The hex code clients send without 0x (WIRE-COMPAT §1.1), e.g. "aa36a7". */
  hexCode: string;
  /** Which deployment serves it; "listed" networks are known but belong to neither by default. */
  environment: Environment | "listed";
  currencyName: string;
  blockExplorerUrl: string;
  /** Native or payment-chain facts used by the x402 surface. */
  x402Payments?: boolean;
}

export const NETWORKS: readonly Network[] = [
  { chainId: 1, name: "Ethereum mainnet", hexCode: "1", environment: "production", currencyName: "ETH", blockExplorerUrl: "https://etherscan.io" },
  { chainId: 8453, name: "Base mainnet", hexCode: "2105", environment: "production", currencyName: "ETH", blockExplorerUrl: "https://basescan.org", x402Payments: true },
  { chainId: 56, name: "BNB Smart Chain", hexCode: "38", environment: "production", currencyName: "BNB", blockExplorerUrl: "https://bscscan.com" },
  { chainId: 43114, name: "Avalanche C-Chain", hexCode: "a86a", environment: "production", currencyName: "AVAX", blockExplorerUrl: "https://snowtrace.io" },
  { chainId: 137, name: "Polygon mainnet", hexCode: "89", environment: "listed", currencyName: "POL", blockExplorerUrl: "https://polygonscan.com" },
  { chainId: 11155111, name: "Sepolia", hexCode: "aa36a7", environment: "sandbox", currencyName: "SepoliaETH", blockExplorerUrl: "https://sepolia.etherscan.io" },
  { chainId: 84532, name: "Base Sepolia", hexCode: "14a34", environment: "sandbox", currencyName: "ETH", blockExplorerUrl: "https://sepolia.basescan.org", x402Payments: true },
  { chainId: 80002, name: "Polygon Amoy", hexCode: "13882", environment: "listed", currencyName: "POL", blockExplorerUrl: "https://amoy.polygonscan.com" },
];

const byId = new Map(NETWORKS.map((n) => [n.chainId, n]));
const byHexCode = new Map(NETWORKS.map((n) => [n.hexCode, n]));

export function networkById(chainId: number): Network | undefined {
  return byId.get(chainId);
}

/**
 * Parses a chainId the way existing clients send it (WIRE-COMPAT §1.1): a JSON number, "0x…" hex, the bare hex codes
 * of the network table ("aa36a7", "14a34", "38", …), or a decimal string. Bare codes are resolved through the table
 * first, so "38" is BNB Smart Chain (56) and "89" is Polygon (137); any other all-digit string is decimal and any other
 * string with hex letters is hex. Returns undefined when the input is not a chain id at all.
 */
export function parseChainId(input: unknown): number | undefined {
  if (typeof input === "number") return Number.isSafeInteger(input) && input > 0 ? input : undefined;
  if (typeof input === "bigint") return input > 0n && input <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(input) : undefined;
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
