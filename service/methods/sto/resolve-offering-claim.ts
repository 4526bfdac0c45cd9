import { z } from "zod";
import { ZeroHash } from "ethers";
import { IERC20Metadata__factory } from "../../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { stoEscrowInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, booleanish, integerString } from "../../wire/fields";
import { signerFields } from "../common";
import { defineMethod, type MethodContext } from "../types";
import type { PlannedCall } from "../../model/batch";
import type { TokenRecord } from "../../store/tokens";
import { recordOfferingEvents, offeringIdOf } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken, erc20, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";
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
      "Deliver the investor's tokens to this wallet of the investor (its recovery wallet): bound to the same investor on the token and allowed to receive",
  }),
  refund: booleanish.optional().meta({
    description:
      "true: pay the investment back: its tokens' price from the tokenizer (approving the escrow first when needed), the rest from the escrow",
  }),
  refundTo: address.optional().meta({
    description:
      "With refund: the wallet paid (default: the investor's own); another must be bound to the same investor",
  }),
});
type Body = z.infer<typeof body>;

/** The escrow pays a resolved claim only to the investor or to another wallet the token binds to the same investor. */
async function requireSameInvestor(
  ctx: MethodContext,
  token: TokenRecord,
  investor: string,
  recipient: string,
  field: string,
): Promise<void> {
  const contract = securityToken(ctx, token);
  const [investorId, recipientId] = await Promise.all([contract.investorOf(investor), contract.investorOf(recipient)]);
  if (investorId === ZeroHash || recipientId !== investorId) {
    throw preflightError(
      `${field} ${recipient} is not bound to the same investor as ${investor} on ${token.symbol}: whitelist it for the investor's e-mail first (whitelist), which binds it`,
      { field, investorBinding: investorId, recipientBinding: recipientId },
    );
  }
}

/** The tokens owed to the refused investor, minted to another wallet of its (which the token must accept). */
async function deliveryCalls(
  ctx: MethodContext,
  token: TokenRecord,
  id: number,
  investor: string,
  tokensOwed: bigint,
  deliverTo: string,
): Promise<PlannedCall[]> {
  await requireSameInvestor(ctx, token, investor, deliverTo, "deliverTo");
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

/**
 * The investment paid back: the price of its tokens from the tokenizer's payment tokens (approving the escrow first
 * when needed; the proceeds were the tokenizer's), what it paid above that price from the escrow.
 */
async function refundCalls(
  ctx: MethodContext,
  token: TokenRecord,
  id: number,
  investor: string,
  position: { invested: bigint; remainder: bigint },
  tokenizer: string,
  refundTo: string,
): Promise<PlannedCall[]> {
  if (refundTo !== investor) await requireSameInvestor(ctx, token, investor, refundTo, "refundTo");
  const invested = position.invested - position.remainder;
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
    data: stoEscrowInterface.encodeFunctionData("refundClaim", [BigInt(id), investor, refundTo]),
    description: `refund ${fromUnits(position.invested, pd)} ${token.paymentToken.symbol} invested by ${investor} to ${refundTo}`,
    gasCeiling: RESOLVE_GAS_CEILING,
  });
  return calls;
}

/**
 * After a successful offering, settles the position of an investor the token refuses: its tokens to another wallet bound
 * to the same investor (StoEscrow.redirectClaim) or its investment back to it or such a wallet (refundClaim).
 * Tokenizer only.
 */
export const resolveOfferingClaim = defineMethod({
  name: "resolveOfferingClaim",
  area: "sto",
  summary:
    "Settle the offering position of an investor the token refuses: tokens to its recovery wallet, or the investment back",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    if (b.refundTo !== undefined && b.refund !== true)
      throw badRequest("refundTo goes with refund: true", { field: "refundTo" });
    if ((b.deliverTo === undefined) === (b.refund !== true)) {
      throw badRequest("give either deliverTo (a wallet for the tokens) or refund: true", {
        field: b.deliverTo === undefined ? "deliverTo" : "refund",
      });
    }
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "resolve an investor's offering claim");
    const escrow = escrowOf(ctx, token);
    const id = await offeringIdOf(escrow, token.symbol, b.offeringId);
    const investor = b.investorAddress;
    const [o, invested, tokensOwed, claimed, remainder, investorSide] = await Promise.all([
      escrow.offering(id),
      escrow.invested(id, investor),
      escrow.tokensOwed(id, investor),
      escrow.claimed(id, investor),
      escrow.remainderOf(id, investor),
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
        : await refundCalls(ctx, token, id, investor, { invested, remainder }, b.signerAddress, b.refundTo ?? investor);
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
        paidAboveTokensPrice: fromUnits(remainder, pd),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch),
});
