import type { Chain } from "../../chains/registry";
import { ApiError } from "../../errors";
import { complianceAt, onChain, shortMessage, type ContractRef } from "./on-chain";
// ERC-8226 (RAMS) compliance: a principal's eligibility at its ComplianceProvider and the provider's reason codes.

export interface Eligibility {
  eligible: boolean;
  reasonCode: number;
  reason: string;
  expiresAt: number;
}

export async function checkPrincipal(
  chain: Chain,
  provider: ContractRef,
  principal: string,
  identityRef: string,
): Promise<Eligibility> {
  return eligibilityOf(
    await onChain(chain, provider, "checkPrincipal", () =>
      complianceAt(chain, provider).checkPrincipal(principal, identityRef),
    ),
  );
}

function eligibilityOf([eligible, reasonCode, expiresAt]: [boolean, bigint, bigint]): Eligibility {
  const code = Number(reasonCode);
  return { eligible, reasonCode: code, reason: REASONS[code] ?? `UNKNOWN_${code}`, expiresAt: Number(expiresAt) };
}

/** What a compliance provider that reverts, has no code, or answers malformed data is taken to say at execution. */
export interface ProviderFailure {
  eligible: false;
  reasonCode: null;
  reason: "PROVIDER_FAILED";
  expiresAt: null;
}

/**
 * The principal's eligibility at a mandate's own provider, weighed as the registry weighs it at execution
 * (AgentMandate's `_eligible`): a provider that reverts, has no code or answers something that is not an answer is
 * "not eligible", PROVIDER_FAILED, as on chain; a read that failed (the RPC) is still an error, never a default.
 */
export async function eligibilityAtExecution(
  chain: Chain,
  provider: ContractRef,
  principal: string,
  identityRef: string,
): Promise<Eligibility | ProviderFailure> {
  let answer: [boolean, bigint, bigint];
  try {
    answer = await complianceAt(chain, provider).checkPrincipal(principal, identityRef);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "CALL_EXCEPTION" || code === "BAD_DATA")
      return { eligible: false, reasonCode: null, reason: "PROVIDER_FAILED", expiresAt: null };
    throw new ApiError(
      "CHAIN_READ_FAILED",
      `Reading checkPrincipal from ComplianceProvider ${provider.address} on chain ${chain.chainId} failed: ${shortMessage(error)}`,
      { contract: provider.address },
    );
  }
  return eligibilityOf(answer);
}

/** The ComplianceProvider's ReasonCode enumeration, in order (name = code). */
export const REASONS = [
  "COMPLIANT",
  "KYC_EXPIRED",
  "AML_FLAG",
  "NOT_ACCREDITED",
  "NOT_QUALIFIED",
  "JURISDICTION_BLOCKED",
  "IDENTITY_NOT_FOUND",
  "ATTESTATION_REVOKED",
  "OTHER",
] as const;
export type ReasonName = (typeof REASONS)[number];
