import { z } from "zod";
import { complianceProviderInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { ramsCommonFields, reason } from "./fields";
import { REASONS } from "../../domains/rams/compliance";
import { complianceAt, complianceRef, onChain } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

const body = z.object({
  ...ramsCommonFields,
  principal: address.meta({ description: "Must hold an active eligibility record" }),
  reason: reason.optional().meta({ description: `A name (${REASONS.join(", ")}) or a code 0-8; default OTHER` }),
  complianceProviderAddress: address.optional().meta({ description: "Overrides the chain's ComplianceProvider" }),
});
type Body = z.infer<typeof body>;

/**
 * The compliance provider's owner revokes a principal's active eligibility record with a reason. Mandates already
 * granted stay as they are on-chain; the service's execution pre-check then fails on compliance. Always client-signed.
 */
export const ramsRevokePrincipal = defineMethod({
  ...ramsMethod,
  name: "ramsRevokePrincipal",
  summary:
    "RAMS: revoke a principal's eligibility at the ComplianceProvider with a reason (owner only; always client-signed)",
  body,
  facadePath: "/x402/rams/revoke-principal",
  async plan(ctx, b: Body) {
    const signer = requireClientSigned(ctx, "ramsRevokePrincipal");
    const provider = complianceRef(ctx.chain, b.complianceProviderAddress);
    const owner = await onChain(ctx.chain, provider, "owner", () => complianceAt(ctx.chain, provider).owner());
    if (owner !== signer) {
      throw preflightError(
        `signerAddress ${signer} is not the ComplianceProvider owner (${owner}); only the owner may revoke principals`,
        { field: "signerAddress", owner },
      );
    }
    const code = b.reason ?? REASONS.indexOf("OTHER");
    const data = complianceProviderInterface.encodeFunctionData("revokePrincipal", [b.principal, code]);
    // The record's identityRef is not readable, so the active-record rule is checked by the provider itself.
    try {
      await simulate(ctx.chain, { from: signer, to: provider.address, data }, "revokePrincipal");
    } catch (error) {
      if ((error as { details?: { reason?: string } }).details?.reason?.startsWith("NotActive(")) {
        throw preflightError(
          `principal ${b.principal} has no active eligibility record at ComplianceProvider ${provider.address} (never granted, or already revoked)`,
          {
            field: "principal",
            reason: "NotActive",
          },
        );
      }
      throw error;
    }
    return {
      signer,
      calls: [
        { to: provider.address, data, description: `revoke the eligibility of ${b.principal} (${REASONS[code]})` },
      ],
      info: {
        contract: provider.address,
        complianceProviderAddress: provider.address,
        mode: "direct",
        principal: b.principal,
        reason: REASONS[code],
        reasonCode: code,
      },
    };
  },
  onConfirmed: ramsOutcome,
});
