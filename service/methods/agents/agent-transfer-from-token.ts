import { ZeroAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { badRequest } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { agenticMethod, relayedPayerRule } from "./common";
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
  from: address,
  to: address.optional(),
  recipientAddress: aliasOf(address.optional().meta({ description: "Alias of to" }), "to"),
});
type Body = z.infer<typeof body>;

/**
 * Moves `from`'s agent tokens on its allowance to the spender: the signer, or the service's relayer when relayed. A
 * relayed transferFrom must be paid by `from` itself, so an allowance to the relayer can never be spent by a stranger.
 */
export const agentTransferFromToken = defineMethod({
  ...agenticMethod,
  name: "agentTransferFromToken",
  summary: "Transfer agent tokens from an approving holder (spender: the signer, or the relayer when relayed)",
  body,
  access: ACCESS.agenticWrite,
  relayable: true,
  facadePath: "/x402/token/transfer-from",
  checkRelayedPayer: relayedPayerRule,
  async plan(ctx, b: Body) {
    const to = b.to ?? b.recipientAddress;
    if (!to) throw badRequest("to is required (or recipientAddress)", { field: "to" });
    if (to === ZeroAddress) throw badRequest("to must not be the zero address", { field: "to" });
    const { token, units } = await agentTokenAndAmount(ctx, b);
    const spender = ctx.signer!;
    await requireBalance(ctx, token, b.from, units);
    await requireAllowance(ctx, token, b.from, spender, units);
    const relayed = ctx.executionMode === "service-relayed";
    return {
      signer: spender,
      calls: [
        {
          to: token.tokenAddress,
          data: encodeToken("transferFrom", [b.from, to, units]),
          description: `transfer ${b.amount} ${token.symbol} from ${b.from} to ${to}`,
        },
      ],
      info: tokenInfo(token, units, { from: b.from, to, spender }),
      record: {
        tokenAddress: token.tokenAddress,
        from: b.from,
        to,
        amountRaw: units.toString(),
        ...(relayed
          ? {
              requiredPayer: b.from,
              requiredPayerReason: `Only ${b.from}, whose tokens move, may pay for a relayed transferFrom`,
            }
          : {}),
      },
    };
  },
  onConfirmed: recordTokenActivity,
});
