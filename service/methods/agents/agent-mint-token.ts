import { ZeroAddress } from "ethers";
import { z } from "zod";
import { ACCESS } from "../../auth/access-rules";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import { agenticMethod } from "./common";
import {
  agentTokenAndAmount,
  agentTokenBody,
  encodeToken,
  recordTokenActivity,
  tokenInfo,
  tokenOwner,
} from "./agent-tokens";
import { aliasOf } from "../../wire/field-aliases";

const body = agentTokenBody({
  to: address.optional(),
  recipientAddress: aliasOf(address.optional().meta({ description: "Alias of to" }), "to"),
});
type Body = z.infer<typeof body>;

/** Mints an agent token; only its owner (the agent wallet it was created for) may, so it is always client-signed. */
export const agentMintToken = defineMethod({
  ...agenticMethod,
  name: "agentMintToken",
  summary: "Mint an agent token (signed by the token's owner)",
  body,
  access: ACCESS.agenticWrite,
  facadePath: "/x402/token/mint",
  facadeMode: "client-signed",
  async plan(ctx, b: Body) {
    const to = b.to ?? b.recipientAddress;
    if (!to) throw badRequest("to is required (or recipientAddress)", { field: "to" });
    if (to === ZeroAddress) throw badRequest("to must not be the zero address", { field: "to" });
    const { token, units } = await agentTokenAndAmount(ctx, b);
    const owner = await tokenOwner(ctx, token.tokenAddress);
    if (owner.toLowerCase() !== ctx.signer!.toLowerCase()) {
      throw preflightError(
        `signerAddress ${ctx.signer} is not the owner (${owner}) of ${token.symbol}; only the owner may mint`,
        { field: "signerAddress", owner },
      );
    }
    return {
      signer: ctx.signer!,
      calls: [
        {
          to: token.tokenAddress,
          data: encodeToken("mint", [to, units]),
          description: `mint ${b.amount} ${token.symbol} to ${to}`,
        },
      ],
      info: tokenInfo(token, units, { to }),
      record: { tokenAddress: token.tokenAddress, to, amountRaw: units.toString() },
    };
  },
  onConfirmed: recordTokenActivity,
});
