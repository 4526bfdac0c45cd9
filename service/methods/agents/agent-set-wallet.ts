import { getAddress, verifyTypedData, ZeroAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { identityRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address, integerString } from "../../wire/fields";
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

/** The registry accepts a wallet signature whose deadline is at most this far ahead of the block. */
const MAX_DEADLINE_SECONDS = 300;

const body = z.object({
  ...agentCommonFields,
  ...agentRefFields,
  newWallet: address,
  deadline: integerString.meta({ description: "Unix seconds; at most 5 minutes ahead of the chain's time" }),
  signature: z
    .string()
    .trim()
    .regex(/^0x([0-9a-fA-F]{2})+$/, "must be 0x-prefixed hex")
    .max(4098),
});
type Body = z.infer<typeof body>;

/** The EIP-712 payload the new wallet signs to prove control of itself (ERC-8004 AgentWalletSet). */
export function agentWalletTypedData(
  chainId: number,
  registry: string,
  message: { agentId: bigint; newWallet: string; owner: string; deadline: bigint },
) {
  return {
    domain: { name: "ERC8004IdentityRegistry", version: "1", chainId, verifyingContract: registry },
    types: {
      AgentWalletSet: [
        { name: "agentId", type: "uint256" },
        { name: "newWallet", type: "address" },
        { name: "owner", type: "address" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "AgentWalletSet",
    message,
  };
}

/** Sets the agent's verified wallet: the new wallet signed AgentWalletSet (EIP-712, or ERC-1271 for a contract wallet). */
export const agentSetWallet = defineMethod({
  ...agenticMethod,
  name: "agentSetWallet",
  summary: "Set an agent's wallet, proven by the new wallet's EIP-712 AgentWalletSet signature",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/set-wallet",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    if (b.newWallet === ZeroAddress) throw badRequest("newWallet must not be the zero address", { field: "newWallet" });
    const agent = await storedAgent(ctx, b);
    const { sender, record } = await authorizeAgentChange(ctx, agent, "set its wallet");
    const { identity } = registries(ctx.chain);
    const agentId = BigInt(agent.agentId);
    const deadline = BigInt(b.deadline);
    const now = BigInt((await ctx.chain.provider.getBlock("latest"))!.timestamp);
    if (deadline < now)
      throw badRequest(`deadline ${deadline} has passed (chain time is ${now})`, { field: "deadline" });
    if (deadline > now + BigInt(MAX_DEADLINE_SECONDS)) {
      throw badRequest(
        `deadline ${deadline} is more than ${MAX_DEADLINE_SECONDS} seconds after the chain's time ${now}`,
        { field: "deadline" },
      );
    }
    const owner = await ownerOf(ctx, agentId);
    const typedData = agentWalletTypedData(ctx.chain.chainId, identity, {
      agentId,
      newWallet: b.newWallet,
      owner,
      deadline,
    });
    let recovered: string | undefined;
    try {
      recovered = verifyTypedData(typedData.domain, typedData.types, typedData.message, b.signature);
    } catch {
      recovered = undefined;
    }
    const isContract = (await ctx.chain.provider.getCode(b.newWallet)) !== "0x";
    if (recovered?.toLowerCase() !== b.newWallet.toLowerCase() && !isContract) {
      throw badRequest(
        `signature is not ${b.newWallet}'s EIP-712 AgentWalletSet signature (owner ${owner}, agentId ${agentId}, deadline ${deadline})`,
        {
          field: "signature",
          typedData: {
            ...typedData,
            message: { ...typedData.message, agentId: agentId.toString(), deadline: deadline.toString() },
          },
        },
      );
    }
    return {
      signer: sender,
      calls: [
        {
          to: identity,
          data: identityRegistryInterface.encodeFunctionData("setAgentWallet", [
            agentId,
            b.newWallet,
            deadline,
            b.signature,
          ]),
          description: `set the wallet of agent ${agentId} to ${b.newWallet}`,
        },
      ],
      info: { agentUuid: agent.uuid, agentId: agent.agentId, newWallet: b.newWallet },
      record: { ...record, agentUuid: agent.uuid, newWallet: getAddress(b.newWallet) },
    };
  },
  async onConfirmed(tx, batch) {
    const agentUuid = batch.record.agentUuid as string;
    await batch.services.agents.update(tx, agentUuid, { agentWallet: batch.record.newWallet as string });
    await recordAgentActivity(tx, batch, { agentUuid }, { newWallet: batch.record.newWallet });
  },
});
