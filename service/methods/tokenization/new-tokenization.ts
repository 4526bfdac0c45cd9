import { randomUUID } from "node:crypto";
import { getAddress, ZeroAddress, ZeroHash } from "ethers";
import { z } from "zod";
import { tokenFactoryInterface, parseEventLog } from "../../chains/contracts";
import { badRequest, forbidden, preflightError } from "../../errors";
import { address, decimalAmount, email, integerString } from "../../wire/fields";
import { signerFields } from "../common";
import { recordTokenEvents } from "../token-events";
import { defineMethod, type ConfirmedBatch } from "../types";
import type { Queryable } from "../../store/db";
import { ACCESS } from "../../auth/access-rules";
import { knownWallet } from "../../onboarding/wallets";
import { emitEvent } from "../../events/emit";
import { fromUnits, toUnits } from "../../model/units";
import { paymentAsset } from "../../domains/tokenization/tokens";
import { tokenizerInfoView } from "../../domains/tokenization/views";
import { investorIdFor } from "../../domains/tokenization/investors";
import { RecordsRefused } from "../../engine/records-refused";
import { aliasOf } from "../../wire/field-aliases";

export const TOKEN_TYPES = [
  "EQUITY",
  "DEBT",
  "BILL_FACTORING",
  "ICO",
  "STABLECOIN",
  "REVENUE_SHARE",
  "RWA_TOKEN",
  "PROFIT_SHARING",
] as const;

const preMint = z.object({
  amount: decimalAmount,
  investorAddress: address.optional(),
  investorEmail: email.optional(),
});
const initialHolder = z.object({ walletAddress: address.optional(), email: email.optional() });

const body = z.object({
  ...signerFields,
  tokenizerEmail: email,
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: "Company or asset name (CLI-3 sends tokenName)" }),
  tokenName: aliasOf(z.string().trim().min(1).max(100).optional(), "name"),
  tokenizerCompanyName: aliasOf(z.string().trim().min(1).max(100).optional(), "name"),
  tokenSymbol: z
    .string()
    .trim()
    .regex(/^[A-Z0-9]{2,5}$/, "must be 2 to 5 characters A-Z or 0-9")
    .optional(),
  symbol: aliasOf(
    z
      .string()
      .trim()
      .regex(/^[A-Z0-9]{2,5}$/, "must be 2 to 5 characters A-Z or 0-9")
      .optional(),
    "tokenSymbol",
  ),
  tokenType: z.enum(TOKEN_TYPES).default("EQUITY"),
  supplyCap: decimalAmount.default("0").meta({ description: "Maximum supply in whole tokens; 0 = no cap" }),
  url: z.string().trim().max(2048).default(""),
  decimals: integerString.optional().meta({ description: "Token decimals, 0-18 (default 18)" }),
  tokenizerAddress: address
    .optional()
    .meta({ description: "Company wallet shown in the token record (default: signer)" }),
  paymentTokenAddress: address.optional(),
  paymentTokenSymbol: z.enum(["USDC", "USDT", "USDt"]).optional(),
  preMints: z.array(preMint).default([]),
  initialHolders: z.array(initialHolder).default([]),
});
type Body = z.infer<typeof body>;

/** What a tokenization's prepare records for its confirmation. */
interface TokenizationRecord {
  /** The key the tokenizer e-mail is for (absent in batches prepared by an older version: the batch's key). */
  emailOwner?: string;
  symbol: string;
  name: string;
  tokenName: string;
  tokenType: string;
  tokenizerEmail: string;
  companyWalletAddress: string;
  paymentToken: { symbol: string; address: string; decimals: number };
  decimals: number;
  supplyCap: string;
  initialSupply: string;
  url: string;
  holders: { address: string; email: string | null }[];
}

/** Creates the token and its offering escrow through the factory; the signer becomes the tokenizer. */
export const newTokenization = defineMethod({
  name: "newTokenization",
  area: "tokenization",
  summary: "Tokenize an asset: deploy a security token (and its STO escrow), premint to initial holders",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.created"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const symbol = b.tokenSymbol ?? b.symbol;
    if (!symbol) throw badRequest("tokenSymbol is required", { field: "tokenSymbol" });
    const tokenName = b.tokenName ?? b.name;
    if (!tokenName) throw badRequest("name is required", { field: "name" });
    const decimals = b.decimals === undefined ? 18 : Number(b.decimals);
    if (!Number.isInteger(decimals) || decimals > 18)
      throw badRequest("decimals must be an integer from 0 to 18", { field: "decimals" });

    const existing = await ctx.services.tokens.bySymbol(symbol);
    if (existing) throw preflightError(`Token symbol ${symbol} already exists`, { field: "tokenSymbol" });
    const owners = await ctx.services.tokens.emailKeys(b.tokenizerEmail);
    if (owners.length && !owners.includes(ctx.apiKey!.id)) {
      throw forbidden(
        `tokenizerEmail ${b.tokenizerEmail} belongs to another API key; the operator can bind it to this key (npm run admin -- keys bind-email)`,
        {
          field: "tokenizerEmail",
        },
      );
    }
    if (b.tokenizerAddress === ZeroAddress)
      throw badRequest("tokenizerAddress must not be the zero address", { field: "tokenizerAddress" });

    const payment = resolvePaymentToken(ctx, b);
    const supplyCap = toUnits(b.supplyCap, decimals, "supplyCap", { allowZero: true });

    if (b.preMints.length !== b.initialHolders.length && b.initialHolders.length > 0) {
      throw badRequest(
        `initialHolders must pair with preMints (got ${b.initialHolders.length} holders for ${b.preMints.length} preMints)`,
        {
          field: "initialHolders",
        },
      );
    }
    const holders = [];
    for (const [i, p] of b.preMints.entries()) {
      const amount = toUnits(p.amount, decimals, `preMints.${i}.amount`, { allowZero: true });
      const email = b.initialHolders[i]?.email ?? p.investorEmail ?? null;
      let wallet = b.initialHolders[i]?.walletAddress ?? p.investorAddress;
      if (!wallet) {
        if (!email)
          throw badRequest(`initialHolders.${i}.walletAddress is required to premint`, {
            field: `initialHolders.${i}.walletAddress`,
          });
        // E-mail only: the wallet known for the investor in the key's scope (KYC-approved when KYC was asked).
        const field = b.initialHolders[i]?.email ? `initialHolders.${i}.email` : `preMints.${i}.investorEmail`;
        wallet = (await knownWallet(ctx, { email, field, purpose: "premint" })).address;
      }
      holders.push({ address: getAddress(wallet), amount, email });
    }
    const initialSupply = holders.reduce((sum, h) => sum + h.amount, 0n);
    if (supplyCap > 0n && initialSupply > supplyCap) {
      throw preflightError(`preMints total ${fromUnits(initialSupply, decimals)} exceeds supplyCap ${b.supplyCap}`, {
        field: "preMints",
      });
    }

    const data = tokenFactoryInterface.encodeFunctionData("newTokenization", [
      {
        name: tokenName,
        symbol,
        decimals,
        supplyCap,
        paymentToken: payment.address,
        initialHolders: holders.map((h) => h.address),
        initialInvestorIds: await Promise.all(
          holders.map(async (h) =>
            h.email ? investorIdFor(ctx, { chainId: ctx.chain.chainId, symbol }, h.email) : ZeroHash,
          ),
        ),
        preMints: holders.map((h) => h.amount),
      },
    ]);
    return {
      signer: b.signerAddress,
      calls: [{ to: ctx.chain.deployment.contracts.TokenFactory, data, description: `create token ${symbol}` }],
      info: { tokenizerEmail: b.tokenizerEmail, tokenSymbol: symbol },
      record: {
        // The key the tokenizer e-mail is for, fixed now: checked again when the tokenization confirms.
        emailOwner: ctx.apiKey!.id,
        symbol,
        name: b.tokenizerCompanyName ?? b.name ?? tokenName,
        tokenName,
        tokenType: b.tokenType,
        tokenizerEmail: b.tokenizerEmail,
        companyWalletAddress: b.tokenizerAddress ?? b.signerAddress,
        paymentToken: { symbol: payment.symbol, address: payment.address, decimals: payment.decimals },
        decimals,
        supplyCap: supplyCap.toString(),
        initialSupply: initialSupply.toString(),
        url: b.url,
        holders: holders.map((h) => ({ address: h.address, email: h.email })),
      },
    };
  },
  async onConfirmed(tx, batch) {
    const r = batch.record as unknown as TokenizationRecord;
    const receipt = batch.receipts[0];
    const factory = batch.chain.deployment.contracts.TokenFactory.toLowerCase();
    const created = receipt.logs
      .filter((log) => log.address.toLowerCase() === factory)
      .map((log) => parseEventLog(tokenFactoryInterface, log))
      .find((parsed) => parsed?.name === "TokenCreated");
    if (!created) throw new Error(`newTokenization receipt ${receipt.hash} has no TokenCreated event`);
    const tokenAddress = getAddress(created.args.token);
    await assertEmailStillOurs(tx, batch, r, tokenAddress);
    const token = {
      id: randomUUID(),
      chainId: batch.chain.chainId,
      symbol: r.symbol,
      name: r.name,
      tokenName: r.tokenName,
      tokenType: r.tokenType,
      tokenizerEmail: r.tokenizerEmail,
      tokenizerAddress: getAddress(created.args.tokenizer),
      companyWalletAddress: r.companyWalletAddress,
      apiKeyId: batch.apiKeyId,
      tokenAddress,
      escrowAddress: getAddress(created.args.escrow),
      paymentToken: r.paymentToken,
      decimals: r.decimals,
      supplyCap: r.supplyCap,
      initialSupply: r.initialSupply,
      url: r.url,
      createdTxId: batch.txId,
      createdTxHash: receipt.hash,
      createdBlock: receipt.blockNumber,
    };
    await batch.services.tokens.insert(tx, token);
    const stored = await batch.services.tokens.bySymbol(r.symbol, tx);
    // The symbol was recorded for another tokenization confirmed first: this one ends rejected, recorded nowhere, and
    // hears nothing of the other's token.
    if (!stored || stored.createdTxId !== batch.txId) {
      throw new RecordsRefused(
        `tokenSymbol ${r.symbol} was taken by another tokenization confirmed first: this token at ${tokenAddress} was created on chain but is not recorded; tokenize again under another symbol`,
      );
    }
    if (batch.apiKeyId) await batch.services.tokens.claimEmail(tx, r.tokenizerEmail, batch.apiKeyId);
    await emitEvent(tx, {
      type: "token.created",
      apiKeyId: batch.apiKeyId,
      txId: batch.txId,
      chainId: batch.chain.chainId,
      hash: receipt.hash,
      data: tokenizerInfoView(stored),
    });
    const emails = new Map(r.holders.map((h) => [h.address.toLowerCase(), h.email]));
    await recordTokenEvents(tx, batch, stored, emails);
  },
});

/**
 * The tokenizer e-mail is still free, or the key's that was fixed at prepare: another key that claimed it meanwhile
 * keeps it, and this token is not put in that key's scope (the batch ends rejected). Read under the e-mail's lock, so
 * two first claims decide one after the other.
 */
async function assertEmailStillOurs(tx: Queryable, batch: ConfirmedBatch, r: TokenizationRecord, tokenAddress: string) {
  const owner = r.emailOwner ?? batch.apiKeyId;
  const owners = await batch.services.tokens.emailKeysLocked(tx, r.tokenizerEmail);
  if (owners.length && (!owner || !owners.includes(owner))) {
    throw new RecordsRefused(
      `tokenizerEmail ${r.tokenizerEmail} was claimed by another API key before this tokenization confirmed: token ${r.symbol} at ${tokenAddress} was created on chain but is not recorded; tokenize again with an e-mail of yours`,
    );
  }
}

function resolvePaymentToken(ctx: Parameters<typeof paymentAsset>[0], b: Body) {
  if (b.paymentTokenAddress) {
    const c = ctx.chain.deployment.contracts;
    const match = [c.USDC, c.USDT].find((a) => a?.toLowerCase() === b.paymentTokenAddress!.toLowerCase());
    if (!match)
      throw badRequest("paymentTokenAddress must be the chain's USDC or USDT", { field: "paymentTokenAddress" });
    return paymentAsset(ctx, match === c.USDC ? "USDC" : "USDT", "paymentTokenAddress");
  }
  return paymentAsset(ctx, b.paymentTokenSymbol ?? "USDC", "paymentTokenSymbol");
}
