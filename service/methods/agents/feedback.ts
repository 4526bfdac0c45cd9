import { z } from "zod";
import { boundedIntegerString, integerString } from "../../wire/fields";
import { badRequest } from "../../errors";
import { agentCommonFields } from "./common";
import type { MethodContext } from "../types";
import { identityView, reputationView } from "../../domains/agents/agents";

/** Body fields of the three feedback methods that name one feedback entry. */
export const feedbackEntryFields = {
  ...agentCommonFields,
  agentId: integerString.meta({ description: "The ERC-8004 agentId (decimal)" }),
  feedbackIndex: boundedIntegerString(2n ** 64n - 1n, "2^64-1").meta({
    description: "1-based index of the client's feedback on the agent",
  }),
};

export const bytes32 = z
  .string()
  .trim()
  .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters (bytes32)");

/** The client's feedback entry: it must exist (1 ≤ index ≤ last index); `revoked` tells whether it was revoked. */
export async function feedbackEntry(
  ctx: MethodContext,
  agentId: bigint,
  client: string,
  feedbackIndex: bigint,
): Promise<{ revoked: boolean }> {
  const [last] = await reputationView<bigint>(ctx, "getLastIndex", [agentId, client]);
  if (feedbackIndex < 1n || feedbackIndex > last) {
    throw badRequest(
      last === 0n
        ? `${client} has given no feedback on agent ${agentId}`
        : `feedbackIndex ${feedbackIndex} does not exist: ${client} has given feedback 1 to ${last} on agent ${agentId}`,
      { field: "feedbackIndex", lastIndex: last.toString() },
    );
  }
  const entry = await reputationView<unknown>(ctx, "readFeedback", [agentId, client, feedbackIndex]);
  return { revoked: Boolean(entry[4]) };
}

/** True when `wallet` owns the agent or is approved for it (the registry refuses its feedback as self-feedback). */
export async function isOwnerOrOperator(ctx: MethodContext, wallet: string, agentId: bigint): Promise<boolean> {
  const [authorized] = await identityView<boolean>(ctx, "isAuthorizedOrOwner", [wallet, agentId]);
  return authorized;
}
