import { stoEscrowInterface, usdcInterface } from "../../chains/contracts";
import { anything, atMost, equal, same, unitsOf, type IntentTable } from "./intent";
import { call, GAS } from "./intents-tokens";

/**
 * The intents of the offering methods (intent.ts says what an intent is): every call goes to the token's escrow (or its
 * payment token, for an approval of that escrow), with the request's amounts in the token's and the payment token's
 * pinned decimals.
 */
export const OFFERING_INTENTS: IntentTable = {
  newSto: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const pd = t.paymentToken.decimals;
      const seconds = (date: string) => BigInt(Math.floor(Date.parse(date) / 1000));
      const amount = (value: string, what: string, decimals = pd) => equal(unitsOf(value, decimals), what);
      return [
        call(stoEscrowInterface, t.escrow, `the escrow of ${t.symbol}`, "newOffering", {
          tokenAmount: amount(b.tokenAmount ?? b.issuanceAmount, "the tokens offered", t.decimals),
          price: equal(0n, "0"),
          softCap: amount(b.minRaiseUSD ?? b.softCap, "the soft cap asked"),
          hardCap: amount(b.maxRaiseUSD ?? b.hardCap, "the hard cap asked"),
          minInvestment: amount(b.minInvestment, "the minimum investment asked"),
          maxInvestment: amount(b.maxInvestment, "the maximum investment asked"),
          startTime: equal(seconds(b.startDate), "the start asked"),
          endTime: equal(seconds(b.endDate), "the end asked"),
        }),
      ];
    },
  },
  newInvest: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const most = atMost(
        unitsOf(b.investmentAmount, t.paymentToken.decimals),
        `the ${b.investmentAmount} ${t.paymentToken.symbol} asked`,
      );
      return [
        call(
          usdcInterface,
          t.paymentToken.address,
          t.paymentToken.symbol,
          "approve",
          { spender: same(t.escrow, "the escrow of the token"), value: most },
          GAS.call,
          true,
        ),
        call(stoEscrowInterface, t.escrow, `the escrow of ${t.symbol}`, "invest", { amount: most }),
      ];
    },
  },
  claimTokens: {
    movesValue: false,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const offering = b.offeringId === undefined ? anything : equal(BigInt(b.offeringId), "the offering asked");
      return [
        call(stoEscrowInterface, t.escrow, `the escrow of ${t.symbol}`, "claim", {
          offeringId: offering,
          investor: same(ctx.wallet, "this wallet"),
        }),
      ];
    },
  },
  closeOffer: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const escrow = `the escrow of ${t.symbol}`;
      return [
        call(stoEscrowInterface, t.escrow, escrow, "close", {}),
        // Closed by the tokenizer after a success, the proceeds are withdrawn in the same batch (to the tokenizer).
        call(stoEscrowInterface, t.escrow, escrow, "withdrawProceeds", { offeringId: anything }, GAS.call, true),
      ];
    },
  },
  withdrawProceeds: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const offering = b.offeringId === undefined ? anything : equal(BigInt(b.offeringId), "the offering asked");
      return [
        call(stoEscrowInterface, t.escrow, `the escrow of ${t.symbol}`, "withdrawProceeds", { offeringId: offering }),
      ];
    },
  },
  resolveOfferingClaim: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const escrow = `the escrow of ${t.symbol}`;
      const offering = b.offeringId === undefined ? anything : equal(BigInt(b.offeringId), "the offering asked");
      const investor = same(b.investorAddress, "the investor asked");
      if (b.deliverTo !== undefined)
        return [
          call(stoEscrowInterface, t.escrow, escrow, "redirectClaim", {
            offeringId: offering,
            investor,
            recipient: same(b.deliverTo, "the wallet asked"),
          }),
        ];
      // The refund's amount is the escrow's record of the investment: the approval goes to the escrow only.
      return [
        call(
          usdcInterface,
          t.paymentToken.address,
          t.paymentToken.symbol,
          "approve",
          { spender: same(t.escrow, "the escrow of the token"), value: anything },
          GAS.call,
          true,
        ),
        call(stoEscrowInterface, t.escrow, escrow, "refundClaim", {
          offeringId: offering,
          investor,
          recipient: same(b.refundTo ?? b.investorAddress, "the wallet asked"),
        }),
      ];
    },
  },
};
