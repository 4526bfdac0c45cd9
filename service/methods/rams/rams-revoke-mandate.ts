import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { authInfo, authorize, requireRelayedSignature, ramsMethod, ramsOutcome } from "./common";
import { ramsCommonFields, signedFields } from "./fields";
import { mandateStatus, readMandate } from "../../domains/rams/mandates";
import { chainNow, registryRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";
import { revokeMessage } from "../../domains/rams/messages";

/** The pair of a mandate; also the query of GET /rams/typed-data/revoke-mandate. */
export const pairFields = { agent: address, principal: address };

const body = z.object({ ...ramsCommonFields, ...pairFields, ...signedFields });
type Body = z.infer<typeof body>;

/**
 * Revokes a mandate (pending, active or expired; not one already revoked): directly by the principal or an operator it
 * approved, or with the principal's RevokeMandate signature, sent by anyone or relayed by the service.
 */
export const ramsRevokeMandate = defineMethod({
  ...ramsMethod,
  name: "ramsRevokeMandate",
  summary:
    "RAMS: revoke a mandate (direct by the principal or an approved operator, or the principal's EIP-712 signature; relayable with a signature)",
  body,
  events: ["mandate.revoked"],
  relayable: true,
  facadePath: "/x402/rams/revoke-mandate",
  async plan(ctx, b: Body) {
    requireRelayedSignature(ctx, b, "RevokeMandate");
    const { chain } = ctx;
    const registry = registryRef(chain, b.agentMandateAddress);
    const [mandate, now] = await Promise.all([readMandate(chain, registry, b.agent, b.principal), chainNow(chain)]);
    if (!mandate || mandate.revoked) {
      const message = mandate
        ? `the mandate of agent ${b.agent} from principal ${b.principal} is already revoked`
        : `agent ${b.agent} has no mandate from principal ${b.principal} to revoke`;
      throw preflightError(message, { field: "agent", reason: "NoActiveMandate", status: mandateStatus(mandate, now) });
    }
    const auth = await authorize(ctx, {
      registry,
      principal: b.principal,
      signature: b.signature,
      deadline: b.deadline,
      primaryType: "RevokeMandate",
      message: revokeMessage(b.agent, b.principal),
      operatorMayAct: true,
      action: "revoke the mandate",
    });
    const data = agentMandateInterface.encodeFunctionData("revokeMandate", [
      b.agent,
      b.principal,
      auth.deadline,
      auth.signature,
    ]);
    await simulate(chain, { from: auth.sender, to: registry.address, data }, "revokeMandate");
    return {
      signer: auth.sender,
      calls: [
        { to: registry.address, data, description: `revoke the mandate of agent ${b.agent} from ${b.principal}` },
      ],
      info: {
        ...authInfo(registry.address, auth),
        agentMandateAddress: registry.address,
        agent: b.agent,
        principal: b.principal,
        statusBefore: mandateStatus(mandate, now),
      },
    };
  },
  onConfirmed: ramsOutcome,
});
