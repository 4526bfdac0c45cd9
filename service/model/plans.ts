/** Credits of each metered method (methods/metering.ts), by plan (docs/wire-conventions.md, Access, credits and prices). */
export const PLAN_CREDITS = { Starter: 10, Professional: 100, Enterprise: 10_000 } as const;
export type Plan = keyof typeof PLAN_CREDITS;
export const PLANS = Object.keys(PLAN_CREDITS) as Plan[];

/** The governance-token faucet has its own balance: 10 lifetime claims per key, on every plan. */
export const FAUCET_CREDIT_METHOD = "faucet";
export const FAUCET_CREDITS = 10;

/**
 * POST /create-kyc-link has its own balance, "invitation": the plan's credits (10 / 100 / 10000), one per accepted call
 * (answered "Invitation credit limit exceeded" when spent: clients match on those words).
 */
export const INVITATION_CREDIT_METHOD = "invitation";
