import { getAddress } from "ethers";
import { z } from "zod";
import { agentTokenFactoryInterface, parseEventLog } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address, decimalAmount, integerString } from "../../wire/fields";
import { agentCommonFields, agenticMethod, ownerEmailOf, recordAgentActivity } from "./common";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { toUnits } from "../../model/units";

const agentSymbol = z.string().trim().regex(/^[A-Z0-9]{2,11}$/, "must match ^[A-Z0-9]{2,11}$");

const body = z.object({
  ...agentCommonFields,
  name: z.string().trim().min(1).max(100),
  symbol: agentSymbol.optional(),
  tokenSymbol: agentSymbol.optional(),
  agentWallet: address.meta({ description: "Owns the token and may mint it" }),
  premint: decimalAmount.default("0").meta({ description: "Human units minted to agentWallet" }),
  decimals: integerString.default("18"),
});
type Body = z.infer<typeof body>;

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
    if (!Number.isInteger(decimals) || decimals > 18) throw badRequest("decimals must be an integer from 0 to 18", { field: "decimals" });
    const premint = toUnits(b.premint, decimals, "premint", { allowZero: true });
    const factory = ctx.chain.deployment.contracts.AgentTokenFactory;
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: factory,
          data: agentTokenFactoryInterface.encodeFunctionData("createAgentToken", [b.name, symbol, decimals, b.agentWallet, premint]),
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
        const event = parseEventLog(agentTokenFactoryInterface, log);
        if (event?.name !== "AgentTokenCreated") continue;
        const tokenAddress = getAddress(event.args.token);
        await tx.write(
          `INSERT INTO agent_tokens (token_address, chain_id, agent_wallet, creator, name, symbol, decimals, premint, owner_email, tx_id, tx_hash)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT (token_address) DO NOTHING`,
          [
            tokenAddress,
            batch.chain.chainId,
            getAddress(event.args.agentWallet),
            getAddress(event.args.creator),
            event.args.name,
            event.args.symbol,
            Number(event.args.decimals),
            event.args.premint.toString(),
            batch.record.ownerEmail ?? null,
            batch.txId,
            receipt.hash,
          ],
        );
        await recordAgentActivity(tx, batch, { tokenAddress }, { tokenAddress, symbol: event.args.symbol, agentWallet: getAddress(event.args.agentWallet), premintRaw: event.args.premint.toString() });
        return { tokenAddress, agentWallet: getAddress(event.args.agentWallet), symbol: event.args.symbol };
      }
    }
  },
});
