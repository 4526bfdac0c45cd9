import { ZeroHash } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { reputationRegistryInterface, parseEventLog } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { defineMethod } from "../types";
import { agentCommonFields, agenticMethod, agentRefFields, recordAgentActivity, relayedPayerRule } from "./common";
import { bytes32, isOwnerOrOperator } from "./feedback";
import { agentOnChain, registries } from "../../domains/agents/agents";
import { aliasOf } from "../../wire/field-aliases";

/** The reputation registry's bound on |value|. */
const MAX_ABS_VALUE = 10n ** 38n;

const text = (max: number) => z.string().max(max).optional();
const body = z.object({
  ...agentCommonFields,
  ...agentRefFields,
  value: z
    .union([z.string().trim(), z.number()])
    .transform((v) => String(v))
    .pipe(z.string().regex(/^-?\d+(\.\d+)?$/, "must be a number such as 85, -2 or 4.5"))
    .meta({ type: "string", example: "85" }),
  valueDecimals: z
    .union([z.string().trim(), z.number()])
    .transform((v) => String(v))
    .pipe(z.string().regex(/^\d{1,2}$/, "must be an integer from 0 to 18"))
    .optional(),
  tag1: text(100),
  tag2: text(100),
  endpoint: text(2048),
  feedbackURI: text(2048),
  feedbackUri: aliasOf(text(2048).meta({ description: "Alias of feedbackURI" }), "feedbackURI"),
  feedbackHash: bytes32.optional(),
});
type Body = z.infer<typeof body>;

/** "4.5" → 45 at 1 decimal; "85" with valueDecimals 2 → 85 at 2 decimals. */
function scaledValue(b: Body): { value: bigint; valueDecimals: number } {
  const [whole, fraction = ""] = b.value.replace(/^-/, "").split(".");
  const negative = b.value.startsWith("-");
  if (fraction && b.valueDecimals !== undefined)
    throw badRequest("value must be an integer when valueDecimals is given", { field: "value" });
  const valueDecimals = b.valueDecimals !== undefined ? Number(b.valueDecimals) : fraction.length;
  if (valueDecimals > 18) throw badRequest("valueDecimals must be an integer from 0 to 18", { field: "valueDecimals" });
  const magnitude = BigInt(whole + fraction);
  if (magnitude > MAX_ABS_VALUE) throw badRequest("value must be at most 1e38 in absolute value", { field: "value" });
  return { value: negative ? -magnitude : magnitude, valueDecimals };
}

/**
 * Gives feedback on an agent (reputation registry). The client is the signer, or the service's relayer when relayed;
 * the registry refuses feedback by the agent's owner or operators, and so does this prepare. Relayed feedback may not
 * be paid for by the agent's owner either, and only its payer may later have it revoked through the relayer.
 */
export const agentGiveFeedback = defineMethod({
  ...agenticMethod,
  name: "agentGiveFeedback",
  summary: "Give feedback on an agent (ERC-8004 reputation registry)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/feedback/give",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const { value, valueDecimals } = scaledValue(b);
    const { agentId, owner, agent } = await agentOnChain(ctx, b);
    const client = ctx.signer!;
    const relayed = ctx.executionMode === "service-relayed";
    if (await isOwnerOrOperator(ctx, client, agentId)) {
      throw badRequest(
        relayed
          ? `Self-feedback not allowed: the service's relayer holds agent ${agentId}, so relayed feedback on it would be its own; give it client-signed`
          : `Self-feedback not allowed: ${client} owns agent ${agentId} or operates it`,
        { field: relayed ? "executionMode" : "signerAddress", owner },
      );
    }
    const controller = agent?.ownerWallet ?? owner;
    const refusedPayers = relayed
      ? [...new Set([owner, controller])].map((address) => ({
          address,
          reason: `Self-feedback not allowed: the paying wallet ${address} owns agent ${agentId}`,
        }))
      : [];
    const { reputation } = registries(ctx.chain);
    const feedbackURI = b.feedbackURI ?? b.feedbackUri ?? "";
    return {
      signer: client,
      calls: [
        {
          to: reputation,
          data: reputationRegistryInterface.encodeFunctionData("giveFeedback", [
            agentId,
            value,
            valueDecimals,
            b.tag1 ?? "",
            b.tag2 ?? "",
            b.endpoint ?? "",
            feedbackURI,
            b.feedbackHash ?? ZeroHash,
          ]),
          description: `give feedback ${b.value} on agent ${agentId}`,
        },
      ],
      info: {
        agentUuid: agent?.uuid,
        agentId: agentId.toString(),
        clientAddress: client,
        value: value.toString(),
        valueDecimals,
        reputationRegistryAddress: reputation,
      },
      record: { agentUuid: agent?.uuid ?? null, agentId: agentId.toString(), refusedPayers },
    };
  },
  async onConfirmed(tx, batch) {
    const { reputation } = registries(batch.chain);
    for (const log of batch.receipts.flatMap((r) => r.logs)) {
      if (log.address.toLowerCase() !== reputation.toLowerCase()) continue;
      const event = parseEventLog(reputationRegistryInterface, log);
      if (event?.name !== "NewFeedback") continue;
      const feedbackIndex = event.args.feedbackIndex.toString();
      const client = event.args.clientAddress as string;
      if (batch.executionMode === "service-relayed" && batch.payer) {
        await batch.services.agents.recordRelayedFeedback(tx, {
          chainId: batch.chain.chainId,
          agentId: batch.record.agentId as string,
          client,
          feedbackIndex,
          payer: batch.payer,
          txId: batch.txId,
        });
      }
      await recordAgentActivity(
        tx,
        batch,
        { agentUuid: batch.record.agentUuid as string | null },
        {
          agentId: batch.record.agentId,
          clientAddress: client,
          feedbackIndex,
          value: event.args.value.toString(),
          valueDecimals: Number(event.args.valueDecimals),
          tag1: event.args.tag1,
          tag2: event.args.tag2,
        },
      );
      return { agentId: batch.record.agentId as string, clientAddress: client, feedbackIndex };
    }
  },
});
