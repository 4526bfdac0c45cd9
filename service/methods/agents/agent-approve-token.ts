import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { badRequest } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { agenticMethod } from "./common";
import { agentTokenAndAmount, agentTokenBody, encodeToken, recordTokenActivity, tokenInfo } from "./agent-tokens";
import { aliasOf } from "../../wire/field-aliases";

const body = agentTokenBody({
  spenderAddress: address.optional(),
  spender: aliasOf(address.optional().meta({ description: "Alias of spenderAddress" }), "spenderAddress"),
});
type Body = z.infer<typeof body>;

/** Approves a spender over the signer's agent tokens (e.g. the service's relayer, for relayed transfers). Client-signed. */
export const agentApproveToken = defineMethod({
  ...agenticMethod,
  name: "agentApproveToken",
  aliases: ["agentApprove"],
  summary: "Approve a spender of the signer's agent tokens",
  body,
  access: ACCESS.agenticWrite,
  facadePath: "/x402/token/approve",
  facadeMode: "client-signed",
  async plan(ctx, b: Body) {
    const spender = b.spenderAddress ?? b.spender;
    if (!spender) throw badRequest("Missing spender address parameter", { field: "spenderAddress" });
    const { token, units } = await agentTokenAndAmount(ctx, b, { allowZero: true });
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: token.tokenAddress,
          data: encodeToken("approve", [spender, units]),
          description: `approve ${spender} for ${b.amount} ${token.symbol}`,
        },
      ],
      info: tokenInfo(token, units, { spenderAddress: spender }),
      record: { tokenAddress: token.tokenAddress, spender, amountRaw: units.toString() },
    };
  },
  onConfirmed: recordTokenActivity,
});
