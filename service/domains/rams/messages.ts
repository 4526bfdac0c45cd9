import { ZeroAddress, ZeroHash } from "ethers";
import type { Chain } from "../../chains/registry";
import { badRequest } from "../../errors";
import { chainNow, complianceRef, registryRef, type ContractRef } from "./on-chain";

/**
 * The ERC-8226 typed-data messages a principal signs (GrantMandate, ExtendMandate, RevokeMandate, SetOperator), and the
 * grant's parameters with their defaults: what a RAMS write prepares and what GET /rams/typed-data/* shows, built once.
 */

/** A grant as a request states it (the grant-mandate body, or the typed-data query): amounts as decimal strings. */
export interface GrantInput {
  agentMandateAddress?: string;
  agent: string;
  principal: string;
  validFrom?: number;
  validUntil: number;
  complianceProvider?: string;
  complianceProviderAddress?: string;
  identityRef: string;
  asset: string;
  maxTransactionValue: string | bigint;
  maxCumulativeValue: string | bigint;
  metadata?: string;
  actions: string[];
}

/** GrantMandateParams without the deadline, as the registry stores them. */
export interface GrantParams {
  agent: string;
  validFrom: number;
  validUntil: number;
  principal: string;
  complianceProvider: string;
  identityRef: string;
  asset: string;
  maxTransactionValue: bigint;
  maxCumulativeValue: bigint;
  metadata: string;
  actions: string[];
}

/** The registry and the parameters a grant (or its typed data) names, defaults applied; refuses the input rules. */
export async function grantParams(
  chain: Chain,
  b: GrantInput,
): Promise<{ registry: ContractRef; provider: ContractRef; params: GrantParams; now: number }> {
  const registry = registryRef(chain, b.agentMandateAddress);
  const providerField = b.complianceProvider ? "complianceProvider" : "complianceProviderAddress";
  const provider = complianceRef(chain, b.complianceProvider ?? b.complianceProviderAddress, providerField);
  for (const field of ["agent", "principal", "asset"] as const) {
    if (b[field] === ZeroAddress) throw badRequest(`${field} must not be the zero address`, { field });
  }
  if (provider.address === ZeroAddress)
    throw badRequest(`${providerField} must not be the zero address`, { field: providerField });
  const validFrom = b.validFrom ?? 0;
  const now = await chainNow(chain);
  if (b.validUntil <= now)
    throw badRequest(`validUntil ${b.validUntil} must be after now (chain time ${now})`, { field: "validUntil", now });
  if (b.validUntil <= validFrom)
    throw badRequest(`validUntil ${b.validUntil} must be after validFrom ${validFrom}`, { field: "validUntil" });
  const params: GrantParams = {
    agent: b.agent,
    validFrom,
    validUntil: b.validUntil,
    principal: b.principal,
    complianceProvider: provider.address,
    identityRef: b.identityRef,
    asset: b.asset,
    maxTransactionValue: BigInt(b.maxTransactionValue),
    maxCumulativeValue: BigInt(b.maxCumulativeValue),
    metadata: b.metadata ?? ZeroHash,
    actions: b.actions,
  };
  return { registry, provider, params, now };
}

/** The GrantMandate typed-data message of these parameters. */
export function grantMessage(p: GrantParams, nonce: bigint, deadline: bigint) {
  return {
    agent: p.agent,
    validFrom: String(p.validFrom),
    validUntil: String(p.validUntil),
    principal: p.principal,
    complianceProvider: p.complianceProvider,
    identityRef: p.identityRef,
    asset: p.asset,
    maxTransactionValue: p.maxTransactionValue.toString(),
    maxCumulativeValue: p.maxCumulativeValue.toString(),
    metadata: p.metadata,
    actions: p.actions,
    nonce: nonce.toString(),
    deadline: deadline.toString(),
  };
}

/** The ExtendMandate message of a pair, for a nonce and deadline. */
export const extendMessage =
  (agent: string, principal: string, newValidUntil: number) => (nonce: bigint, deadline: bigint) => ({
    agent,
    principal,
    newValidUntil: String(newValidUntil),
    nonce: nonce.toString(),
    deadline: deadline.toString(),
  });

/** The RevokeMandate message of a pair, for a nonce and deadline. */
export const revokeMessage = (agent: string, principal: string) => (nonce: bigint, deadline: bigint) => ({
  agent,
  principal,
  nonce: nonce.toString(),
  deadline: deadline.toString(),
});

/** The SetOperator message of a principal and operator, for a nonce and deadline. */
export const operatorMessage =
  (principal: string, operator: string, approved: boolean) => (nonce: bigint, deadline: bigint) => ({
    principal,
    operator,
    approved,
    nonce: nonce.toString(),
    deadline: deadline.toString(),
  });
