import { randomUUID } from "node:crypto";
import { getAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { identityRegistryInterface, parseEventLog } from "../../chains/contracts";
import { defineMethod } from "../types";
import { emitEvent } from "../../events/emit";
import { agentCommonFields, agenticMethod, ownerEmailOf, recordAgentActivity } from "./common";
import { profileFields, profileOf, registrationFile } from "./profile";
import { registrationUrl, registries } from "../../domains/agents/agents";
import { agentSummary } from "../../domains/agents/views";

const body = z.object({ ...agentCommonFields, ...profileFields });
type Body = z.infer<typeof body>;

/**
 * Registers an AI agent on the ERC-8004 identity registry. The service writes its registration file and serves it at a
 * stable URL under its base URL; that URL is the agentURI. Client-signed, the signer owns the agent NFT. Service-relayed,
 * the relayer sends `register` and keeps the NFT in custody for the wallet that pays the send: only that wallet may pay
 * for later relayed changes, and it takes the NFT whenever it wants with agentTransferOwnership.
 */
export const agentRegister = defineMethod({
  ...agenticMethod,
  name: "agentRegister",
  aliases: ["newTokenizedAgent"],
  summary: "Register an AI agent on the ERC-8004 identity registry (registration file served by this service)",
  body,
  access: ACCESS.agenticWrite,
  events: ["agent.registered"],
  relayable: true,
  facadePath: "/x402/agent/register",
  async plan(ctx, b: Body) {
    const { identity, reputation } = registries(ctx.chain);
    const agentUuid = randomUUID();
    const agentURI = registrationUrl(ctx.services, agentUuid);
    const registration = registrationFile(profileOf(b), { chainId: ctx.chain.chainId, registry: identity });
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: identity,
          data: identityRegistryInterface.encodeFunctionData("register", [agentURI]),
          description: `register agent "${b.name}" (${agentURI})`,
        },
      ],
      info: {
        agentUuid,
        agentURI,
        standard: "ERC-8004",
        registryAddress: identity,
        reputationRegistryAddress: reputation,
        chainId: `eip155:${ctx.chain.chainId}`,
        ownerEmail: ownerEmailOf(b),
      },
      record: { agentUuid, agentURI, registration, ownerEmail: ownerEmailOf(b) ?? null },
    };
  },
  async onConfirmed(tx, batch) {
    const { identity } = registries(batch.chain);
    for (const log of batch.receipts.flatMap((r) => r.logs)) {
      if (log.address.toLowerCase() !== identity.toLowerCase()) continue;
      const event = parseEventLog(identityRegistryInterface, log);
      if (event?.name !== "Registered") continue;
      const agentId = event.args.agentId.toString();
      const owner = getAddress(event.args.owner);
      const relayed = batch.executionMode === "service-relayed";
      const agentUuid = batch.record.agentUuid as string;
      const registration = registrationFile(
        {},
        { chainId: batch.chain.chainId, registry: identity, agentId },
        batch.record.registration as Record<string, unknown>,
      );
      await batch.services.agents.insert(tx, {
        uuid: agentUuid,
        chainId: batch.chain.chainId,
        registry: getAddress(identity),
        agentId,
        apiKeyId: batch.apiKeyId,
        ownerEmail: (batch.record.ownerEmail as string | null) ?? null,
        ownerWallet: relayed && batch.payer ? getAddress(batch.payer) : owner,
        custodian: relayed ? owner : null,
        agentWallet: owner,
        agentUri: batch.record.agentURI as string,
        registration,
        prepareTxId: batch.txId,
      });
      await recordAgentActivity(
        tx,
        batch,
        { agentUuid },
        { agentId, owner, agentURI: batch.record.agentURI, ...(relayed ? { heldForPayer: true } : {}) },
      );
      const agent = await batch.services.agents.byUuid(agentUuid, tx);
      if (agent)
        await emitEvent(tx, {
          type: "agent.registered",
          apiKeyId: batch.apiKeyId,
          txId: batch.txId,
          chainId: batch.chain.chainId,
          hash: log.transactionHash,
          data: agentSummary(agent),
        });
      return { agentUuid, agentId, owner, agentURI: batch.record.agentURI as string };
    }
  },
});
