import { getAddress, ZeroAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { identityRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import {
  agentCommonFields,
  agenticMethod,
  agentRefFields,
  authorizeAgentChange,
  recordAgentActivity,
  relayedPayerRule,
} from "./common";
import { ownerOf, registries, storedAgent } from "../../domains/agents/agents";

const body = z.object({ ...agentCommonFields, ...agentRefFields, newOwner: address });
type Body = z.infer<typeof body>;

/**
 * Transfers the agent NFT (ERC-721 transferFrom; the registry clears the agent wallet). Client-signed by the owner; or
 * service-relayed for an agent the relayer holds, paid by the wallet it holds it for, which is how that wallet takes
 * ownership (newOwner = itself) or hands it on.
 */
export const agentTransferOwnership = defineMethod({
  ...agenticMethod,
  name: "agentTransferOwnership",
  summary: "Transfer an agent to a new owner (the registry clears its agent wallet)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/transfer-ownership",
  facadeMode: "client-signed",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    if (b.newOwner === ZeroAddress) throw badRequest("newOwner must not be the zero address", { field: "newOwner" });
    const agent = await storedAgent(ctx, b);
    const { sender, record } = await authorizeAgentChange(ctx, agent, "transfer it");
    const agentId = BigInt(agent.agentId);
    const owner = await ownerOf(ctx, agentId);
    if (owner.toLowerCase() === b.newOwner.toLowerCase())
      throw badRequest(`newOwner ${b.newOwner} already owns agent ${agentId}`, { field: "newOwner" });
    const { identity } = registries(ctx.chain);
    return {
      signer: sender,
      calls: [
        {
          to: identity,
          data: identityRegistryInterface.encodeFunctionData("transferFrom", [owner, b.newOwner, agentId]),
          description: `transfer agent ${agentId} from ${owner} to ${b.newOwner}`,
        },
      ],
      info: { agentUuid: agent.uuid, agentId: agent.agentId, previousOwner: owner, newOwner: b.newOwner },
      record: { ...record, agentUuid: agent.uuid, previousOwner: owner, newOwner: getAddress(b.newOwner) },
    };
  },
  async onConfirmed(tx, batch) {
    const agentUuid = batch.record.agentUuid as string;
    await batch.services.agents.update(tx, agentUuid, {
      ownerWallet: batch.record.newOwner as string,
      custodian: null,
      agentWallet: null,
    });
    await recordAgentActivity(
      tx,
      batch,
      { agentUuid },
      { previousOwner: batch.record.previousOwner, newOwner: batch.record.newOwner },
    );
  },
});
