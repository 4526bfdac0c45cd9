import { getAddress } from "ethers";
import { z } from "zod";
import { IERC20Metadata__factory } from "../../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { stoEscrowInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { decimalAmount } from "../../wire/fields";
import { defineMethod } from "../types";
import { investorFields, investorSigner, recordOfferingEvents } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, toUnits } from "../../model/units";
import { authorizedToken, erc20 } from "../../domains/tokenization/tokens";
import { receiverRestriction, restrictionError } from "../../domains/tokenization/restrictions";
import { chainNow, currentOffering, escrowOf } from "../../domains/offerings/offerings";

/** A first investment measured 172k gas (npm run bench); the ceiling covers an invest whose approval is not mined yet. */
const INVEST_GAS_CEILING = 260_000n;

const body = z.object({
  ...investorFields,
  investmentAmount: decimalAmount.meta({ description: "Payment-token amount, human units" }),
  paymentTokenSymbol: z.string().trim().optional(),
});
type Body = z.infer<typeof body>;

/**
 * Invests in the token's ongoing offering. When the investor's allowance to the escrow is short, the batch approves
 * first (two transactions). The part above the hard cap is never taken.
 */
export const newInvest = defineMethod({
  name: "newInvest",
  area: "sto",
  summary: "Invest in the ongoing offering (approve first when the allowance is short)",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: Body) => investorSigner(b),
  async plan(ctx, b) {
    const investor = getAddress(investorSigner(b));
    const token = await authorizedToken(ctx, b.tokenSymbol);
    if (b.paymentTokenSymbol && b.paymentTokenSymbol.toUpperCase() !== token.paymentToken.symbol) {
      throw badRequest(`paymentTokenSymbol must be ${token.paymentToken.symbol}`, { field: "paymentTokenSymbol" });
    }
    const pd = token.paymentToken.decimals;
    const amount = toUnits(b.investmentAmount, pd, "investmentAmount");
    const current = await currentOffering(ctx, token);
    const o = current.offering;
    if (!o || o.closed) throw preflightError(`${token.symbol} has no ongoing offering`, { field: "tokenSymbol" });
    const now = await chainNow(ctx);
    if (o.paused) throw preflightError(`The offering of ${token.symbol} is paused`, { field: "tokenSymbol" });
    if (now < Number(o.startTime)) {
      throw preflightError(
        `The offering of ${token.symbol} has not started: it opens at ${new Date(Number(o.startTime) * 1000).toISOString()}`,
        { field: "tokenSymbol" },
      );
    }
    if (now >= Number(o.endTime))
      throw preflightError(`The offering of ${token.symbol} has ended`, { field: "tokenSymbol" });
    // The escrow takes money only from an investor the token would deliver to (ERC-7943 canReceive), and none while
    // the token is paused: both show in the issuance code.
    const refused = await receiverRestriction(ctx, token, investor);
    if (refused.code !== 0) {
      throw restrictionError(
        token,
        refused,
        { from: "investorAddress", to: "investorAddress" },
        refused.name === "PAUSED"
          ? `${token.symbol} is paused: its offering takes no investment until it is unpaused`
          : `Investor ${investor} cannot receive ${token.symbol} (${refused.message}), so the offering takes no investment from it`,
      );
    }
    const remaining = o.hardCap - o.raised;
    if (remaining === 0n)
      throw preflightError(`The offering of ${token.symbol} reached its hard cap`, { field: "investmentAmount" });
    const accepted = amount < remaining ? amount : remaining;
    if (accepted < o.minInvestment && remaining >= o.minInvestment) {
      throw preflightError(
        `investmentAmount ${b.investmentAmount} is below the minimum investment of ${fromUnits(o.minInvestment, pd)}`,
        { field: "investmentAmount" },
      );
    }
    const [already, owed] = await Promise.all([
      escrowOf(ctx, token).invested(current.id, investor),
      escrowOf(ctx, token).tokensOwed(current.id, investor),
    ]);
    if (already + accepted > o.maxInvestment) {
      throw preflightError(
        `investmentAmount ${b.investmentAmount} takes ${investor} above the maximum investment of ${fromUnits(o.maxInvestment, pd)} (already invested ${fromUnits(already, pd)})`,
        { field: "investmentAmount" },
      );
    }
    const payment = erc20(ctx, token.paymentToken.address);
    const [balance, allowance] = await Promise.all([
      payment.balanceOf(investor),
      payment.allowance(investor, token.escrowAddress),
    ]);
    if (balance < accepted)
      throw preflightError(`Insufficient ${token.paymentToken.symbol} balance: ${fromUnits(balance, pd)}`, {
        field: "investmentAmount",
      });

    const calls = [];
    if (allowance < accepted) {
      calls.push({
        to: token.paymentToken.address,
        data: IERC20Metadata__factory.createInterface().encodeFunctionData("approve", [token.escrowAddress, accepted]),
        description: `approve the offering escrow for ${fromUnits(accepted, pd)} ${token.paymentToken.symbol}`,
      });
    }
    calls.push({
      to: token.escrowAddress,
      data: stoEscrowInterface.encodeFunctionData("invest", [accepted]),
      description: `invest ${fromUnits(accepted, pd)} ${token.paymentToken.symbol} in ${token.symbol}`,
      gasCeiling: INVEST_GAS_CEILING,
    });
    // The escrow prices the whole position: what this ticket adds to the tokens the investor is owed.
    const tokens = ((already + accepted) * o.tokenAmount) / o.hardCap - owed;
    return {
      signer: investor,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        investorEmail: b.investorEmail,
        offeringId: current.id,
        acceptedAmount: fromUnits(accepted, pd),
        refundedAmount: fromUnits(amount - accepted, pd),
        expectedTokens: fromUnits(tokens, token.decimals),
      },
      record: { tokenSymbol: token.symbol, investorEmail: b.investorEmail ?? null },
    };
  },
  onConfirmed: (tx, batch) =>
    recordOfferingEvents(tx, batch, { investorEmail: batch.record.investorEmail as string | null }),
});
