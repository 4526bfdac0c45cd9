import { z } from "zod";
import { stoEscrowInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { email } from "../../wire/fields";
import { signerFields } from "../common";
import { defineMethod } from "../types";
import { recordOfferingEvents, requireOpenOffering } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken } from "../../domains/tokenization/tokens";
import { currentOffering } from "../../domains/offerings/offerings";

const body = z.object({ ...signerFields, tokenizerEmail: email.optional(), tokenSymbol: z.string().trim().min(1) });
type Body = z.infer<typeof body>;

/**
 * Closes the ongoing offering: soft cap reached → funds to the tokenizer, tokens claimable; otherwise refunds open.
 * The tokenizer may close at any time; anyone may once the end date passed or the hard cap is filled.
 */
export const closeOffer = defineMethod({
  name: "closeOffer",
  area: "sto",
  summary: "Close the ongoing offering (success pays the tokenizer; failure opens refunds)",
  body,
  access: ACCESS.keyMethod,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    const current = await currentOffering(ctx, token);
    const o = requireOpenOffering(current, token.symbol);
    const isTokenizer = token.tokenizerAddress.toLowerCase() === b.signerAddress.toLowerCase();
    if (!isTokenizer && current.status !== "ENDED") {
      throw preflightError(
        `Only the tokenizer may close the offering of ${token.symbol} before its end date or hard cap`,
        { field: "signerAddress" },
      );
    }
    const pd = token.paymentToken.decimals;
    const outcome = o.raised >= o.softCap ? "success" : "failure";
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.escrowAddress,
          data: stoEscrowInterface.encodeFunctionData("close"),
          description: `close offering ${current.id} of ${token.symbol} (${outcome})`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        offeringId: current.id,
        expectedOutcome: outcome,
        raised: fromUnits(o.raised, pd),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch),
});
