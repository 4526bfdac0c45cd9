import type { Interface } from "ethers";
import { securityTokenInterface, tokenFactoryInterface, usdcInterface } from "../../chains/contracts";
import { TOKEN_ROLES } from "../../domains/tokenization/roles";
import {
  anything,
  each,
  equal,
  fields,
  IntentError,
  oneOf,
  pinned,
  same,
  unitsOf,
  type ArgCheck,
  type ExpectedCall,
  type IntentContext,
  type IntentTable,
} from "./intent";
import { paymentDecimals } from "./pins";

/**
 * The intents of the security-token methods (the offerings' are in intents-offerings.ts) (intent.ts says what an intent is). Amounts are the request's
 * in the token's pinned decimals; every recipient, spender and account is one the request names (an investor named
 * by e-mail only is refused here: the wallet the service would pick is not the request's); contracts are the pinned
 * deployment's, the token's and its escrow's.
 */

/** Gas bounds: a call's measured cost with room (a deployment through the factory, a batch, a plain call). */
export const GAS = { deploy: 8_000_000n, batch: 2_000_000n, call: 400_000n };

export function call(
  abi: Interface,
  to: string,
  contract: string,
  fn: string,
  args: Record<string, ArgCheck>,
  gas: bigint = GAS.call,
  optional = false,
): ExpectedCall {
  return { abi, to: to.toLowerCase(), contract, fn, args, gas, ...(optional ? { optional } : {}) };
}

/** A token or a payment asset by symbol, as the service resolves it (USDC and USDT are the chain's). */
async function asset(
  ctx: IntentContext,
  symbol: string,
): Promise<{ address: string; decimals: number; label: string }> {
  const upper = symbol.toUpperCase();
  if (upper === "USDC" || upper === "USDT") {
    const contracts = await ctx.contracts();
    return { address: pinned(contracts, upper), decimals: paymentDecimals(upper, ctx.chainId), label: upper };
  }
  const token = await ctx.token(symbol);
  return { address: token.address, decimals: token.decimals, label: `the token ${symbol}` };
}

/**
 * The wallets a list of entries names (`first`: a wallet named elsewhere for entry i, which the service takes before
 * the entry's own); an entry with none is refused (the service would choose it).
 */
function named(
  entries: { investorAddress?: string }[],
  field: string,
  first: (i: number) => string | undefined = () => undefined,
): string[] {
  return entries.map((entry, i) => {
    const wallet = first(i) ?? entry.investorAddress;
    if (!wallet)
      throw new IntentError(
        `${field}.${i}: name the wallet (investorAddress): this server signs only for wallets the request names`,
      );
    return wallet;
  });
}

const token = securityTokenInterface;

export const TOKEN_INTENTS: IntentTable = {
  newTokenization: {
    movesValue: true,
    async calls(b, ctx) {
      const contracts = await ctx.contracts();
      const decimals = b.decimals === undefined ? 18 : Number(b.decimals);
      const holders = named(
        b.preMints.map((p: { investorAddress?: string }) => p),
        "preMints",
        (i) => b.initialHolders[i]?.walletAddress,
      );
      const paymentSymbol = String(b.paymentTokenSymbol ?? "USDC").toUpperCase() === "USDC" ? "USDC" : "USDT";
      const paymentToken = b.paymentTokenAddress ?? pinned(contracts, paymentSymbol);
      const params = fields({
        name: equal(b.tokenName ?? b.name, "the name asked"),
        symbol: equal(b.tokenSymbol ?? b.symbol, "the symbol asked"),
        decimals: equal(decimals, "the decimals asked"),
        supplyCap: equal(unitsOf(b.supplyCap, decimals), "the supply cap asked"),
        paymentToken: same(paymentToken, "the payment token"),
        initialHolders: (v) =>
          JSON.stringify((v as string[]).map((a) => a.toLowerCase())) ===
          JSON.stringify(holders.map((a) => a.toLowerCase()))
            ? undefined
            : "are not the holders asked",
        // The service binds each holder to an investor id of its own making (a keyed hash): one per holder.
        initialInvestorIds: (v) =>
          (v as string[]).length === holders.length ? undefined : "are not one investor id per holder",
        preMints: (v) =>
          JSON.stringify((v as bigint[]).map(String)) ===
          JSON.stringify(b.preMints.map((p: { amount: string }) => String(unitsOf(p.amount, decimals))))
            ? undefined
            : "are not the premints asked",
      });
      const factory = pinned(contracts, "TokenFactory");
      return [call(tokenFactoryInterface, factory, "the TokenFactory", "newTokenization", { params }, GAS.deploy)];
    },
  },
  mintToken: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const wallets = named(b.userToMint, "userToMint");
      const label = `the token ${t.symbol}`;
      const inRequest = oneOf(wallets, "the investors of the request");
      return [
        // Recipients not yet whitelisted are whitelisted first, each bound to its investor (ids of the service's making).
        call(
          token,
          t.address,
          label,
          "whitelistInvestors",
          { wallets: each(inRequest), investorIds: anything },
          GAS.batch,
          true,
        ),
        ...b.userToMint.map((u: { amount: string }, i: number) =>
          call(token, t.address, label, "mint", {
            to: same(wallets[i], "the investor"),
            amount: equal(unitsOf(u.amount, t.decimals), `${u.amount} ${t.symbol}`),
          }),
        ),
      ];
    },
  },
  whitelist: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const wallets = named(b.userToWhitelist, "userToWhitelist");
      const label = `the token ${t.symbol}`;
      const statuses = b.userToWhitelist.map((u: { whitelistStatus: boolean }) => u.whitelistStatus);
      const added = wallets.filter((_, i) => statuses[i]);
      const removed = wallets.filter((_, i) => !statuses[i]);
      const list = (asked: string[], what: string) => (v: unknown) =>
        JSON.stringify((v as string[]).map((a) => a.toLowerCase())) ===
        JSON.stringify(asked.map((a) => a.toLowerCase()))
          ? undefined
          : `are not the ${what} asked`;
      const calls = [];
      // Wallets added are bound to their investors (ids of the service's making, one per wallet).
      if (added.length)
        calls.push(
          call(
            token,
            t.address,
            label,
            "whitelistInvestors",
            {
              wallets: list(added, "wallets to whitelist"),
              investorIds: (v) => ((v as string[]).length === added.length ? undefined : "are not one per wallet"),
            },
            GAS.batch,
          ),
        );
      if (removed.length === 1)
        calls.push(
          call(token, t.address, label, "setWhitelisted", {
            account: same(removed[0], "the investor"),
            status: equal(false, "false"),
          }),
        );
      else if (removed.length)
        calls.push(
          call(
            token,
            t.address,
            label,
            "setWhitelistedBatch",
            {
              accounts: list(removed, "wallets to remove"),
              statuses: each(equal(false, "false")),
            },
            GAS.batch,
          ),
        );
      return calls;
    },
  },
  burnToken: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [
        call(token, t.address, `the token ${t.symbol}`, "burn", {
          amount: equal(unitsOf(b.amount, t.decimals), `${b.amount} ${t.symbol}`),
        }),
      ];
    },
  },
  transferTo: {
    movesValue: true,
    async calls(b, ctx) {
      const a = await asset(ctx, b.tokenSymbol);
      const to = b.to ?? b.recipientAddress;
      return [
        call(token, a.address, a.label, "transfer", {
          to: same(to, "the recipient asked"),
          value: equal(unitsOf(b.amount, a.decimals), `${b.amount} ${b.tokenSymbol}`),
        }),
      ];
    },
  },
  transferFrom: {
    movesValue: true,
    async calls(b, ctx) {
      const a = await asset(ctx, b.tokenSymbol);
      return [
        call(token, a.address, a.label, "transferFrom", {
          from: same(b.from, "the holder asked"),
          to: same(b.to, "the recipient asked"),
          value: equal(unitsOf(b.amount, a.decimals), `${b.amount} ${b.tokenSymbol}`),
        }),
      ];
    },
  },
  approve: {
    movesValue: true,
    async calls(b, ctx) {
      const a = await asset(ctx, b.tokenSymbol);
      const spender = same(b.spenderAddress ?? b.spender, "the spender asked");
      return [
        call(
          usdcInterface,
          a.address,
          a.label,
          "approve",
          { spender, value: equal(0n, "zero (a reset)") },
          GAS.call,
          true,
        ),
        call(usdcInterface, a.address, a.label, "approve", {
          spender,
          value: equal(unitsOf(b.amount, a.decimals), `${b.amount} ${b.tokenSymbol}`),
        }),
      ];
    },
  },
  dividendDistribution: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const amount = equal(unitsOf(b.amount, t.paymentToken.decimals), `${b.amount} ${t.paymentToken.symbol}`);
      return [call(token, t.address, `the token ${t.symbol}`, "distributeDividends", { amount })];
    },
  },
  claimDividends: {
    movesValue: false,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [call(token, t.address, `the token ${t.symbol}`, "claimDividends", {})];
    },
  },
  freezeTokens: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const fn = b.mode === "set" ? "setFrozenTokens" : "freezePartialTokens";
      return [
        call(token, t.address, `the token ${t.symbol}`, fn, {
          account: same(b.investorAddress, "the holder asked"),
          amount: equal(unitsOf(b.amount, t.decimals), `${b.amount} ${t.symbol}`),
        }),
      ];
    },
  },
  unfreezeTokens: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [
        call(token, t.address, `the token ${t.symbol}`, "unfreezePartialTokens", {
          account: same(b.investorAddress, "the holder asked"),
          amount: equal(unitsOf(b.amount, t.decimals), `${b.amount} ${t.symbol}`),
        }),
      ];
    },
  },
  freezeAddress: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [
        call(token, t.address, `the token ${t.symbol}`, "setAddressFrozen", {
          account: same(b.investorAddress, "the holder asked"),
          frozen: equal(b.freeze, "the freeze asked"),
        }),
      ];
    },
  },
  forcedTransfer: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [
        call(token, t.address, `the token ${t.symbol}`, "forcedTransfer", {
          from: same(b.from, "the holder asked"),
          to: same(b.to, "the recipient asked"),
          amount: equal(unitsOf(b.amount, t.decimals), `${b.amount} ${t.symbol}`),
        }),
      ];
    },
  },
  recoverWallet: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      const label = `the token ${t.symbol}`;
      const wallets = oneOf([b.lostWallet, b.newWallet], "the wallets of the recovery asked");
      return [
        // Either wallet not yet bound to the investor is bound first (the new one whitelisted with it).
        call(
          token,
          t.address,
          label,
          "whitelistInvestors",
          { wallets: each(wallets), investorIds: anything },
          GAS.batch,
          true,
        ),
        call(
          token,
          t.address,
          label,
          "requestRecovery",
          {
            lostWallet: same(b.lostWallet, "the lost wallet asked"),
            newWallet: same(b.newWallet, "the new wallet asked"),
          },
          GAS.batch,
        ),
      ];
    },
  },
  pauseToken: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [call(token, t.address, `the token ${t.symbol}`, "pause", {})];
    },
  },
  unpauseToken: {
    movesValue: true,
    async calls(b, ctx) {
      const t = await ctx.token(b.tokenSymbol);
      return [call(token, t.address, `the token ${t.symbol}`, "unpause", {})];
    },
  },
  grantTokenRole: roleIntent("grantRole"),
  revokeTokenRole: roleIntent("revokeRole"),
};

function roleIntent(fn: "grantRole" | "revokeRole") {
  return {
    movesValue: true,
    async calls(b: { tokenSymbol: string; role: keyof typeof TOKEN_ROLES; account: string }, ctx: IntentContext) {
      const t = await ctx.token(b.tokenSymbol);
      return [
        call(token, t.address, `the token ${t.symbol}`, fn, {
          role: equal(TOKEN_ROLES[b.role].hash, `${b.role}`),
          account: same(b.account, "the account asked"),
        }),
      ];
    },
  };
}
