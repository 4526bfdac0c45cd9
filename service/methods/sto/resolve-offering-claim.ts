import { z } from "zod";
import { IERC20Metadata__factory } from "../../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { stoEscrowInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, booleanish, integerString } from "../../wire/fields";
import { signerFields } from "../common";
import { defineMethod, type MethodContext } from "../types";
import type { PlannedCall } from "../../model/batch";
import type { TokenRecord } from "../../store/tokens";
import { recordOfferingEvents } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken, erc20, requireTokenizer } from "../../domains/tokenization/tokens";
import { escrowOf } from "../../domains/offerings/offerings";
import { receiverRestriction, restrictionError } from "../../domains/tokenization/restrictions";

/** redirectClaim mints like claim (~105k gas); the ceiling covers a refund whose approval is not mined yet. */
const RESOLVE_GAS_CEILING = 200_000n;

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  investorAddress: address.meta({
    description: "The investor the token no longer accepts (removed from the whitelist, frozen, or recovered)",
  }),
  offeringId: integerString.optional().meta({ description: "On-chain offering number; default: the latest" }),
  deliverTo: address.optional().meta({
    description:
      "Deliver the investor's tokens to this wallet of the investor (its recovery wallet); must be allowed to receive",
  }),
  refund: booleanish
    .optional()
    .meta({ description: "true: pay the investment back from the tokenizer (approving the escrow first when needed)" }),
});
type Body = z.infer<typeof body>;

/** The tokens owed to the refused investor, minted to another wallet of its (which the token must accept). */
async function deliveryCalls(
  ctx: MethodContext,
  token: TokenRecord,
  id: number,
  investor: string,
  tokensOwed: bigint,
  deliverTo: string,
): Promise<PlannedCall[]> {
  const recipient = await receiverRestriction(ctx, token, deliverTo);
  if (recipient.code !== 0)
    throw restrictionError(
      token,
      recipient,
      { from: "investorAddress", to: "deliverTo" },
      `deliverTo ${deliverTo} cannot receive ${token.symbol}: ${recipient.message}`,
    );
  return [
    {
      to: token.escrowAddress,
      data: stoEscrowInterface.encodeFunctionData("redirectClaim", [BigInt(id), investor, deliverTo]),
      description: `deliver ${fromUnits(tokensOwed, token.decimals)} ${token.symbol} owed to ${investor} to ${deliverTo}`,
    },
  ];
}

/** The investment paid back from the tokenizer's payment tokens, approving the escrow first when needed. */
async function refundCalls(
  ctx: MethodContext,
  token: TokenRecord,
  id: number,
  investor: string,
  invested: bigint,
  tokenizer: string,
): Promise<PlannedCall[]> {
  const pd = token.paymentToken.decimals;
  const payment = erc20(ctx, token.paymentToken.address);
  const [balance, allowance] = await Promise.all([
    payment.balanceOf(tokenizer),
    payment.allowance(tokenizer, token.escrowAddress),
  ]);
  if (balance < invested) {
    throw preflightError(
      `Insufficient ${token.paymentToken.symbol} balance to refund ${fromUnits(invested, pd)}: the tokenizer holds ${fromUnits(balance, pd)}`,
      { field: "refund" },
    );
  }
  const calls: PlannedCall[] = [];
  if (allowance < invested) {
    calls.push({
      to: token.paymentToken.address,
      data: IERC20Metadata__factory.createInterface().encodeFunctionData("approve", [token.escrowAddress, invested]),
      description: `approve the offering escrow for ${fromUnits(invested, pd)} ${token.paymentToken.symbol}`,
    });
  }
  calls.push({
    to: token.escrowAddress,
    data: stoEscrowInterface.encodeFunctionData("refundClaim", [BigInt(id), investor]),
    description: `refund ${fromUnits(invested, pd)} ${token.paymentToken.symbol} to ${investor}`,
    gasCeiling: RESOLVE_GAS_CEILING,
  });
  return calls;
}

/**
 * After a successful offering, settles the position of an investor the token refuses: its tokens to another wallet of
 * the investor (StoEscrow.redirectClaim) or its investment back from the tokenizer (refundClaim). Tokenizer only.
 */
export const resolveOfferingClaim = defineMethod({
  name: "resolveOfferingClaim",
  area: "sto",
  summary:
    "Settle the offering position of an investor the token refuses: tokens to its recovery wallet, or the investment back",
  body,
  access: ACCESS.keyMethod,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    if ((b.deliverTo === undefined) === (b.refund !== true)) {
      throw badRequest("give either deliverTo (a wallet for the tokens) or refund: true", {
        field: b.deliverTo === undefined ? "deliverTo" : "refund",
      });
    }
    const token = await authorizedToken(ctx, b.tokenSymbol);
    requireTokenizer(token, b.signerAddress, "resolve an investor's offering claim");
    const escrow = escrowOf(ctx, token);
    const latest = Number(await escrow.currentOfferingId());
    const id = b.offeringId !== undefined ? Number(b.offeringId) : latest;
    if (id === 0 || id > latest)
      throw preflightError(`${token.symbol} has no offering ${b.offeringId ?? ""}`.trim(), { field: "offeringId" });
    const investor = b.investorAddress;
    const [o, invested, tokensOwed, claimed, investorSide] = await Promise.all([
      escrow.offering(id),
      escrow.invested(id, investor),
      escrow.tokensOwed(id, investor),
      escrow.claimed(id, investor),
      receiverRestriction(ctx, token, investor),
    ]);
    if (!o.closed || !o.succeeded) {
      throw preflightError(
        `Offering ${id} of ${token.symbol} ${o.closed ? "failed: its investors claim their refunds with claimTokens" : "is not closed yet"}`,
        { field: "offeringId" },
      );
    }
    if (invested === 0n)
      throw preflightError(`${investor} did not invest in offering ${id} of ${token.symbol}`, {
        field: "investorAddress",
      });
    if (claimed)
      throw preflightError(`${investor}'s position in offering ${id} of ${token.symbol} is already settled`, {
        field: "investorAddress",
      });
    if (investorSide.code === 0) {
      throw preflightError(`${investor} can receive ${token.symbol}: it claims its tokens itself (claimTokens)`, {
        field: "investorAddress",
      });
    }
    const calls =
      b.deliverTo !== undefined
        ? await deliveryCalls(ctx, token, id, investor, tokensOwed, b.deliverTo)
        : await refundCalls(ctx, token, id, investor, invested, b.signerAddress);
    const pd = token.paymentToken.decimals;
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        offeringId: id,
        outcome: b.deliverTo !== undefined ? "delivered" : "refunded",
        investorRestriction: investorSide.name,
        tokens: fromUnits(tokensOwed, token.decimals),
        investment: fromUnits(invested, pd),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch),
});
