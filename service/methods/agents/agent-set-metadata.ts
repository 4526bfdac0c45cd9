import { hexlify, toUtf8Bytes } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { identityRegistryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { defineMethod } from "../types";
import {
  agentCommonFields,
  agenticMethod,
  agentRefFields,
  authorizeAgentChange,
  recordAgentActivity,
  relayedPayerRule,
} from "./common";
import { registries, storedAgent } from "../../domains/agents/agents";

/** The registry reserves this key for the verified agent wallet (set with agentSetWallet). */
const RESERVED_KEY = "agentWallet";
const MAX_VALUE_BYTES = 8192;

const body = z.object({
  ...agentCommonFields,
  ...agentRefFields,
  metadataKey: z.string().trim().min(1).max(100).optional(),
  metadataValue: z.unknown().optional().meta({ description: "A string (string, hex) or any JSON value (json)" }),
  metadataEncoding: z.enum(["string", "json", "hex"]).default("string"),
  aiModelName: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Also stored on-chain under the key aiModelName" }),
  aiModelProvider: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Also stored on-chain under the key aiModelProvider" }),
});
type Body = z.infer<typeof body>;

/**
 * The bytes stored for a value, as existing clients expect them read back: `string` stores its UTF-8 bytes; `json`
 * stores the JSON text of the value (a string value is stored JSON-quoted, as the hosted service does); `hex` stores
 * the bytes of a 0x string.
 */
function encodeValue(value: unknown, encoding: Body["metadataEncoding"]): { bytes: string; shown: string } {
  if (encoding === "json") {
    const text = JSON.stringify(value);
    if (text === undefined) throw badRequest("metadataValue is required", { field: "metadataValue" });
    return { bytes: hexlify(toUtf8Bytes(text)), shown: text };
  }
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
    throw badRequest(`metadataValue must be a string with metadataEncoding ${encoding} (use json for objects)`, {
      field: "metadataValue",
    });
  }
  const text = String(value);
  if (encoding === "hex") {
    if (!/^0x([0-9a-fA-F]{2})*$/.test(text))
      throw badRequest("metadataValue must be 0x-prefixed hex of whole bytes with metadataEncoding hex", {
        field: "metadataValue",
      });
    return { bytes: text.toLowerCase(), shown: text.toLowerCase() };
  }
  return { bytes: hexlify(toUtf8Bytes(text)), shown: text };
}

/** Sets on-chain metadata of a stored agent: metadataKey/metadataValue, and aiModelName / aiModelProvider under their own keys. */
export const agentSetMetadata = defineMethod({
  ...agenticMethod,
  name: "agentSetMetadata",
  summary: "Set on-chain metadata of an agent (setMetadata on the ERC-8004 registry)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/agent/set-metadata",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const entries: { key: string; bytes: string; shown: string }[] = [];
    if (b.metadataKey !== undefined) {
      if (b.metadataKey === RESERVED_KEY)
        throw badRequest("metadataKey agentWallet is reserved: set the agent wallet with agentSetWallet", {
          field: "metadataKey",
        });
      if (b.metadataValue === undefined || b.metadataValue === null)
        throw badRequest("metadataValue is required with metadataKey", { field: "metadataValue" });
      entries.push({ key: b.metadataKey, ...encodeValue(b.metadataValue, b.metadataEncoding) });
    } else if (b.metadataValue !== undefined) {
      throw badRequest("metadataKey is required with metadataValue", { field: "metadataKey" });
    }
    if (b.aiModelName) entries.push({ key: "aiModelName", ...encodeValue(b.aiModelName, "string") });
    if (b.aiModelProvider) entries.push({ key: "aiModelProvider", ...encodeValue(b.aiModelProvider, "string") });
    if (!entries.length)
      throw badRequest("metadataKey is required (or aiModelName / aiModelProvider)", { field: "metadataKey" });
    for (const e of entries) {
      if ((e.bytes.length - 2) / 2 > MAX_VALUE_BYTES)
        throw badRequest(`metadata value of ${e.key} is larger than ${MAX_VALUE_BYTES} bytes`, {
          field: "metadataValue",
        });
    }
    const agent = await storedAgent(ctx, b);
    const { sender, record } = await authorizeAgentChange(ctx, agent, "set its metadata");
    const { identity } = registries(ctx.chain);
    const first = entries[0];
    return {
      signer: sender,
      calls: entries.map((e) => ({
        to: identity,
        data: identityRegistryInterface.encodeFunctionData("setMetadata", [BigInt(agent.agentId), e.key, e.bytes]),
        description: `set metadata ${e.key} of agent ${agent.agentId}`,
      })),
      info: {
        agentUuid: agent.uuid,
        agentId: agent.agentId,
        metadataKey: first.key,
        metadataValue: first.shown,
        keys: entries.map((e) => e.key),
      },
      record: { ...record, agentUuid: agent.uuid, keys: entries.map((e) => e.key) },
    };
  },
  async onConfirmed(tx, batch) {
    const agentUuid = batch.record.agentUuid as string;
    for (const key of batch.record.keys as string[])
      await batch.services.agents.update(tx, agentUuid, { metadataKey: key });
    await recordAgentActivity(tx, batch, { agentUuid }, { keys: batch.record.keys });
  },
});
