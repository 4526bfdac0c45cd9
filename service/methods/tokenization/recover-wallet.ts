import { z } from "zod";
import { ZeroAddress, ZeroHash } from "ethers";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, conflict, preflightError } from "../../errors";
import { address, email } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodContext } from "../types";
import type { PlannedCall } from "../../model/batch";
import type { TokenRecord } from "../../store/tokens";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits } from "../../model/units";
import { securityToken } from "../../domains/tokenization/tokens";
import { holdsTokenRole, tokenForRoleHolder } from "../../domains/tokenization/roles";
import { investorIdFor } from "../../domains/tokenization/investors";
import { recoveryMessage, verifyRecoveryProof } from "../../onboarding/recovery-proof";

/** A request is ~70k gas measured; the ceiling stands in while the binding before it is not mined. */
const REQUEST_GAS_CEILING = 130_000n;

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  lostWallet: address.meta({ description: "The wallet whose keys the investor lost" }),
  newWallet: address.meta({
    description:
      "The investor's new wallet: after the token's recovery delay it receives the balance, frozen amount and unclaimed dividends",
  }),
  investorEmail: email.optional().meta({ description: "The investor (default: the one recorded for lostWallet)" }),
  newWalletMessage: z.string().max(2_000).optional().meta({
    description:
      "The recovery request the new wallet signs (EIP-4361 layout). Leave it out once: the 400 answer's details.messageToSign is the message to sign",
  }),
  newWalletSignature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature, 0x-prefixed hex")
    .optional()
    .meta({ description: "newWallet's personal_sign (EIP-191) signature of newWalletMessage" }),
});
type Body = z.infer<typeof body>;

/**
 * Asks the token to recover an investor's lost wallet into its new wallet (SecurityToken.requestRecovery). The new
 * wallet proves it is the investor's by signing the request (service/onboarding/recovery-proof.ts); both wallets are
 * bound to the investor on chain first when they are not (whitelisting the new one). The token executes the recovery
 * only after its recovery delay, during which the lost wallet can cancel it (cancelWalletRecovery); then
 * executeWalletRecovery moves everything. RECOVERY_ROLE (and WHITELISTER_ROLE when a wallet must be bound first).
 */
export const recoverWallet = defineMethod({
  name: "recoverWallet",
  area: "tokenization",
  summary:
    "Request the recovery of an investor's lost wallet into its new one, proven by the new wallet; executable after the token's delay. RECOVERY_ROLE",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.recovery_pending"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "RECOVERY_ROLE");
    if (b.lostWallet === b.newWallet) throw badRequest("newWallet must differ from lostWallet", { field: "newWallet" });
    requireNewWalletProof(ctx, token, b);
    const known = await ctx.services.investors.byAddress(token.id, b.lostWallet);
    const investorEmail = b.investorEmail ?? known?.email ?? undefined;
    if (!investorEmail) {
      throw badRequest(`investorEmail is required: no investor is recorded for ${b.lostWallet} on ${token.symbol}`, {
        field: "investorEmail",
      });
    }
    const contract = securityToken(ctx, token);
    const { balance, frozen, withdrawable, lostId, newId, whitelisted } = await recoverableState(ctx, token, b);
    const investorId = await investorIdFor(ctx, token, investorEmail);
    for (const [wallet, bound, field] of [
      [b.lostWallet, lostId, "lostWallet"],
      [b.newWallet, newId, "newWallet"],
    ] as const) {
      if (bound !== ZeroHash && bound !== investorId) {
        throw preflightError(
          `${wallet} is bound to another investor than ${investorEmail} on ${token.symbol}: a recovery moves holdings only between wallets of one investor`,
          { field, boundTo: bound },
        );
      }
    }

    const toBind = [
      ...(lostId === ZeroHash ? [b.lostWallet] : []),
      ...(newId === ZeroHash || !whitelisted ? [b.newWallet] : []),
    ];
    const calls = await bindingCalls(ctx, token, b.signerAddress, toBind, investorId, investorEmail);
    calls.push({
      to: token.tokenAddress,
      data: securityTokenInterface.encodeFunctionData("requestRecovery", [b.lostWallet, b.newWallet]),
      description: `request the recovery of ${b.lostWallet} into ${b.newWallet} on ${token.symbol}`,
      gasCeiling: REQUEST_GAS_CEILING,
    });
    const delay = Number(await contract.recoveryDelay());
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        investorEmail,
        tokenBalance: fromUnits(balance, token.decimals),
        frozenAmount: fromUnits(frozen, token.decimals),
        withdrawableDividends: fromUnits(withdrawable, token.paymentToken.decimals),
        recoveryDelaySeconds: delay,
      },
      // The new wallet is recorded as the investor's when the recovery executes, not now: a request may be cancelled.
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

/** The new wallet's signed request for exactly this recovery; without one, a 400 carrying the message to sign. */
function requireNewWalletProof(ctx: MethodContext, token: TokenRecord, b: Body): void {
  const request = {
    baseUrl: ctx.services.baseUrl,
    chainId: ctx.chain.chainId,
    symbol: token.symbol,
    tokenAddress: token.tokenAddress,
    lostWallet: b.lostWallet,
    newWallet: b.newWallet,
  };
  if (!b.newWalletMessage || !b.newWalletSignature) {
    throw badRequest(
      "newWalletSignature is required: newWallet signs the recovery request (personal_sign) given in details.messageToSign, sent back as newWalletMessage",
      { field: "newWalletSignature", messageToSign: recoveryMessage(request) },
    );
  }
  verifyRecoveryProof({ ...request, message: b.newWalletMessage, signature: b.newWalletSignature });
}

/** What the lost wallet holds and both wallets' bindings, refusing a recovery the token would refuse. */
async function recoverableState(ctx: MethodContext, token: TokenRecord, b: Body) {
  const contract = securityToken(ctx, token);
  const [balance, frozen, withdrawable, pending, lostId, newId, whitelisted, newFrozen, lostFrozen, heirBalance] =
    await Promise.all([
      contract.balanceOf(b.lostWallet),
      contract.getFrozenTokens(b.lostWallet),
      contract.withdrawableDividendOf(b.lostWallet),
      contract.pendingRecovery(b.lostWallet),
      contract.investorOf(b.lostWallet),
      contract.investorOf(b.newWallet),
      contract.isWhitelisted(b.newWallet),
      contract.isFrozen(b.newWallet),
      contract.isFrozen(b.lostWallet),
      contract.balanceOf(b.newWallet),
    ]);
  if (lostFrozen && heirBalance !== 0n) {
    throw preflightError(
      `${b.lostWallet} is frozen on ${token.symbol} and ${b.newWallet} holds ${token.symbol}: a frozen wallet is recovered only into a wallet holding none, which inherits the freeze`,
      { field: "newWallet" },
    );
  }
  if (balance === 0n && frozen === 0n && withdrawable === 0n) {
    throw preflightError(`${b.lostWallet} holds no ${token.symbol}, frozen amount or unclaimed dividend to recover`, {
      field: "lostWallet",
    });
  }
  if (pending.newWallet !== ZeroAddress) {
    throw conflict(`a recovery of ${b.lostWallet} into ${pending.newWallet} is already pending on ${token.symbol}`, {
      field: "lostWallet",
      newWallet: pending.newWallet,
      executableAt: new Date(Number(pending.executableAt) * 1000).toISOString(),
    });
  }
  if (newFrozen)
    throw preflightError(`${b.newWallet} is frozen on ${token.symbol}: unfreeze it first`, {
      field: "newWallet",
      restrictionCode: 5,
      restriction: "RECEIVER_FROZEN",
    });
  return { balance, frozen, withdrawable, lostId, newId, whitelisted };
}

/** Binding (and whitelisting) the wallets not yet bound to the investor: WHITELISTER_ROLE. */
async function bindingCalls(
  ctx: MethodContext,
  token: TokenRecord,
  signer: string,
  toBind: string[],
  investorId: string,
  investorEmail: string,
): Promise<PlannedCall[]> {
  if (!toBind.length) return [];
  if (!(await holdsTokenRole(ctx, token, "WHITELISTER_ROLE", signer))) {
    throw preflightError(
      `${toBind.join(" and ")} must first be whitelisted and bound to ${investorEmail}, and signerAddress ${signer} does not hold WHITELISTER_ROLE on ${token.symbol}`,
      { field: "signerAddress", role: "WHITELISTER_ROLE" },
    );
  }
  return [
    {
      to: token.tokenAddress,
      data: securityTokenInterface.encodeFunctionData("whitelistInvestors", [toBind, toBind.map(() => investorId)]),
      description: `bind ${toBind.join(" and ")} to ${investorEmail} on ${token.symbol}`,
    },
  ];
}
