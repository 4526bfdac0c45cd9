import { ZeroHash } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { reputationRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { agenticMethod, authorizeAgentChange, recordAgentActivity, relayedPayerRule } from "./common";
import { bytes32, feedbackEntry, feedbackEntryFields } from "./feedback";
import { agentOnChain, registries } from "../../domains/agents/agents";
import { aliasOf } from "../../wire/field-aliases";

const body = z.object({
  ...feedbackEntryFields,
  agentUuid: z.string().trim().uuid().optional(),
  clientAddress: address.meta({ description: "The client that gave the feedback" }),
  responseURI: z.string().trim().max(2048).optional(),
  responseUri: aliasOf(
    z.string().trim().max(2048).optional().meta({ description: "Alias of responseURI" }),
    "responseURI",
  ),
  responseHash: bytes32.optional(),
});
type Body = z.infer<typeof body>;

/**
 * Appends a response to a feedback entry (also to revoked feedback), as the feedback's addressee: the agent's owner (or
 * an operator it approved) signs it; relayed, only for an agent the service's relayer holds for a payer, and paid by
 * that payer. (The registry lets anyone respond, but a response sent by the relayer reads as the owner's.)
 */
export const agentAppendFeedbackResponse = defineMethod({
  ...agenticMethod,
  name: "agentAppendFeedbackResponse",
  summary: "Append a response to feedback on an agent (its owner responds; relayed, the wallet it is held for pays)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/feedback/respond",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const responseURI = b.responseURI ?? b.responseUri;
    if (!responseURI) throw badRequest("responseURI is required", { field: "responseURI" });
    const { agentId, agent } = await agentOnChain(ctx, { agentId: b.agentId });
    const feedbackIndex = BigInt(b.feedbackIndex);
    await feedbackEntry(ctx, agentId, b.clientAddress, feedbackIndex);
    const { sender, record } = await authorizeAgentChange(
      ctx,
      { agentId: agentId.toString(), ownerWallet: agent?.ownerWallet ?? null },
      "respond to feedback on it",
    );
    const { reputation } = registries(ctx.chain);
    return {
      signer: sender,
      calls: [
        {
          to: reputation,
          data: reputationRegistryInterface.encodeFunctionData("appendResponse", [
            agentId,
            b.clientAddress,
            feedbackIndex,
            responseURI,
            b.responseHash ?? ZeroHash,
          ]),
          description: `respond to feedback ${feedbackIndex} of ${b.clientAddress} on agent ${agentId}`,
        },
      ],
      info: {
        agentUuid: agent?.uuid,
        agentId: agentId.toString(),
        clientAddress: b.clientAddress,
        feedbackIndex: feedbackIndex.toString(),
        responseURI,
      },
      record: {
        ...record,
        agentUuid: agent?.uuid ?? null,
        agentId: agentId.toString(),
        clientAddress: b.clientAddress,
        feedbackIndex: feedbackIndex.toString(),
        responseURI,
      },
    };
  },
  async onConfirmed(tx, batch) {
    const { agentUuid, requiredPayer: _requiredPayer, ...details } = batch.record;
    await recordAgentActivity(
      tx,
      batch,
      { agentUuid: agentUuid as string | null },
      { ...details, responder: batch.signer },
    );
  },
});
