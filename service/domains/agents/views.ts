import { z } from "zod";
import { responseFields } from "../../wire/responses";
import { chainIdHex } from "../../chains/networks";
import type { AgentRecord } from "../../store/agents";

const { address, int } = responseFields;

/** An agent as lists and answers show it. */
export const AgentSummary = z
  .strictObject({
    uuid: z.string(),
    agentUuid: z.string(),
    agentId: z.string().regex(/^\d+$/).meta({ description: "The registry's token id (decimal string)" }),
    chainId: int,
    chainIdHex: z.string(),
    registryAddress: address,
    agentURI: z.string(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    image: z.string().nullable(),
    active: z.boolean(),
    ownerWalletAddress: address.meta({
      description: "Its owner: the NFT holder, or the wallet the relayer holds it for",
    }),
    heldByRelayer: address
      .nullable()
      .meta({ description: "The relayer holding the NFT for the owner (relayed registration), else null" }),
    agentWallet: address.nullable(),
    ownerEmail: z.string().nullable(),
    status: z.literal("registered"),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "AgentSummary" });

/** The list summary of an agent (GET /get-agents); the detail adds the registration file and on-chain state. */
export function agentSummary(agent: AgentRecord): z.infer<typeof AgentSummary> {
  const file = agent.registration as { name?: string; description?: string; image?: string; active?: boolean };
  return {
    uuid: agent.uuid,
    agentUuid: agent.uuid,
    agentId: agent.agentId,
    chainId: agent.chainId,
    chainIdHex: chainIdHex(agent.chainId),
    registryAddress: agent.registry,
    agentURI: agent.agentUri,
    name: file.name ?? null,
    description: file.description ?? null,
    image: file.image ?? null,
    active: file.active ?? true,
    ownerWalletAddress: agent.ownerWallet,
    heldByRelayer: agent.custodian,
    agentWallet: agent.agentWallet,
    ownerEmail: agent.ownerEmail,
    status: "registered" as const,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}
