import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { defineMethod } from "../types";
import { authInfo, authorize, requireRelayedSignature, ramsMethod, ramsOutcome } from "./common";
import { ramsCommonFields, signedFields, uint48 } from "./fields";
import { pairFields } from "./rams-revoke-mandate";
import { mandateStatus, readMandate } from "../../domains/rams/mandates";
import { chainNow, registryRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";
import { extendMessage } from "../../domains/rams/messages";

/** Also the query of GET /rams/typed-data/extend-mandate. */
export const extendFields = {
  ...pairFields,
  newValidUntil: uint48.meta({ type: "integer", description: "Unix seconds (uint48); after the current validUntil" }),
};

const body = z.object({ ...ramsCommonFields, ...extendFields, ...signedFields });
type Body = z.infer<typeof body>;

/**
 * Moves a pending or active mandate's validUntil later; cumulativeUsed is kept. Same authorisation as revoke. An
 * expired mandate cannot be extended (grant a new one).
 */
export const ramsExtendMandate = defineMethod({
  ...ramsMethod,
  name: "ramsExtendMandate",
  summary:
    "RAMS: extend a mandate's validUntil, keeping cumulativeUsed (direct by the principal or an approved operator, or the principal's EIP-712 signature; relayable with a signature)",
  body,
  relayable: true,
  facadePath: "/x402/rams/extend-mandate",
  async plan(ctx, b: Body) {
    requireRelayedSignature(ctx, b, "ExtendMandate");
    const { chain } = ctx;
    const registry = registryRef(chain, b.agentMandateAddress);
    const [mandate, now] = await Promise.all([readMandate(chain, registry, b.agent, b.principal), chainNow(chain)]);
    const status = mandateStatus(mandate, now);
    if (!mandate || status === "revoked" || status === "expired") {
      const why = !mandate
        ? "there is none"
        : status === "revoked"
          ? "it is revoked"
          : `it expired at ${mandate.validUntil}; grant a new one instead`;
      throw preflightError(`agent ${b.agent} has no active mandate from principal ${b.principal} to extend: ${why}`, {
        field: "agent",
        reason: "NoActiveMandate",
        status,
      });
    }
    if (b.newValidUntil <= mandate.validUntil) {
      throw badRequest(
        `newValidUntil ${b.newValidUntil} must be after the mandate's current validUntil ${mandate.validUntil}`,
        { field: "newValidUntil", validUntil: mandate.validUntil },
      );
    }
    const auth = await authorize(ctx, {
      registry,
      principal: b.principal,
      signature: b.signature,
      deadline: b.deadline,
      primaryType: "ExtendMandate",
      message: extendMessage(b.agent, b.principal, b.newValidUntil),
      operatorMayAct: true,
      action: "extend the mandate",
    });
    const data = agentMandateInterface.encodeFunctionData("extendMandate", [
      b.agent,
      b.principal,
      b.newValidUntil,
      auth.deadline,
      auth.signature,
    ]);
    await simulate(chain, { from: auth.sender, to: registry.address, data }, "extendMandate");
    return {
      signer: auth.sender,
      calls: [
        {
          to: registry.address,
          data,
          description: `extend the mandate of agent ${b.agent} from ${b.principal} to ${b.newValidUntil}`,
        },
      ],
      info: {
        ...authInfo(registry.address, auth),
        agentMandateAddress: registry.address,
        agent: b.agent,
        principal: b.principal,
        validUntil: mandate.validUntil,
        newValidUntil: b.newValidUntil,
        cumulativeUsed: mandate.cumulativeUsed.toString(),
      },
    };
  },
  onConfirmed: ramsOutcome,
});
