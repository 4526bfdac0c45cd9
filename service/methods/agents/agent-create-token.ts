import { z } from "zod";
import { decodeAbi, encodeCall, wordToAddress } from "../../chains/abi-words";
import { agentTokenFactoryInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address, decimalAmount, integerString } from "../../wire/fields";
import { agentCommonFields, agenticMethod, ownerEmailOf, recordAgentActivity } from "./common";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { toUnits } from "../../model/units";
import { aliasOf } from "../../wire/field-aliases";

const agentSymbol = z
  .string()
  .trim()
  .regex(/^[A-Z0-9]{2,11}$/, "must match ^[A-Z0-9]{2,11}$");

const body = z.object({
  ...agentCommonFields,
  name: z.string().trim().min(1).max(100),
  symbol: agentSymbol.optional(),
  tokenSymbol: aliasOf(agentSymbol.optional(), "symbol"),
  agentWallet: address.meta({ description: "Owns the token and may mint it" }),
  premint: decimalAmount.default("0").meta({ description: "Human units minted to agentWallet" }),
  decimals: integerString.default("18"),
});
type Body = z.infer<typeof body>;

const CREATE_AGENT_TOKEN = agentTokenFactoryInterface.getFunction("createAgentToken").selector;
const AGENT_TOKEN_CREATED = agentTokenFactoryInterface.getEvent("AgentTokenCreated").topicHash;

/**
 * The factory's AgentTokenCreated(token, agentWallet, creator indexed; name, symbol, decimals, premint) in `log`, or
 * undefined for any other log. Decoded by hand (chains/abi-words.ts): ethers' general decoder was ~0.3 ms of each
 * paid operation.
 */
export function agentTokenCreated(log: { topics: readonly string[]; data: string }) {
  if (log.topics.length !== 4 || log.topics[0].toLowerCase() !== AGENT_TOKEN_CREATED) return undefined;
  const [name, symbol, decimals, premint] = decodeAbi(["string", "string", "uint", "uint"], log.data) as [
    string,
    string,
    bigint,
    bigint,
  ];
  if (decimals > 255n) throw new RangeError("AgentTokenCreated: decimals is not a uint8");
  const [token, agentWallet, creator] = log.topics.slice(1).map(wordToAddress);
  return { token, agentWallet, creator, name, symbol, decimals, premint };
}

/**
 * An AI agent's own ERC-20, created through the agent-token factory (owner and premint: agentWallet). Agentic: paid
 * per call through x402 or with a key, and the service's relayer may send it, since ownership does not follow the sender.
 */
export const agentCreateToken = defineMethod({
  ...agenticMethod,
  name: "agentCreateToken",
  aliases: ["createToken"],
  summary: "Create an agent-owned ERC-20 (Base / Base Sepolia); x402-payable, relayable",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  anyRelayerKey: true,
  facadePath: "/x402/token/create",
  async plan(ctx, b: Body) {
    const symbol = b.symbol ?? b.tokenSymbol;
    if (!symbol) throw badRequest("symbol is required", { field: "symbol" });
    const decimals = Number(b.decimals);
    if (!Number.isInteger(decimals) || decimals > 18)
      throw badRequest("decimals must be an integer from 0 to 18", { field: "decimals" });
    const premint = toUnits(b.premint, decimals, "premint", { allowZero: true });
    const factory = ctx.chain.deployment.contracts.AgentTokenFactory;
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: factory,
          data: encodeCall(CREATE_AGENT_TOKEN, [
            { string: b.name },
            { string: symbol },
            { uint: BigInt(decimals) },
            { address: b.agentWallet },
            { uint: premint },
          ]),
          description: `create agent token ${symbol} owned by ${b.agentWallet}`,
        },
      ],
      info: { tokenSymbol: symbol, agentWallet: b.agentWallet, contract: factory, ownerEmail: ownerEmailOf(b) },
      record: { ownerEmail: ownerEmailOf(b) ?? null },
    };
  },
  async onConfirmed(tx, batch) {
    const factory = batch.chain.deployment.contracts.AgentTokenFactory.toLowerCase();
    for (const receipt of batch.receipts) {
      for (const log of receipt.logs) {
        if (log.address.toLowerCase() !== factory) continue;
        const event = agentTokenCreated(log);
        if (!event) continue;
        const tokenAddress = event.token;
        await tx.write(
          `INSERT INTO agent_tokens (token_address, chain_id, agent_wallet, creator, name, symbol, decimals, premint, owner_email, tx_id, tx_hash)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT (token_address) DO NOTHING`,
          [
            tokenAddress,
            batch.chain.chainId,
            event.agentWallet,
            event.creator,
            event.name,
            event.symbol,
            Number(event.decimals),
            event.premint.toString(),
            batch.record.ownerEmail ?? null,
            batch.txId,
            receipt.hash,
          ],
        );
        await recordAgentActivity(
          tx,
          batch,
          { tokenAddress },
          { tokenAddress, symbol: event.symbol, agentWallet: event.agentWallet, premintRaw: event.premint.toString() },
        );
        return { tokenAddress, agentWallet: event.agentWallet, symbol: event.symbol };
      }
    }
  },
});
