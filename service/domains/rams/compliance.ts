import type { Chain } from "../../chains/registry";
import { complianceAt, onChain, type ContractRef } from "./on-chain";
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
  const [eligible, reasonCode, expiresAt] = await onChain(chain, provider, "checkPrincipal", () =>
    complianceAt(chain, provider).checkPrincipal(principal, identityRef),
  );
  const code = Number(reasonCode);
  return { eligible, reasonCode: code, reason: REASONS[code] ?? `UNKNOWN_${code}`, expiresAt: Number(expiresAt) };
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
