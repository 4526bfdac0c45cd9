import { z } from "zod";
import { ZeroAddress } from "ethers";
import { securityTokenInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodContext } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { authorizedToken, securityToken } from "../../domains/tokenization/tokens";
import { holdsTokenRole, tokenForRoleHolder } from "../../domains/tokenization/roles";
import type { TokenRecord } from "../../store/tokens";

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  lostWallet: address.meta({ description: "The wallet whose recovery is pending" }),
});
type Body = z.infer<typeof body>;

/** The token and its pending recovery of `lostWallet` (a 400 when there is none). */
async function pendingOf(ctx: MethodContext, token: TokenRecord, lostWallet: string) {
  const pending = await securityToken(ctx, token).pendingRecovery(lostWallet);
  if (pending.newWallet === ZeroAddress) {
    throw preflightError(`no recovery of ${lostWallet} is pending on ${token.symbol}`, { field: "lostWallet" });
  }
  return { newWallet: pending.newWallet, executableAt: Number(pending.executableAt) };
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * Cancels a pending recovery (SecurityToken.cancelRecovery): signed by the wallet being recovered, which proves it is
 * not lost, or by a RECOVERY_ROLE holder that withdraws its request.
 */
export const cancelWalletRecovery = defineMethod({
  name: "cancelWalletRecovery",
  area: "tokenization",
  summary: "Cancel a pending wallet recovery: signed by the wallet being recovered (it is not lost) or RECOVERY_ROLE",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.recovery_pending"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const byOwner = b.signerAddress === b.lostWallet;
    const token = byOwner
      ? await authorizedToken(ctx, b.tokenSymbol)
      : await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "RECOVERY_ROLE");
    const pending = await pendingOf(ctx, token, b.lostWallet);
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("cancelRecovery", [b.lostWallet]),
          description: `cancel the recovery of ${b.lostWallet} into ${pending.newWallet} on ${token.symbol}`,
        },
      ],
      info: {
        tokenSymbol: token.symbol,
        lostWallet: b.lostWallet,
        newWallet: pending.newWallet,
        cancelledBy: byOwner ? "the wallet being recovered" : "a RECOVERY_ROLE holder",
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

/**
 * Executes a pending recovery once the token's delay is over (SecurityToken.executeRecovery): the lost wallet's
 * balance, frozen amount and unclaimed dividends move to the new wallet. RECOVERY_ROLE, or the new wallet itself.
 */
export const executeWalletRecovery = defineMethod({
  name: "executeWalletRecovery",
  area: "tokenization",
  summary: "Execute a pending wallet recovery after the token's delay; RECOVERY_ROLE or the new wallet",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.wallet_recovered", "token.frozen", "token.address_frozen"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol).catch(() =>
      tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "RECOVERY_ROLE"),
    );
    const pending = await pendingOf(ctx, token, b.lostWallet);
    const byHeir = b.signerAddress === pending.newWallet;
    if (!byHeir && !(await holdsTokenRole(ctx, token, "RECOVERY_ROLE", b.signerAddress))) {
      throw preflightError(
        `signerAddress ${b.signerAddress} may not execute this recovery: RECOVERY_ROLE or the new wallet ${pending.newWallet}`,
        { field: "signerAddress", role: "RECOVERY_ROLE" },
      );
    }
    const now = (await ctx.chain.provider.getBlock("latest"))?.timestamp ?? Math.floor(Date.now() / 1000);
    if (now < pending.executableAt) {
      throw preflightError(
        `the recovery of ${b.lostWallet} on ${token.symbol} may be executed from ${iso(pending.executableAt)} on (the token's recovery delay; the lost wallet may cancel it until then)`,
        { field: "lostWallet", executableAt: iso(pending.executableAt) },
      );
    }
    const contract = securityToken(ctx, token);
    const [balance, frozen, withdrawable] = await Promise.all([
      contract.balanceOf(b.lostWallet),
      contract.getFrozenTokens(b.lostWallet),
      contract.withdrawableDividendOf(b.lostWallet),
    ]);
    const known = await ctx.services.investors.byAddress(token.id, b.lostWallet);
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("executeRecovery", [b.lostWallet]),
          description: `recover ${b.lostWallet} into ${pending.newWallet} on ${token.symbol}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        lostWallet: b.lostWallet,
        newWallet: pending.newWallet,
        investorEmail: known?.email ?? undefined,
        tokenBalance: fromUnits(balance, token.decimals),
        frozenAmount: fromUnits(frozen, token.decimals),
        withdrawableDividends: fromUnits(withdrawable, token.paymentToken.decimals),
      },
      record: {
        tokenSymbol: token.symbol,
        investors: [{ address: pending.newWallet, email: known?.email ?? null }],
      },
    };
  },
  onConfirmed: recordEventsOfRecordedToken((record) => {
    const list = (record.investors ?? []) as { address: string; email: string | null }[];
    return new Map(list.map((i) => [i.address.toLowerCase(), i.email]));
  }),
});
