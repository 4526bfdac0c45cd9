import { ZeroAddress } from "ethers";
import { z } from "zod";
import { complianceProviderInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { nonZeroBytes32, ramsCommonFields, uint48 } from "./fields";
import { chainNow, complianceAt, complianceRef, onChain } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

const body = z.object({
  ...ramsCommonFields,
  principal: address.meta({ description: "Receives the eligibility record" }),
  identityRef: nonZeroBytes32.meta({
    description: "Non-zero bytes32 reference of the principal's identity (KYC) record",
  }),
  expiresAt: uint48
    .optional()
    .meta({ type: "integer", description: "Unix seconds (uint48); 0 or omitted: no expiry; otherwise after now" }),
  complianceProviderAddress: address.optional().meta({ description: "Overrides the chain's ComplianceProvider" }),
});
type Body = z.infer<typeof body>;

/** The compliance provider's owner makes a principal eligible (optionally until expiresAt). Always client-signed. */
export const ramsGrantPrincipal = defineMethod({
  ...ramsMethod,
  name: "ramsGrantPrincipal",
  summary: "RAMS: make a principal eligible at the ComplianceProvider (owner only; always client-signed)",
  body,
  facadePath: "/x402/rams/grant-principal",
  async plan(ctx, b: Body) {
    const signer = requireClientSigned(ctx, "ramsGrantPrincipal");
    if (b.principal === ZeroAddress) throw badRequest("principal must not be the zero address", { field: "principal" });
    const provider = complianceRef(ctx.chain, b.complianceProviderAddress);
    const owner = await onChain(ctx.chain, provider, "owner", () => complianceAt(ctx.chain, provider).owner());
    if (owner !== signer) {
      throw preflightError(
        `signerAddress ${signer} is not the ComplianceProvider owner (${owner}); only the owner may grant principals`,
        { field: "signerAddress", owner },
      );
    }
    const expiresAt = b.expiresAt ?? 0;
    if (expiresAt !== 0) {
      const now = await chainNow(ctx.chain);
      if (expiresAt <= now)
        throw badRequest(`expiresAt ${expiresAt} must be 0 (no expiry) or after now (chain time ${now})`, {
          field: "expiresAt",
          now,
        });
    }
    const data = complianceProviderInterface.encodeFunctionData("grantPrincipal", [
      b.principal,
      b.identityRef,
      expiresAt,
    ]);
    await simulate(ctx.chain, { from: signer, to: provider.address, data }, "grantPrincipal");
    return {
      signer,
      calls: [
        { to: provider.address, data, description: `make ${b.principal} eligible under identityRef ${b.identityRef}` },
      ],
      info: {
        contract: provider.address,
        complianceProviderAddress: provider.address,
        mode: "direct",
        principal: b.principal,
        identityRef: b.identityRef,
        expiresAt,
      },
    };
  },
  onConfirmed: ramsOutcome,
});
