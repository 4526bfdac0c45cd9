import { ZeroAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { badRequest } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { agenticMethod } from "./common";
import {
  agentTokenAndAmount,
  agentTokenBody,
  encodeToken,
  recordTokenActivity,
  requireAllowance,
  requireBalance,
  tokenInfo,
} from "./agent-tokens";
import { aliasOf } from "../../wire/field-aliases";

const body = agentTokenBody({
  to: address.optional(),
  recipientAddress: aliasOf(address.optional().meta({ description: "Alias of to" }), "to"),
});
type Body = z.infer<typeof body>;

/** Gas ceiling of a relayed transfer, whose calldata (it names the payer) is completed at send. */
const RELAYED_TRANSFER_GAS = 120_000n;

/**
 * Transfers agent tokens. Client-signed: from the signer's balance. Service-relayed: the paying wallet's own tokens move
 * (the relayer calls transferFrom(payer, to, amount) on the allowance the payer gave it with agentApproveToken), so a
 * gasless holder pays in USDC and the relayer pays the gas.
 */
export const agentTransferToken = defineMethod({
  ...agenticMethod,
  name: "agentTransferToken",
  summary: "Transfer agent tokens (relayed: the payer's tokens, through its allowance to the relayer)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/token/transfer",
  async plan(ctx, b: Body) {
    const to = b.to ?? b.recipientAddress;
    if (!to) throw badRequest("to is required (or recipientAddress)", { field: "to" });
    if (to === ZeroAddress) throw badRequest("to must not be the zero address", { field: "to" });
    const { token, units } = await agentTokenAndAmount(ctx, b);
    const record = { tokenAddress: token.tokenAddress, to, amountRaw: units.toString() };
    if (ctx.executionMode === "service-relayed") {
      return {
        signer: ctx.signer!,
        calls: [
          {
            to: token.tokenAddress,
            data: encodeToken("transferFrom", [ZeroAddress, to, units]),
            description: `transfer ${b.amount} ${token.symbol} from the paying wallet to ${to}`,
            completedAtSend: true,
            gasCeiling: RELAYED_TRANSFER_GAS,
          },
        ],
        info: tokenInfo(token, units, {
          to,
          from: "the wallet that pays the send (it must have approved the relayer)",
          relayer: ctx.signer,
        }),
        record,
      };
    }
    await requireBalance(ctx, token, ctx.signer!, units);
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: token.tokenAddress,
          data: encodeToken("transfer", [to, units]),
          description: `transfer ${b.amount} ${token.symbol} to ${to}`,
        },
      ],
      info: tokenInfo(token, units, { to, from: ctx.signer }),
      record: { ...record, from: ctx.signer },
    };
  },
  /** The payer must hold the amount and have approved the relayer for it; refused before its payment is taken. */
  async checkRelayedPayer(services, batch, payer) {
    const chain = services.chains.find(batch.chainId)!;
    const ctx = { services, chain, signer: batch.signer };
    const token = (await services.agents.tokenByAddress(batch.chainId, batch.plan.tokenAddress as string))!;
    const units = BigInt(batch.plan.amountRaw as string);
    await requireBalance(ctx, token, payer, units);
    await requireAllowance(ctx, token, payer, batch.signer, units);
  },
  async bindRelayed(_services, batch, _index, payer) {
    return encodeToken("transferFrom", [payer, batch.plan.to, BigInt(batch.plan.amountRaw as string)]);
  },
  async onConfirmed(tx, batch) {
    await recordTokenActivity(tx, { ...batch, record: { ...batch.record, from: batch.record.from ?? batch.payer } });
  },
});
