import { getAddress, ZeroAddress } from "ethers";
import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import type { Chain } from "../../chains/registry";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { authInfo, authorize, requireRelayedSignature, ramsMethod, ramsOutcome } from "./common";
import { actions, bytes32, cap, nonZeroBytes32, ramsCommonFields, signedFields, uint48, ZERO_BYTES32 } from "./fields";
import { chainNow, checkPrincipal, complianceRef, mandateStatus, readMandate, registryRef, simulate, type ContractRef } from "../../domains/rams/mandates";

/** The mandate's parameters (API-SPEC "grant-mandate body"); also the query of GET /rams/typed-data/grant-mandate. */
export const grantFields = {
  agent: address.meta({ description: "Receives the mandate" }),
  principal: address.meta({ description: "Delegates; in direct mode must equal signerAddress" }),
  validFrom: uint48.optional().meta({ type: "integer", description: "Unix seconds (uint48); default 0 (immediate)" }),
  validUntil: uint48.meta({ type: "integer", description: "Unix seconds (uint48); after now and after validFrom" }),
  complianceProvider: address.optional().meta({ description: "Non-zero; default: the chain's ComplianceProvider" }),
  complianceProviderAddress: address.optional().meta({ description: "Alias of complianceProvider" }),
  identityRef: nonZeroBytes32.meta({ description: "Must match the principal's record at the compliance provider" }),
  asset: address.meta({ description: "The asset the mandate is scoped to" }),
  maxTransactionValue: cap,
  maxCumulativeValue: cap,
  metadata: bytes32.optional().meta({ description: "Opaque bytes32; default zero" }),
  actions,
};

const body = z.object({ ...ramsCommonFields, ...grantFields, ...signedFields });
type Body = z.infer<typeof body>;
export type GrantInput = Pick<Body, keyof typeof grantFields | "agentMandateAddress">;

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
export async function grantParams(chain: Chain, b: GrantInput): Promise<{ registry: ContractRef; provider: ContractRef; params: GrantParams; now: number }> {
  const registry = registryRef(chain, b.agentMandateAddress);
  const providerField = b.complianceProvider ? "complianceProvider" : "complianceProviderAddress";
  const provider = complianceRef(chain, b.complianceProvider ?? b.complianceProviderAddress, providerField);
  for (const field of ["agent", "principal", "asset"] as const) {
    if (b[field] === ZeroAddress) throw badRequest(`${field} must not be the zero address`, { field });
  }
  if (provider.address === ZeroAddress) throw badRequest(`${providerField} must not be the zero address`, { field: providerField });
  const validFrom = b.validFrom ?? 0;
  const now = await chainNow(chain);
  if (b.validUntil <= now) throw badRequest(`validUntil ${b.validUntil} must be after now (chain time ${now})`, { field: "validUntil", now });
  if (b.validUntil <= validFrom) throw badRequest(`validUntil ${b.validUntil} must be after validFrom ${validFrom}`, { field: "validUntil" });
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
    metadata: b.metadata ?? ZERO_BYTES32,
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

/**
 * The principal grants an agent a mandate over one asset: directly (signerAddress = principal) or with the principal's
 * EIP-712 GrantMandate signature, sent by any signer or relayed by the service (signature + deadline required).
 */
export const ramsGrantMandate = defineMethod({
  ...ramsMethod,
  name: "ramsGrantMandate",
  summary: "RAMS: grant an agent a value-capped mandate over one asset (direct by the principal, or its EIP-712 signature; relayable with a signature)",
  body,
  relayable: true,
  facadePath: "/x402/rams/grant-mandate",
  async plan(ctx, b: Body) {
    requireRelayedSignature(ctx, b, "GrantMandate");
    const { chain } = ctx;
    const { registry, provider, params, now } = await grantParams(chain, b);
    const existing = await readMandate(chain, registry, params.agent, params.principal);
    if (existing && !existing.revoked && now <= existing.validUntil) {
      throw preflightError(
        `agent ${params.agent} already holds ${mandateStatus(existing, now) === "pending" ? "a pending" : "an active"} mandate from principal ${params.principal} (valid until ${existing.validUntil}); revoke it, or let it expire, before granting again`,
        { field: "agent", reason: "MandateAlreadyActive", status: mandateStatus(existing, now) },
      );
    }
    const auth = await authorize(ctx, {
      registry,
      principal: params.principal,
      signature: b.signature,
      deadline: b.deadline,
      primaryType: "GrantMandate",
      message: (nonce, deadline) => grantMessage(params, nonce, deadline),
      operatorMayAct: false,
      action: "grant a mandate",
    });
    const eligibility = await checkPrincipal(chain, provider, params.principal, params.identityRef);
    if (!eligibility.eligible) {
      throw preflightError(
        `principal ${params.principal} is not eligible at ComplianceProvider ${provider.address} under identityRef ${params.identityRef}: ${eligibility.reason}`,
        { field: "principal", reason: eligibility.reason, reasonCode: eligibility.reasonCode },
      );
    }
    const data = agentMandateInterface.encodeFunctionData("grantMandate", [{ ...params, deadline: auth.deadline }, auth.signature]);
    await simulate(chain, { from: auth.sender, to: registry.address, data }, "grantMandate");
    return {
      signer: auth.sender,
      calls: [{ to: registry.address, data, description: `grant agent ${params.agent} a mandate of ${params.principal} over ${params.asset}` }],
      info: {
        ...authInfo(registry.address, auth),
        agentMandateAddress: registry.address,
        agent: params.agent,
        principal: params.principal,
        complianceProvider: params.complianceProvider,
        asset: getAddress(params.asset),
        validFrom: params.validFrom,
        validUntil: params.validUntil,
        maxTransactionValue: params.maxTransactionValue.toString(),
        maxCumulativeValue: params.maxCumulativeValue.toString(),
        actions: params.actions,
      },
    };
  },
  onConfirmed: ramsOutcome,
});
