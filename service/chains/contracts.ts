import { Interface, type InterfaceAbi } from "ethers";
import {
  AgentTokenFactory__factory,
  AgentToken__factory,
  BKN__factory,
  SecurityToken__factory,
  StoEscrow__factory,
  TokenFactory__factory,
  USDC__factory,
  USDT__factory,
} from "../../typechain-types";

/** Contract interfaces (ABIs from TypeChain) used to encode calls and decode events and errors. */
export const securityTokenInterface = SecurityToken__factory.createInterface();
export const stoEscrowInterface = StoEscrow__factory.createInterface();
export const tokenFactoryInterface = TokenFactory__factory.createInterface();
export const usdcInterface = USDC__factory.createInterface();
export const bknInterface = BKN__factory.createInterface();
export const agentTokenFactoryInterface = AgentTokenFactory__factory.createInterface();

/** Every custom error any of our contracts can raise, for decoding revert data. */
const errorInterface = new Interface(
  dedupe([
    SecurityToken__factory.abi,
    StoEscrow__factory.abi,
    TokenFactory__factory.abi,
    USDC__factory.abi,
    USDT__factory.abi,
    BKN__factory.abi,
    AgentToken__factory.abi,
    AgentTokenFactory__factory.abi,
  ]),
);

function dedupe(abis: InterfaceAbi[]): InterfaceAbi {
  const seen = new Set<string>();
  const fragments: unknown[] = [];
  for (const abi of abis) {
    for (const fragment of abi as { type: string; name?: string; inputs?: { type: string }[] }[]) {
      if (fragment.type !== "error") continue;
      const signature = `${fragment.name}(${(fragment.inputs ?? []).map((i) => i.type).join(",")})`;
      if (seen.has(signature)) continue;
      seen.add(signature);
      fragments.push(fragment);
    }
  }
  return fragments as InterfaceAbi;
}

/** "ErrorName(arg, …)" for revert data of our contracts, Error(string) and Panic; undefined when unknown. */
export function decodeRevert(data: string | undefined | null): string | undefined {
  if (!data || data === "0x") return undefined;
  try {
    const parsed = errorInterface.parseError(data);
    if (parsed) return `${parsed.name}(${parsed.args.map((a) => String(a)).join(", ")})`;
  } catch {
    // fall through to the standard encodings
  }
  try {
    const std = new Interface(["error Error(string)", "error Panic(uint256)"]).parseError(data);
    if (std) return std.name === "Error" ? String(std.args[0]) : `Panic(${std.args[0]})`;
  } catch {
    return undefined;
  }
  return undefined;
}

/** Digs the revert data out of an ethers or JSON-RPC error. */
export function revertDataOf(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const visit = (e: unknown): string | undefined => {
    if (!e || typeof e !== "object" || seen.has(e)) return undefined;
    seen.add(e);
    const o = e as Record<string, unknown>;
    if (typeof o.data === "string" && /^0x[0-9a-fA-F]*$/.test(o.data) && o.data.length >= 10) return o.data;
    for (const key of ["error", "info", "cause", "data"]) {
      const found = visit(o[key]);
      if (found) return found;
    }
    return undefined;
  };
  return visit(error);
}
