import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, email } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { securityToken } from "../../domains/tokenization/tokens";
import { tokenForRoleHolder } from "../../domains/tokenization/roles";
import { investorHints } from "./mint-token";

/** A recovery is ~115k gas measured; the ceiling covers one whose new wallet's whitelisting is not mined yet. */
const RECOVERY_GAS_CEILING = 250_000n;

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  lostWallet: address.meta({ description: "The wallet whose keys the investor lost" }),
  newWallet: address.meta({
    description: "The investor's new wallet: receives the balance, frozen amount and unclaimed dividends",
  }),
  investorEmail: email.optional().meta({ description: "Recorded for the new wallet (default: the lost wallet's)" }),
});
type Body = z.infer<typeof body>;

/**
 * ERC-3643 recoveryAddress: the lost wallet's whole balance, frozen amount, address freeze and unclaimed dividends move
 * to the investor's new wallet, and the lost wallet leaves the whitelist. A new wallet not yet whitelisted is
 * whitelisted first in the same batch when the tokenizer signs (only it may whitelist). RECOVERY_ROLE.
 */
export const recoverWallet = defineMethod({
  name: "recoverWallet",
  area: "tokenization",
  summary: "Recover an investor's lost wallet to its new one (balance, freezes, dividends); tokenizer or RECOVERY_ROLE",
  body,
  access: ACCESS.keyMethod,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "RECOVERY_ROLE");
    if (b.lostWallet === b.newWallet) throw badRequest("newWallet must differ from lostWallet", { field: "newWallet" });
    const contract = securityToken(ctx, token);
    const [balance, frozen, withdrawable, whitelisted, newFrozen] = await Promise.all([
      contract.balanceOf(b.lostWallet),
      contract.getFrozenTokens(b.lostWallet),
      contract.withdrawableDividendOf(b.lostWallet),
      contract.isWhitelisted(b.newWallet),
      contract.isFrozen(b.newWallet),
    ]);
    if (balance === 0n && frozen === 0n && withdrawable === 0n) {
      throw preflightError(`${b.lostWallet} holds no ${token.symbol}, frozen amount or unclaimed dividend to recover`, {
        field: "lostWallet",
      });
    }
    if (newFrozen)
      throw preflightError(`${b.newWallet} is frozen on ${token.symbol}: unfreeze it first`, {
        field: "newWallet",
        restrictionCode: 5,
        restriction: "RECEIVER_FROZEN",
      });
    const isTokenizer = b.signerAddress.toLowerCase() === token.tokenizerAddress.toLowerCase();
    if (!whitelisted && !isTokenizer) {
      throw preflightError(
        `${b.newWallet} is not whitelisted for ${token.symbol}: the tokenizer must whitelist it before the recovery`,
        {
          field: "newWallet",
          restrictionCode: 3,
          restriction: "RECEIVER_NOT_WHITELISTED",
        },
      );
    }
    const calls = [];
    if (!whitelisted) {
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("setWhitelisted", [b.newWallet, true]),
        description: `whitelist ${b.newWallet}`,
      });
    }
    calls.push({
      to: token.tokenAddress,
      data: securityTokenInterface.encodeFunctionData("recoveryAddress", [b.lostWallet, b.newWallet]),
      description: `recover ${b.lostWallet} to ${b.newWallet} on ${token.symbol}`,
      gasCeiling: RECOVERY_GAS_CEILING,
    });
    const known = await ctx.services.investors.byAddress(token.id, b.lostWallet);
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        investorEmail: b.investorEmail ?? known?.email ?? undefined,
        tokenBalance: fromUnits(balance, token.decimals),
        frozenAmount: fromUnits(frozen, token.decimals),
        withdrawableDividends: fromUnits(withdrawable, token.paymentToken.decimals),
      },
      record: {
        tokenSymbol: token.symbol,
        investors: [
          {
            address: b.newWallet,
            email: b.investorEmail ?? known?.email ?? null,
            firstName: known?.firstName ?? null,
            lastName: known?.lastName ?? null,
            investorType: known?.investorType ?? null,
          },
        ],
      },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(investorHints),
});
