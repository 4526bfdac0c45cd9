import { z } from "zod";
import { identityRegistryInterface } from "../../chains/contracts";
import { badRequest, forbidden, preflightError } from "../../errors";
import {
  address,
  chainIdInput,
  email,
  executionMode,
  gasLimitField,
  integerString,
  nonceField,
} from "../../wire/fields";
import type { Queryable } from "../../store/db";
import type { AgentCategory, AgentRecord } from "../../store/agents";
import type { ConfirmedBatch, MethodContext, MethodServices } from "../types";
import { AGENT_CHAINS, baseChainOf, ownerOf, registries } from "../../domains/agents/agents";
import { aliasOf, wireOnly } from "../../wire/field-aliases";
/** Fields every agentic body may carry (the common prepare fields and the x402 facades' own). */
export const agentCommonFields = {
  method: wireOnly(z.string().optional(), "the path or the tool names the method"),
  chainId: chainIdInput.optional().meta({ description: "8453 or 84532 (default: the environment's Base chain)" }),
  executionMode: executionMode.optional(),
  signerAddress: address.optional().meta({ description: "Required when client-signed; omitted when service-relayed" }),
  gasLimit: gasLimitField.optional(),
  nonce: nonceField.optional(),
  privateRpcUrl: wireOnly(
    z.string().optional().meta({ description: "Accepted for compatibility; the service uses its own RPC" }),
    "the service uses its own RPC",
  ),
  ownerEmail: email.optional(),
  email: aliasOf(email.optional().meta({ description: "Alias of ownerEmail" }), "ownerEmail"),
};

/** An agent named by agentUuid (this service's handle) or agentId (its ERC-721 id on the chain's registry). */
export const agentRefFields = {
  agentUuid: z.string().trim().uuid("must be the agentUuid returned by agentRegister").optional(),
  agentId: integerString.optional().meta({ description: "The ERC-8004 agentId (decimal)" }),
};

/** What an agentic method's definition shares: chains, default chain, signer rule. */
export const agenticMethod = {
  area: "agents" as const,
  chains: AGENT_CHAINS,
  defaultChainId: baseChainOf,
  signerOf: (b: { signerAddress?: string }) => {
    if (!b.signerAddress)
      throw badRequest("signerAddress is required for a client-signed prepare", { field: "signerAddress" });
    return b.signerAddress;
  },
};

/**
 * Who sends a change to a stored agent, and who must pay for it when relayed. Client-signed: the signer must be the
 * agent's on-chain owner (or an operator it approved). Relayed: only agents the relayer holds in custody, for the
 * wallet that paid their registration; that wallet must pay (checked at send).
 */
export async function authorizeAgentChange(
  ctx: MethodContext,
  agent: Pick<AgentRecord, "agentId"> & { ownerWallet?: AgentRecord["ownerWallet"] | null },
  action: string,
): Promise<{ sender: string; record: Record<string, unknown> }> {
  const agentId = BigInt(agent.agentId);
  const sender = ctx.signer!;
  const relayed = ctx.executionMode === "service-relayed";
  if (relayed) {
    // Only an agent registered here is held for a known payer: any other is acted on by its owner, client-signed.
    if (!agent.ownerWallet) {
      throw badRequest(
        `agent ${agent.agentId} was not registered through this service: ${action} must be client-signed by its owner`,
        { field: "executionMode" },
      );
    }
    const owner = await ownerOf(ctx, agentId);
    if (owner.toLowerCase() !== sender.toLowerCase()) {
      throw badRequest(
        `agent ${agent.agentId} is held by its owner ${owner}, not by the service's relayer: ${action} must be client-signed by the owner`,
        { field: "executionMode", owner },
      );
    }
    return { sender, record: { requiredPayer: agent.ownerWallet } };
  }
  const { identity } = registries(ctx.chain);
  const data = identityRegistryInterface.encodeFunctionData("isAuthorizedOrOwner", [sender, agentId]);
  const [authorized] = identityRegistryInterface.decodeFunctionResult(
    "isAuthorizedOrOwner",
    await ctx.chain.provider.call({ to: identity, data }),
  );
  if (!authorized) {
    const owner = await ownerOf(ctx, agentId);
    const held = owner.toLowerCase() === ctx.services.relayer.address(ctx.chain.chainId).toLowerCase();
    throw preflightError(
      held
        ? `agent ${agent.agentId} is held by the service's relayer for ${agent.ownerWallet}: ${action} must be service-relayed and paid by that wallet (or take ownership first with agentTransferOwnership)`
        : `signerAddress ${sender} is not the owner (${owner}) of agent ${agent.agentId} nor approved by it; only the owner may ${action}`,
      { field: "signerAddress", owner },
    );
  }
  return { sender, record: {} };
}

/**
 * The relayed-payer rules a plan recorded: `requiredPayer` (only the wallet an agent is held for may pay for changes
 * to it) and `refusedPayers` (e.g. an agent's owner may not pay for feedback on it). Checked at send, before the
 * payment is verified or held.
 */
export async function relayedPayerRule(
  _services: MethodServices,
  batch: { plan: Record<string, unknown> },
  payer: string,
): Promise<void> {
  const required = batch.plan.requiredPayer as string | undefined;
  if (required && required.toLowerCase() !== payer.toLowerCase()) {
    const why =
      (batch.plan.requiredPayerReason as string | undefined) ??
      `Only ${required}, for whom the service holds this agent, may pay for changes to it`;
    throw forbidden(`${why}; the payment is from ${payer}`, {
      payer,
      requiredPayer: required,
    });
  }
  for (const refused of (batch.plan.refusedPayers as { address: string; reason: string }[] | undefined) ?? []) {
    if (refused.address.toLowerCase() === payer.toLowerCase()) throw badRequest(refused.reason, { payer });
  }
}

export const ownerEmailOf = (b: { ownerEmail?: string; email?: string }) => b.ownerEmail ?? b.email;

/** One line of an agent's (or agent token's) history, written when its batch is confirmed. */
export function recordAgentActivity(
  tx: Queryable,
  batch: ConfirmedBatch,
  subject: { agentUuid?: string | null; tokenAddress?: string | null; category?: AgentCategory },
  details: Record<string, unknown>,
): Promise<void> {
  return batch.services.agents.recordActivity(tx, {
    txId: batch.txId,
    chainId: batch.chain.chainId,
    agentUuid: subject.agentUuid ?? null,
    tokenAddress: subject.tokenAddress ?? null,
    category: subject.category ?? (subject.tokenAddress ? "agentToken" : "erc8004"),
    method: batch.method,
    txHashes: batch.receipts.map((r) => r.hash),
    details: { ...details, executionMode: batch.executionMode, ...(batch.payer ? { paidBy: batch.payer } : {}) },
  });
}
