import { contractAt } from "../../chains/contract-at";
import { getAddress } from "ethers";
import type { Chain } from "../../chains/registry";
import { ApiError, badRequest } from "../../errors";
import { AgentExecutor__factory } from "../../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { AgentMandate__factory } from "../../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { ComplianceProvider__factory } from "../../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";
import { assertOwnContract } from "./contract-code";
// ERC-8226 (RAMS) contracts on chain: which contract a call uses, reading from it, the chain's clock and the signature
// deadlines measured against it; for writes and reads alike.

/** RAMS runs on Sepolia only, in both environments (NETWORKS' alsoServes). */
export const RAMS_CHAIN_ID = 11155111;

/** A signature deadline is at most this far ahead of the chain's clock; the typed-data default is one hour. */
export const MAX_DEADLINE_SECONDS = 30 * 24 * 3600;
export const DEFAULT_DEADLINE_SECONDS = 3600;

/** One of the RAMS contracts a call uses: the chain's configured default, or the address the client sent. */
export interface ContractRef {
  address: string;
  label: "AgentMandate" | "ComplianceProvider" | "AgentExecutor";
  /** The request field that named it (absent: the chain's default). */
  field?: string;
}

export function registryRef(chain: Chain, override?: string, field = "agentMandateAddress"): ContractRef {
  return override
    ? { address: getAddress(override), label: "AgentMandate", field }
    : { address: chain.deployment.contracts.AgentMandate, label: "AgentMandate" };
}

export function complianceRef(chain: Chain, override?: string, field = "complianceProviderAddress"): ContractRef {
  return override
    ? { address: getAddress(override), label: "ComplianceProvider", field }
    : { address: chain.deployment.contracts.ComplianceProvider, label: "ComplianceProvider" };
}

export const mandateAt = (chain: Chain, ref: ContractRef) =>
  contractAt(AgentMandate__factory, ref.address, chain.provider);
export const complianceAt = (chain: Chain, ref: ContractRef) =>
  contractAt(ComplianceProvider__factory, ref.address, chain.provider);
export const executorAt = (chain: Chain, ref: ContractRef) =>
  contractAt(AgentExecutor__factory, ref.address, chain.provider);

/**
 * Reads `what` from a RAMS contract. Failures are errors, never defaults (a default would pass for what the chain
 * holds): an address that is not such a contract is the client's 400 when it sent it (the service's 502 when it is the
 * chain's default); an RPC failure is a 502. A contract the client named is read only once its code is known to be this
 * version's own (or the operator allowed it: contract-code.ts), so no contract of the client's answers a check.
 */
export async function onChain<T>(chain: Chain, ref: ContractRef, what: string, read: () => Promise<T>): Promise<T> {
  if (ref.field) await assertOwnContract(chain, ref);
  try {
    return await read();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "CALL_EXCEPTION" || code === "BAD_DATA") {
      const bytecode = await chain.provider.getCode(ref.address).catch(() => undefined);
      const why = bytecode === "0x" ? "has no contract code" : `does not answer ${what}`;
      const message = `${ref.field ?? ref.label} ${ref.address} ${why} on chain ${chain.chainId}: it is not ${/^[AEIOU]/.test(ref.label) ? "an" : "a"} ${ref.label}`;
      if (ref.field) throw badRequest(message, { field: ref.field, contract: ref.address });
      throw new ApiError("CHAIN_READ_FAILED", message, { contract: ref.address });
    }
    throw new ApiError(
      "CHAIN_READ_FAILED",
      `Reading ${what} from ${ref.label} ${ref.address} on chain ${chain.chainId} failed: ${shortMessage(error)}`,
      {
        contract: ref.address,
      },
    );
  }
}

/** The chain's clock: the latest block's timestamp (what the next block's checks compare against, at the least). */
export async function chainNow(chain: Chain): Promise<number> {
  const block = await chain.provider.getBlock("latest");
  if (!block) throw new ApiError("CHAIN_READ_FAILED", `Chain ${chain.chainId} returned no latest block`);
  return block.timestamp;
}

export function shortMessage(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string };
  return e.shortMessage ?? e.message ?? String(error);
}

/** A signature deadline must lie ahead of the chain's clock, at most 30 days. */
export async function requireDeadline(chain: Chain, deadline: number, field = "deadline"): Promise<number> {
  const now = await chainNow(chain);
  if (deadline <= now) throw badRequest(`${field} ${deadline} has passed (chain time is ${now})`, { field, now });
  if (deadline > now + MAX_DEADLINE_SECONDS)
    throw badRequest(`${field} ${deadline} is more than 30 days after the chain's time ${now}`, { field, now });
  return now;
}
