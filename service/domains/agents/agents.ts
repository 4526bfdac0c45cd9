import { getAddress } from "ethers";
import { identityRegistryInterface, reputationRegistryInterface } from "../../chains/contracts";
import type { Chain } from "../../chains/registry";
import type { Environment } from "../../config";
import { badRequest } from "../../errors";
import type { AgentRecord } from "../../store/agents";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";

/** What this domain reads: the agent records, and the chain. */
type Context = DomainContext<Pick<Stores, "agents">>;

// ERC-8004 agents: where they live, their records and their on-chain identity, for writes and reads alike.

/** Agent identity and agent tokens run on Base and Base Sepolia only. */
export const AGENT_CHAINS = [8453, 84532];

/** The environment's Base chain: the default when an agent call names no chain. */
export const baseChainOf = (environment: Environment) => (environment === "production" ? 8453 : 84532);

export const AGENT_NOT_FOUND = "A stored tokenized agent reference is required via agentUuid or agentId";

export function registries(chain: Chain): { identity: string; reputation: string } {
  return {
    identity: chain.deployment.contracts.IdentityRegistry,
    reputation: chain.deployment.contracts.ReputationRegistry,
  };
}

/** A stored agent by agentUuid or agentId; "A stored tokenized agent reference is required …" otherwise. */
export async function storedAgent(ctx: Context, ref: { agentUuid?: string; agentId?: string }): Promise<AgentRecord> {
  const { identity } = registries(ctx.chain);
  let agent: AgentRecord | undefined;
  if (ref.agentUuid) {
    agent = await ctx.services.agents.byUuid(ref.agentUuid);
    if (agent && ref.agentId !== undefined && agent.agentId !== BigInt(ref.agentId).toString()) {
      throw badRequest(`agentUuid ${ref.agentUuid} is agent ${agent.agentId}, not ${ref.agentId}`, {
        field: "agentId",
      });
    }
  } else if (ref.agentId !== undefined) {
    agent = await ctx.services.agents.byAgentId(ctx.chain.chainId, identity, BigInt(ref.agentId));
  }
  if (!agent) throw badRequest(AGENT_NOT_FOUND, { field: ref.agentUuid ? "agentUuid" : "agentId" });
  if (agent.chainId !== ctx.chain.chainId) {
    throw badRequest(`agent ${agent.uuid} lives on chain ${agent.chainId}, not on chain ${ctx.chain.chainId}`, {
      field: "chainId",
    });
  }
  return agent;
}

/** The on-chain agentId of a reference: a stored agent, or an agentId that exists on the registry (feedback may rate any agent). */
export async function agentOnChain(
  ctx: Context,
  ref: { agentUuid?: string; agentId?: string },
): Promise<{ agentId: bigint; owner: string; agent?: AgentRecord }> {
  if (ref.agentUuid) {
    const agent = await storedAgent(ctx, ref);
    return { agentId: BigInt(agent.agentId), owner: await ownerOf(ctx, BigInt(agent.agentId)), agent };
  }
  if (ref.agentId === undefined) throw badRequest(AGENT_NOT_FOUND, { field: "agentId" });
  const agentId = BigInt(ref.agentId);
  const owner = await ownerOf(ctx, agentId).catch(() => undefined);
  if (!owner)
    throw badRequest(`agentId ${agentId} is not registered on the identity registry of chain ${ctx.chain.chainId}`, {
      field: "agentId",
    });
  const { identity } = registries(ctx.chain);
  return { agentId, owner, agent: await ctx.services.agents.byAgentId(ctx.chain.chainId, identity, agentId) };
}

export async function ownerOf(ctx: { chain: Chain }, agentId: bigint): Promise<string> {
  const { identity } = registries(ctx.chain);
  const data = identityRegistryInterface.encodeFunctionData("ownerOf", [agentId]);
  const result = await ctx.chain.provider.call({ to: identity, data });
  return getAddress(identityRegistryInterface.decodeFunctionResult("ownerOf", result)[0]);
}

/** Reputation-registry calls go to the chain's reputation registry; a helper to read its views. */
export async function reputationView<T = unknown>(ctx: { chain: Chain }, fn: string, args: unknown[]): Promise<T[]> {
  const { reputation } = registries(ctx.chain);
  const result = await ctx.chain.provider.call({
    to: reputation,
    data: reputationRegistryInterface.encodeFunctionData(fn, args),
  });
  return reputationRegistryInterface.decodeFunctionResult(fn, result);
}

export async function identityView<T = unknown>(ctx: { chain: Chain }, fn: string, args: unknown[]): Promise<T[]> {
  const { identity } = registries(ctx.chain);
  const result = await ctx.chain.provider.call({
    to: identity,
    data: identityRegistryInterface.encodeFunctionData(fn, args),
  });
  return identityRegistryInterface.decodeFunctionResult(fn, result);
}

/** The agent's agentURI: stable, served by this service from its stored registration file. */
export function registrationUrl(services: { baseUrl: string }, uuid: string): string {
  return `${services.baseUrl.replace(/\/$/, "")}/agents/${uuid}/registration.json`;
}
