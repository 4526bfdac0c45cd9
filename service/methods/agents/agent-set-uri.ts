import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { identityRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { defineMethod } from "../types";
import {
  agentCommonFields,
  agenticMethod,
  agentRefFields,
  authorizeAgentChange,
  recordAgentActivity,
  relayedPayerRule,
} from "./common";
import { profileFields, profileOf, registrationFile } from "./profile";
import { registries, storedAgent } from "../../domains/agents/agents";

const optionalProfile = Object.fromEntries(Object.entries(profileFields).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof typeof profileFields]: z.ZodOptional<(typeof profileFields)[K]>;
};
const body = z.object({ ...agentCommonFields, ...agentRefFields, ...optionalProfile });
type Body = z.infer<typeof body>;

/**
 * Rewrites a stored agent's registration file with the profile fields given (the others are kept) and points the
 * registry at it again (setAgentURI, which emits URIUpdated so indexers fetch the new file). The file served changes
 * when the transaction is confirmed.
 */
export const agentSetURI = defineMethod({
  ...agenticMethod,
  name: "agentSetURI",
  summary: "Update an agent's registration file and point the ERC-8004 registry at it",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/set-uri",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const agent = await storedAgent(ctx, b);
    const change = profileOf(b);
    if (!Object.keys(change).length)
      throw badRequest("Give at least one registration field to change (name, description, image, services, …)", {
        field: "name",
      });
    const { sender, record } = await authorizeAgentChange(ctx, agent, "set its URI");
    const { identity } = registries(ctx.chain);
    const registration = registrationFile(
      change,
      { chainId: ctx.chain.chainId, registry: identity, agentId: agent.agentId },
      agent.registration,
    );
    return {
      signer: sender,
      calls: [
        {
          to: identity,
          data: identityRegistryInterface.encodeFunctionData("setAgentURI", [BigInt(agent.agentId), agent.agentUri]),
          description: `point agent ${agent.agentId} at its updated registration file`,
        },
      ],
      info: {
        agentUuid: agent.uuid,
        agentId: agent.agentId,
        agentURI: agent.agentUri,
        registrations: registration.registrations,
        registryAddress: identity,
      },
      record: { ...record, agentUuid: agent.uuid, registration, changed: Object.keys(change) },
    };
  },
  async onConfirmed(tx, batch) {
    const agentUuid = batch.record.agentUuid as string;
    await batch.services.agents.update(tx, agentUuid, {
      registration: batch.record.registration as Record<string, unknown>,
    });
    await recordAgentActivity(tx, batch, { agentUuid }, { changed: batch.record.changed });
  },
});
