import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { reputationRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { defineMethod } from "../types";
import { agenticMethod, recordAgentActivity, relayedPayerRule } from "./common";
import { feedbackEntry, feedbackEntryFields } from "./feedback";
import { agentOnChain, registries } from "../../domains/agents/agents";

const body = z.object({ ...feedbackEntryFields, agentUuid: z.string().trim().uuid().optional() });
type Body = z.infer<typeof body>;

/**
 * Revokes the client's own feedback (only the client that gave it, only once). Relayed, the client is the relayer, so
 * only feedback the relayer gave for the paying wallet can be revoked, and only that wallet may pay for it.
 */
export const agentRevokeFeedback = defineMethod({
  ...agenticMethod,
  name: "agentRevokeFeedback",
  summary: "Revoke feedback the signer gave on an agent",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/feedback/revoke",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const { agentId, agent } = await agentOnChain(ctx, { agentId: b.agentId });
    const client = ctx.signer!;
    const feedbackIndex = BigInt(b.feedbackIndex);
    const { revoked } = await feedbackEntry(ctx, agentId, client, feedbackIndex);
    if (revoked)
      throw badRequest(`feedback ${feedbackIndex} of ${client} on agent ${agentId} is already revoked`, {
        field: "feedbackIndex",
      });
    let requiredPayer: string | undefined;
    if (ctx.executionMode === "service-relayed") {
      requiredPayer = await ctx.services.agents.relayedFeedbackPayer(
        ctx.chain.chainId,
        agentId.toString(),
        client,
        feedbackIndex.toString(),
      );
      if (!requiredPayer)
        throw badRequest(
          `feedback ${feedbackIndex} of the relayer on agent ${agentId} was not given through this service for a payer`,
          { field: "feedbackIndex" },
        );
    }
    const { reputation } = registries(ctx.chain);
    return {
      signer: client,
      calls: [
        {
          to: reputation,
          data: reputationRegistryInterface.encodeFunctionData("revokeFeedback", [agentId, feedbackIndex]),
          description: `revoke feedback ${feedbackIndex} on agent ${agentId}`,
        },
      ],
      info: {
        agentUuid: agent?.uuid,
        agentId: agentId.toString(),
        clientAddress: client,
        feedbackIndex: feedbackIndex.toString(),
      },
      record: {
        agentUuid: agent?.uuid ?? null,
        agentId: agentId.toString(),
        feedbackIndex: feedbackIndex.toString(),
        ...(requiredPayer ? { requiredPayer } : {}),
      },
    };
  },
  async onConfirmed(tx, batch) {
    await recordAgentActivity(
      tx,
      batch,
      { agentUuid: batch.record.agentUuid as string | null },
      {
        agentId: batch.record.agentId,
        clientAddress: batch.signer,
        feedbackIndex: batch.record.feedbackIndex,
      },
    );
  },
});
