import { getAddress } from "ethers";
import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { authInfo, authorize, requireRelayedSignature, ramsMethod, ramsOutcome } from "./common";
import { actions, bytes32, cap, nonZeroBytes32, ramsCommonFields, signedFields, uint48 } from "./fields";
import { checkPrincipal } from "../../domains/rams/compliance";
import { mandateStatus, readMandate } from "../../domains/rams/mandates";
import { simulate } from "../../domains/rams/reverts";
import { grantParams, grantMessage } from "../../domains/rams/messages";
import { aliasOf } from "../../wire/field-aliases";

/** The mandate's parameters (the body of ramsGrantMandate); also the query of GET /rams/typed-data/grant-mandate. */
export const grantFields = {
  agent: address.meta({ description: "Receives the mandate" }),
  principal: address.meta({ description: "Delegates; in direct mode must equal signerAddress" }),
  validFrom: uint48.optional().meta({ type: "integer", description: "Unix seconds (uint48); default 0 (immediate)" }),
  validUntil: uint48.meta({ type: "integer", description: "Unix seconds (uint48); after now and after validFrom" }),
  complianceProvider: address.optional().meta({ description: "Non-zero; default: the chain's ComplianceProvider" }),
  complianceProviderAddress: aliasOf(
    address.optional().meta({ description: "Alias of complianceProvider" }),
    "complianceProvider",
  ),
  identityRef: nonZeroBytes32.meta({ description: "Must match the principal's record at the compliance provider" }),
  asset: address.meta({ description: "The asset the mandate is scoped to" }),
  maxTransactionValue: cap,
  maxCumulativeValue: cap,
  metadata: bytes32.optional().meta({ description: "Opaque bytes32; default zero" }),
  actions,
};

const body = z.object({ ...ramsCommonFields, ...grantFields, ...signedFields });
type Body = z.infer<typeof body>;

/**
 * The principal grants an agent a mandate over one asset: directly (signerAddress = principal) or with the principal's
 * EIP-712 GrantMandate signature, sent by any signer or relayed by the service (signature + deadline required).
 */
export const ramsGrantMandate = defineMethod({
  ...ramsMethod,
  name: "ramsGrantMandate",
  summary:
    "RAMS: grant an agent a value-capped mandate over one asset (direct by the principal, or its EIP-712 signature; relayable with a signature)",
  body,
  events: ["mandate.granted"],
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
    const data = agentMandateInterface.encodeFunctionData("grantMandate", [
      { ...params, deadline: auth.deadline },
      auth.signature,
    ]);
    await simulate(chain, { from: auth.sender, to: registry.address, data }, "grantMandate");
    return {
      signer: auth.sender,
      calls: [
        {
          to: registry.address,
          data,
          description: `grant agent ${params.agent} a mandate of ${params.principal} over ${params.asset}`,
        },
      ],
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
