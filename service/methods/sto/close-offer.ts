import { z } from "zod";
import { stoEscrowInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { email, integerString } from "../../wire/fields";
import { signerFields } from "../common";
import { defineMethod } from "../types";
import type { PlannedCall } from "../../model/batch";
import { recordOfferingEvents, requireOpenOffering, offeringIdOf } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken, requireTokenizer } from "../../domains/tokenization/tokens";
import { currentOffering, escrowOf } from "../../domains/offerings/offerings";

/** A withdrawal is ~81k gas measured; the ceiling stands in while the close before it is not mined. */
const WITHDRAW_GAS_CEILING = 130_000n;

const body = z.object({ ...signerFields, tokenizerEmail: email.optional(), tokenSymbol: z.string().trim().min(1) });
type Body = z.infer<typeof body>;

/**
 * Closes the ongoing offering: soft cap reached → tokens claimable and the proceeds the tokenizer's (withdrawn in the
 * same batch when the tokenizer closes); otherwise refunds open. The tokenizer may close at any time; anyone may once
 * the end date passed or the hard cap is filled.
 */
export const closeOffer = defineMethod({
  name: "closeOffer",
  area: "sto",
  summary: "Close the ongoing offering (success: the tokenizer withdraws the proceeds; failure opens refunds)",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["offering.closed"],
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
    const calls: PlannedCall[] = [
      {
        to: token.escrowAddress,
        data: stoEscrowInterface.encodeFunctionData("close"),
        description: `close offering ${current.id} of ${token.symbol} (${outcome})`,
      },
    ];
    if (isTokenizer && outcome === "success" && o.proceeds > 0n) {
      calls.push({
        to: token.escrowAddress,
        data: stoEscrowInterface.encodeFunctionData("withdrawProceeds", [BigInt(current.id)]),
        description: `withdraw the proceeds of offering ${current.id} (${fromUnits(o.proceeds, pd)} ${token.paymentToken.symbol})`,
        gasCeiling: WITHDRAW_GAS_CEILING,
      });
    }
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        offeringId: current.id,
        expectedOutcome: outcome,
        raised: fromUnits(o.raised, pd),
        proceeds: fromUnits(o.proceeds, pd),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch),
});

const withdrawBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  offeringId: integerString.optional().meta({ description: "On-chain offering number; default: the latest" }),
});
type WithdrawBody = z.infer<typeof withdrawBody>;

/** The proceeds of a successful offering to the tokenizer (StoEscrow.withdrawProceeds), when someone else closed it. */
export const withdrawProceeds = defineMethod({
  name: "withdrawProceeds",
  area: "sto",
  summary: "Withdraw the proceeds of a successful offering to the tokenizer (once)",
  body: withdrawBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: WithdrawBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "withdraw an offering's proceeds");
    const escrow = escrowOf(ctx, token);
    const id = await offeringIdOf(escrow, token.symbol, b.offeringId);
    const o = await escrow.offering(id);
    if (!o.closed || !o.succeeded) {
      throw preflightError(
        `Offering ${id} of ${token.symbol} ${o.closed ? "failed: it has no proceeds" : "is not closed yet (closeOffer)"}`,
        { field: "offeringId" },
      );
    }
    if (o.proceedsWithdrawn || o.proceeds === 0n)
      throw preflightError(`The proceeds of offering ${id} of ${token.symbol} were already withdrawn`, {
        field: "offeringId",
      });
    const pd = token.paymentToken.decimals;
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.escrowAddress,
          data: stoEscrowInterface.encodeFunctionData("withdrawProceeds", [BigInt(id)]),
          description: `withdraw the proceeds of offering ${id} (${fromUnits(o.proceeds, pd)} ${token.paymentToken.symbol})`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        offeringId: id,
        proceeds: fromUnits(o.proceeds, pd),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch),
});
