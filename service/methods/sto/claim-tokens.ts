import { getAddress } from "ethers";
import { z } from "zod";
import { stoEscrowInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { integerString } from "../../wire/fields";
import { defineMethod } from "../types";
import { investorFields, investorSigner, recordOfferingEvents, offeringIdOf } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken } from "../../domains/tokenization/tokens";
import { receiverRestriction, restrictionError } from "../../domains/tokenization/restrictions";
import { escrowOf } from "../../domains/offerings/offerings";

const body = z.object({
  ...investorFields,
  offeringId: integerString.optional().meta({ description: "On-chain offering number; default: the latest" }),
  paymentTokenSymbol: z.string().optional(),
});
type Body = z.infer<typeof body>;

/** After the offering closes: the investor's tokens (success) or its payment back (failure). Once per investor. */
export const claimTokens = defineMethod({
  name: "claimTokens",
  area: "sto",
  summary: "Claim tokens from a successful offering, or the payment back from a failed one",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: Body) => investorSigner(b),
  async plan(ctx, b) {
    const investor = getAddress(investorSigner(b));
    const token = await authorizedToken(ctx, b.tokenSymbol);
    const escrow = escrowOf(ctx, token);
    const id = await offeringIdOf(escrow, token.symbol, b.offeringId);
    const [o, invested, tokensOwed, claimed] = await Promise.all([
      escrow.offering(id),
      escrow.invested(id, investor),
      escrow.tokensOwed(id, investor),
      escrow.claimed(id, investor),
    ]);
    if (!o.closed)
      throw preflightError(`The offering of ${token.symbol} is not closed yet: claims open after closeOffer`, {
        field: "tokenSymbol",
      });
    if (invested === 0n)
      throw preflightError(`Nothing to claim: ${investor} did not invest in offering ${id} of ${token.symbol}`, {
        field: "investorAddress",
      });
    if (claimed)
      throw preflightError(`${investor} already claimed from offering ${id} of ${token.symbol}`, {
        field: "investorAddress",
      });
    if (o.succeeded) {
      const refused = await receiverRestriction(ctx, token, investor);
      if (refused.code !== 0) {
        throw restrictionError(
          token,
          refused,
          { from: "investorAddress", to: "investorAddress" },
          refused.name === "PAUSED"
            ? `${token.symbol} is paused: offering tokens are delivered once it is unpaused`
            : `${investor} cannot receive ${token.symbol} (${refused.message}): the tokenizer must whitelist or unfreeze it, or settle its position with resolveOfferingClaim (deliver to its recovery wallet, or refund)`,
        );
      }
    }
    const remainder = o.succeeded ? await escrow.remainderOf(id, investor) : 0n;
    const pd = token.paymentToken.decimals;
    const what = o.succeeded
      ? `${fromUnits(tokensOwed, token.decimals)} ${token.symbol}${remainder > 0n ? ` and ${fromUnits(remainder, pd)} ${token.paymentToken.symbol} paid above their price` : ""}`
      : `a refund of ${fromUnits(invested, pd)} ${token.paymentToken.symbol}`;
    return {
      signer: investor,
      calls: [
        {
          to: token.escrowAddress,
          data: stoEscrowInterface.encodeFunctionData("claim", [BigInt(id), investor]),
          description: `claim ${what}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        investorEmail: b.investorEmail,
        offeringId: id,
        outcome: o.succeeded ? "tokens" : "refund",
        ...(o.succeeded ? { remainderRefunded: fromUnits(remainder, pd) } : {}),
      },
      record: { tokenSymbol: token.symbol, investorEmail: b.investorEmail ?? null },
    };
  },
  onConfirmed: (tx, batch) =>
    recordOfferingEvents(tx, batch, { investorEmail: batch.record.investorEmail as string | null }),
});
