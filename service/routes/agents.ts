import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { badRequest, notFound } from "../errors";
import { address, chainIdInput, integerString, pageFields } from "../wire/fields";
import { defineRoute } from "../http/route";
import {
  activityView,
  AgentInfo,
  AgentList,
  AgentTransactions,
  agentChain,
  agentForGetter,
  onchainAgent,
  RegistrationFile,
} from "../reads/agents";
import type { Services } from "../usecases/services";
import { agentSummary } from "../domains/agents/views";

const agentRef = {
  agentUuid: z.string().trim().uuid("must be the agentUuid returned by agentRegister").optional(),
  agentId: integerString.optional(),
  chainId: chainIdInput.optional(),
};

/** GET /agents/{uuid}/registration.json */
function agentsByUuidRegistrationJsonRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/agents/{uuid}/registration.json",
    summary: "An agent's ERC-8004 registration file (its agentURI)",
    tags: ["agents"],
    access: ACCESS.public,
    response: RegistrationFile,
    handler: async ({ req, res }) => {
      const uuid = String(req.params.uuid ?? "");
      if (!z.uuid().safeParse(uuid).success) throw badRequest("uuid must be an agentUuid", { field: "uuid" });
      const agent = await services.agents.byUuid(uuid);
      if (!agent) throw notFound(`No registered agent ${uuid}`, { field: "uuid" });
      res.setHeader("Cache-Control", "no-cache");
      return agent.registration;
    },
  });
}

/** GET /get-agents */
function getAgentsRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-agents",
    summary:
      "Agents: with a key, the key's own (filters optional); paid, those of ownerWalletAddress on chainId (payer = owner)",
    tags: ["agents"],
    access: ACCESS.agentGetter,
    idempotent: true,
    response: AgentList,
    query: z.object({ chainId: chainIdInput.optional(), ownerWalletAddress: address.optional(), ...pageFields }),
    handler: async ({ query, caller, payment }) => {
      const chain = query.chainId === undefined ? undefined : agentChain(services, query.chainId);
      if (!caller.apiKey) {
        if (!chain) throw badRequest("chainId is required when paying with x402", { field: "chainId" });
        if (!query.ownerWalletAddress)
          throw badRequest("ownerWalletAddress is required when paying with x402", { field: "ownerWalletAddress" });
        await payment.take({
          operation: "get-agents",
          chainId: chain.chainId,
          description: "list agents",
          owner: query.ownerWalletAddress,
          ownerLabel: "these agents",
        });
      }
      const page = { limit: query.limit, offset: query.offset };
      const { agents, total } = await services.agents.list(
        { apiKeyId: caller.apiKey?.id, chainId: chain?.chainId, ownerWallet: query.ownerWalletAddress },
        page,
      );
      return { agents: agents.map(agentSummary), total, ...page };
    },
  });
}

/** GET /get-agent-info */
function getAgentInfoRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-agent-info",
    summary: "One agent: summary, registration file, on-chain owner, wallet, URI and metadata, prepare txId",
    tags: ["agents"],
    access: ACCESS.agentGetter,
    idempotent: true,
    response: AgentInfo,
    query: z.object(agentRef),
    handler: async ({ query, caller, payment }) => {
      const { agent, chain } = await agentForGetter(services, caller, query);
      await payment.take({
        operation: "get-agent-info",
        chainId: chain.chainId,
        description: "agent info",
        owner: agent.ownerWallet,
        ownerLabel: `agent ${agent.agentId}`,
      });
      return {
        ...agentSummary(agent),
        registrationFile: agent.registration,
        onchainMetadata: await onchainAgent(chain, agent),
        prepareTxId: agent.prepareTxId,
      };
    },
  });
}

/** GET /get-agent-transactions */
function getAgentTransactionsRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/get-agent-transactions",
    summary:
      "What was done to an agent and to its agent tokens through this service, newest first (category erc8004 | agentToken | rams)",
    tags: ["agents"],
    access: ACCESS.agentGetter,
    idempotent: true,
    response: AgentTransactions,
    query: z.object({ ...agentRef, ...pageFields }),
    handler: async ({ query, caller, payment }) => {
      const { agent, chain } = await agentForGetter(services, caller, query);
      await payment.take({
        operation: "get-agent-transactions",
        chainId: chain.chainId,
        description: "agent transactions",
        owner: agent.ownerWallet,
        ownerLabel: `agent ${agent.agentId}`,
      });
      const page = { limit: query.limit, offset: query.offset };
      const { transactions, total } = await services.agents.activity(agent, page);
      return { agentUuid: agent.uuid, transactions: transactions.map(activityView), total, ...page };
    },
  });
}

/**
 * Agent getters and the registration files this service hosts. With a key the getters are free and
 * show the key's own agents; without one they cost the agent-getter price and the payer must own what it reads.
 */
export function agentRoutes(services: Services) {
  return [
    agentsByUuidRegistrationJsonRoute(services),
    getAgentsRoute(services),
    getAgentInfoRoute(services),
    getAgentTransactionsRoute(services),
  ];
}
