/** Initial credits per metered method, by plan (docs/wire-conventions.md, Access, credits and prices). */
export const PLAN_CREDITS = { Starter: 10, Professional: 100, Enterprise: 10_000 } as const;
export type Plan = keyof typeof PLAN_CREDITS;
export const PLANS = Object.keys(PLAN_CREDITS) as Plan[];

/** Methods whose every send (or call, for patch-token-docs) spends one credit of its own balance. */
export const METERED_METHODS = [
  "newTokenization",
  "whitelist",
  "mintToken",
  "burnToken",
  "transferTo",
  "transferFrom",
  "approve",
  "dividendDistribution",
  "newSto",
  "newInvest",
  "claimTokens",
  "closeOffer",
  "patch-token-docs",
  // Issuer controls (added to the original list of metered methods): metered like the tokenizer's other writes.
  "freezeTokens",
  "unfreezeTokens",
  "freezeAddress",
  "forcedTransfer",
  "recoverWallet",
  "pauseToken",
  "unpauseToken",
  "grantTokenRole",
  "revokeTokenRole",
  "resolveOfferingClaim",
  // Recovery in two steps, the tokenizer's handover, upgrades and proceeds (issue 48's contracts).
  "cancelWalletRecovery",
  "executeWalletRecovery",
  "transferTokenizer",
  "acceptTokenizer",
  "cancelTokenizerTransfer",
  "scheduleTokenUpgrade",
  "cancelTokenUpgrade",
  "executeTokenUpgrade",
  "withdrawProceeds",
] as const;
export type MeteredMethod = (typeof METERED_METHODS)[number];

/** The governance-token faucet has its own balance: 10 lifetime claims per key, on every plan. */
export const FAUCET_CREDIT_METHOD = "faucet";
export const FAUCET_CREDITS = 10;

/**
 * POST /create-kyc-link has its own balance, "invitation": the plan's credits (10 / 100 / 10000), one per accepted call
 * (answered "Invitation credit limit exceeded" when spent: clients match on those words).
 */
export const INVITATION_CREDIT_METHOD = "invitation";

export function isMetered(method: string): method is MeteredMethod {
  return (METERED_METHODS as readonly string[]).includes(method);
}
