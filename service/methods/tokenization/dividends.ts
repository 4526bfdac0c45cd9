import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, decimalAmount } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, toUnits } from "../../model/units";
import { authorizedToken, erc20, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";

const distributionBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  amount: decimalAmount.meta({ description: "Payment-token amount in human units, e.g. 1000 (USDC)" }),
  paymentTokenAddress: address.optional(),
});
type DistributionBody = z.infer<typeof distributionBody>;

/**
 * Distributes payment-token dividends pro rata to current holders. The token pulls the amount from the tokenizer,
 * so the tokenizer must first approve the TOKEN's address (not the escrow) on the payment token.
 */
export const dividendDistribution = defineMethod({
  name: "dividendDistribution",
  area: "tokenization",
  summary: "Distribute payment-token dividends to holders (approve the token address first)",
  body: distributionBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: DistributionBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "distribute dividends");
    if (b.paymentTokenAddress && b.paymentTokenAddress.toLowerCase() !== token.paymentToken.address.toLowerCase()) {
      throw badRequest(`paymentTokenAddress must be ${token.symbol}'s payment token ${token.paymentToken.address}`, {
        field: "paymentTokenAddress",
      });
    }
    const units = toUnits(b.amount, token.paymentToken.decimals, "amount");
    const payment = erc20(ctx, token.paymentToken.address);
    const [allowance, balance, supply] = await Promise.all([
      payment.allowance(b.signerAddress, token.tokenAddress),
      payment.balanceOf(b.signerAddress),
      securityToken(ctx, token).totalSupply(),
    ]);
    if (supply === 0n)
      throw preflightError(`${token.symbol} has no supply yet: there is nobody to distribute to`, {
        field: "tokenSymbol",
      });
    if (allowance < units) {
      throw preflightError("Insufficient allowance to distribute dividends", {
        field: "amount",
        allowance: fromUnits(allowance, token.paymentToken.decimals),
        spenderToApprove: token.tokenAddress,
        paymentToken: token.paymentToken.symbol,
      });
    }
    if (balance < units) {
      throw preflightError(`Insufficient ${token.paymentToken.symbol} balance to distribute ${b.amount}`, {
        field: "amount",
      });
    }
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("distributeDividends", [units]),
          description: `distribute ${b.amount} ${token.paymentToken.symbol} to ${token.symbol} holders`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        paymentToken: token.paymentToken.symbol,
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

const claimBody = z.object({ ...signerFields, tokenSymbol: z.string().trim().min(1) });
type ClaimBody = z.infer<typeof claimBody>;

/**
 * Sends a holder its withdrawable dividends (not in the original method list: holders must be able to collect). A holder
 * frozen as a whole address, or any holder of a paused token, is refused: the entitlement waits. A holder removed from
 * the whitelist still collects what it earned (paying a dividend moves no token; docs/issuer-controls.md).
 */
export const claimDividends = defineMethod({
  name: "claimDividends",
  area: "tokenization",
  summary: "Withdraw the signer's accumulated dividends",
  body: claimBody,
  access: ACCESS.keyMethod,
  metered: false,
  signerOf: (b: ClaimBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    const contract = securityToken(ctx, token);
    const [withdrawable, frozen, paused] = await Promise.all([
      contract.withdrawableDividendOf(b.signerAddress),
      contract.isFrozen(b.signerAddress),
      contract.paused(),
    ]);
    if (withdrawable === 0n)
      throw preflightError(`${b.signerAddress} has no ${token.symbol} dividends to claim`, { field: "signerAddress" });
    const amount = `${fromUnits(withdrawable, token.paymentToken.decimals)} ${token.paymentToken.symbol}`;
    if (frozen) {
      throw preflightError(
        `${b.signerAddress} is frozen on ${token.symbol}: its dividends (${amount}) are held, not forfeited, and claimable once it is unfrozen`,
        {
          field: "signerAddress",
          restrictionCode: 4,
          restriction: "SENDER_FROZEN",
          withdrawable: fromUnits(withdrawable, token.paymentToken.decimals),
        },
      );
    }
    if (paused) {
      throw preflightError(
        `${token.symbol} is paused: dividends (${amount} for ${b.signerAddress}) are claimable once it is unpaused`,
        { field: "tokenSymbol", restrictionCode: 1, restriction: "PAUSED" },
      );
    }
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("claimDividends"),
          description: `claim ${fromUnits(withdrawable, token.paymentToken.decimals)} ${token.paymentToken.symbol} of dividends`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        withdrawable: fromUnits(withdrawable, token.paymentToken.decimals),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});
