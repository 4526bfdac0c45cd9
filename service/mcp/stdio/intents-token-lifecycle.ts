import { securityTokenInterface, stoEscrowInterface } from "../../chains/contracts";
import { anything, oneOf, same, type IntentContext, type IntentTable } from "./intent";
import { call, GAS } from "./intents-tokens";

/**
 * The intents of a security token's two-step controls (intent.ts says what an intent is): a recovery's cancellation and
 * execution, the tokenizer's handover, and the upgrade of the token and its escrow. Every call goes to the pinned token
 * or its escrow; an upgrade's implementation is the token's to check (it refuses one the factory does not publish).
 */
const token = securityTokenInterface;

async function pinnedToken(b: { tokenSymbol: string }, ctx: IntentContext) {
  const t = await ctx.token(b.tokenSymbol);
  return { t, label: `the token ${t.symbol}` };
}

/** One call to the token, and (optional, as the service leaves out a side already done) the same to its escrow. */
async function onBoth(
  b: { tokenSymbol: string },
  ctx: IntentContext,
  fn: string,
  args: Record<string, typeof anything>,
) {
  const { t, label } = await pinnedToken(b, ctx);
  return [
    call(token, t.address, label, fn, args, GAS.call, true),
    call(stoEscrowInterface, t.escrow, `the escrow of ${t.symbol}`, fn, args, GAS.call, true),
  ];
}

export const TOKEN_LIFECYCLE_INTENTS: IntentTable = {
  cancelWalletRecovery: {
    movesValue: false,
    async calls(b, ctx) {
      const { t, label } = await pinnedToken(b, ctx);
      return [
        call(token, t.address, label, "cancelRecovery", { lostWallet: same(b.lostWallet, "the lost wallet asked") }),
      ];
    },
  },
  executeWalletRecovery: {
    movesValue: true,
    async calls(b, ctx) {
      const { t, label } = await pinnedToken(b, ctx);
      return [
        call(
          token,
          t.address,
          label,
          "executeRecovery",
          { lostWallet: same(b.lostWallet, "the lost wallet asked") },
          GAS.batch,
        ),
      ];
    },
  },
  transferTokenizer: {
    movesValue: true,
    async calls(b, ctx) {
      const { t, label } = await pinnedToken(b, ctx);
      return [
        call(token, t.address, label, "beginDefaultAdminTransfer", {
          newAdmin: same(b.newTokenizer, "the new tokenizer asked"),
        }),
      ];
    },
  },
  acceptTokenizer: {
    movesValue: true,
    async calls(b, ctx) {
      const { t, label } = await pinnedToken(b, ctx);
      return [call(token, t.address, label, "acceptDefaultAdminTransfer", {})];
    },
  },
  cancelTokenizerTransfer: {
    movesValue: false,
    async calls(b, ctx) {
      const { t, label } = await pinnedToken(b, ctx);
      return [call(token, t.address, label, "cancelDefaultAdminTransfer", {})];
    },
  },
  scheduleTokenUpgrade: {
    movesValue: true,
    calls: (b, ctx) => onBoth(b, ctx, "scheduleUpgrade", { newImplementation: anything }),
  },
  cancelTokenUpgrade: {
    movesValue: false,
    calls: (b, ctx) => onBoth(b, ctx, "cancelUpgrade", {}),
  },
  executeTokenUpgrade: {
    movesValue: true,
    calls: (b, ctx) =>
      onBoth(b, ctx, "upgradeToAndCall", { newImplementation: anything, data: oneOf(["0x"], "no call") }),
  },
};
