import { hexlify, toUtf8String } from "ethers";
import { z } from "zod";
import { responseFields } from "../wire/responses";
import type { Chain } from "../chains/registry";
import { badRequest, notFound } from "../errors";
import type { AgentActivity, AgentRecord } from "../store/agents";
import type { Caller } from "../auth/gate";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import { AGENT_CHAINS, identityView } from "../domains/agents/agents";
import { AgentSummary } from "../domains/agents/views";

/** What the agent reads use. */
export type AgentReadServices = Pick<Stores, "agents"> & { chains: ChainRegistry };

const { address, hash32, int } = responseFields;

/** An ERC-8004 registration file (the agentURI's document): open, as the standard allows extensions. */
export const RegistrationFile = z
  .looseObject({
    type: z.string().optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    image: z.string().optional(),
    services: z.array(z.record(z.string(), z.unknown())).optional(),
    x402Support: z.boolean().optional(),
    active: z.boolean().optional(),
    registrations: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .meta({
    id: "AgentRegistrationFile",
    description: "The ERC-8004 registration file this service hosts at the agentURI",
  });
export const AgentList = z
  .strictObject({ agents: z.array(AgentSummary), total: int, limit: int, offset: int })
  .meta({ id: "AgentList" });

const OnchainAgent = z.strictObject({
  owner: address,
  agentWallet: address,
  tokenURI: z.string(),
  metadata: z
    .record(z.string(), z.strictObject({ hex: responseFields.hex, text: z.string().nullable() }))
    .meta({ description: "The metadata keys set through this service" }),
});

export const AgentInfo = z
  .strictObject({
    ...AgentSummary.shape,
    registrationFile: RegistrationFile,
    onchainMetadata: OnchainAgent,
    prepareTxId: hash32,
  })
  .meta({ id: "AgentInfo" });

const AgentActivityView = z.strictObject({
  txId: hash32,
  category: z.enum(["erc8004", "agentToken", "rams"]),
  method: z.string(),
  status: z.literal("success"),
  chainId: int,
  agentUuid: z.string().nullable(),
  tokenAddress: address.nullable(),
  txHashes: z.array(hash32),
  txHash: hash32.nullable(),
  createdAt: z.string(),
  details: z.record(z.string(), z.unknown()),
});

export const AgentTransactions = z
  .strictObject({
    agentUuid: z.string(),
    transactions: z.array(AgentActivityView),
    total: int,
    limit: int,
    offset: int,
  })
  .meta({ id: "AgentTransactions" });

/** What the registry says now: owner, agent wallet, URI and the metadata keys set through this service (read failures are errors). */
export async function onchainAgent(chain: Chain, agent: AgentRecord): Promise<z.infer<typeof OnchainAgent>> {
  const ctx = { chain };
  const agentId = BigInt(agent.agentId);
  const [[owner], [agentWallet], [tokenURI]] = await Promise.all([
    identityView<string>(ctx, "ownerOf", [agentId]),
    identityView<string>(ctx, "getAgentWallet", [agentId]),
    identityView<string>(ctx, "tokenURI", [agentId]),
  ]);
  const metadata: Record<string, { hex: string; text: string | null }> = {};
  for (const key of agent.metadataKeys) {
    const [value] = await identityView<string>(ctx, "getMetadata", [agentId, key]);
    const hex = hexlify(value);
    let text: string | null = null;
    try {
      text = toUtf8String(hex);
    } catch {
      text = null;
    }
    metadata[key] = { hex, text };
  }
  return { owner, agentWallet, tokenURI, metadata };
}

export function activityView(a: AgentActivity): z.infer<typeof AgentActivityView> {
  return {
    txId: a.txId,
    category: a.category,
    method: a.method,
    status: "success" as const,
    chainId: a.chainId,
    agentUuid: a.agentUuid,
    tokenAddress: a.tokenAddress,
    txHashes: a.txHashes,
    txHash: a.txHashes[a.txHashes.length - 1] ?? null,
    createdAt: a.createdAt,
    details: a.details,
  };
}

/**
 * The agent a getter names (agentUuid, or agentId + chainId). With a key, only the key's own agents are visible; paid
 * with x402, the caller must pay from the agent's owner wallet (checked when the payment is taken).
 */
export async function agentForGetter(
  services: AgentReadServices,
  caller: Caller,
  ref: { agentUuid?: string; agentId?: string; chainId?: string | number },
): Promise<{ agent: AgentRecord; chain: Chain }> {
  let agent: AgentRecord | undefined;
  if (ref.agentUuid) agent = await services.agents.byUuid(ref.agentUuid);
  else if (ref.agentId !== undefined) {
    if (ref.chainId === undefined) throw badRequest("chainId is required with agentId", { field: "chainId" });
    const chain = agentChain(services, ref.chainId);
    agent = await services.agents.byAgentId(
      chain.chainId,
      chain.deployment.contracts.IdentityRegistry,
      BigInt(ref.agentId),
    );
  } else {
    throw badRequest("agentUuid is required (or agentId with chainId)", { field: "agentUuid" });
  }
  const label = ref.agentUuid ? `agentUuid ${ref.agentUuid}` : `agentId ${ref.agentId}`;
  if (!agent || (caller.apiKey && agent.apiKeyId !== caller.apiKey.id)) {
    throw notFound(
      caller.apiKey
        ? `No agent with ${label} was registered under this API key`
        : `No agent with ${label} is known to this service`,
      {
        field: ref.agentUuid ? "agentUuid" : "agentId",
      },
    );
  }
  const chain = services.chains.find(agent.chainId);
  if (!chain)
    throw badRequest(`agent ${agent.uuid} lives on chain ${agent.chainId}, which this deployment does not serve`, {
      field: "chainId",
    });
  return { agent, chain };
}

/** A chain that serves agents (8453 / 84532), from a getter's chainId. */
export function agentChain(services: AgentReadServices, chainId: string | number): Chain {
  const chain = services.chains.resolve(chainId);
  if (!AGENT_CHAINS.includes(chain.chainId))
    throw badRequest(`agents live on chain ${AGENT_CHAINS.join(" or ")}, not on ${chain.chainId}`, {
      field: "chainId",
    });
  return chain;
}
