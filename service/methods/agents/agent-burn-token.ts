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
  requireBalance,
  tokenInfo,
} from "./agent-tokens";

const body = agentTokenBody({
  from: address.optional().meta({ description: "Whose tokens burn: must be the signer" }),
});
type Body = z.infer<typeof body>;

/** Burns from the signer's own balance (the token's burn takes no holder), so it is always client-signed. */
export const agentBurnToken = defineMethod({
  ...agenticMethod,
  name: "agentBurnToken",
  summary: "Burn agent tokens from the signer's balance",
  body,
  access: ACCESS.agenticWrite,
  facadePath: "/x402/token/burn",
  facadeMode: "client-signed",
  async plan(ctx, b: Body) {
    const holder = ctx.signer!;
    if (b.from && b.from.toLowerCase() !== holder.toLowerCase()) {
      throw badRequest(`from ${b.from} must be the signer ${holder}: a holder burns only its own tokens`, {
        field: "from",
      });
    }
    const { token, units } = await agentTokenAndAmount(ctx, b);
    await requireBalance(ctx, token, holder, units);
    return {
      signer: holder,
      calls: [
        { to: token.tokenAddress, data: encodeToken("burn", [units]), description: `burn ${b.amount} ${token.symbol}` },
      ],
      info: tokenInfo(token, units, { from: holder }),
      record: { tokenAddress: token.tokenAddress, from: holder, amountRaw: units.toString() },
    };
  },
  onConfirmed: recordTokenActivity,
});
