import { z } from "zod";
import { stoEscrowInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { decimalAmount, email } from "../../wire/fields";
import { signerFields } from "../common";
import { defineMethod, type MethodContext } from "../types";
import { recordOfferingEvents } from "./common";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, toUnits } from "../../model/units";
import { authorizedToken, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";
import { chainNow, currentOffering } from "../../domains/offerings/offerings";
import { aliasOf } from "../../wire/field-aliases";

const isoDate = z
  .string()
  .trim()
  .refine((v) => !Number.isNaN(Date.parse(v)), "must be an ISO 8601 date-time")
  .meta({ format: "date-time", example: "2027-01-01T00:00:00Z" });

const body = z.object({
  ...signerFields,
  tokenizerEmail: email.optional(),
  tokenSymbol: z.string().trim().min(1),
  offeringName: z.string().trim().min(1).max(200).optional(),
  tokenAmount: decimalAmount.optional().meta({ description: "Tokens offered, whole tokens (CLI-3: issuanceAmount)" }),
  issuanceAmount: aliasOf(decimalAmount.optional(), "tokenAmount"),
  acceptedCoin: z
    .string()
    .trim()
    .optional()
    .meta({ description: "Payment token symbol; must be the token's (USDC or USDT)" }),
  paymentTokenSymbol: aliasOf(z.string().trim().optional(), "acceptedCoin"),
  startDate: isoDate,
  endDate: isoDate,
  minRaiseUSD: decimalAmount.optional().meta({ description: "Soft cap, payment-token units (CLI-3: softCap)" }),
  maxRaiseUSD: decimalAmount.optional().meta({ description: "Hard cap, payment-token units (CLI-3: hardCap)" }),
  softCap: aliasOf(decimalAmount.optional(), "minRaiseUSD"),
  hardCap: aliasOf(decimalAmount.optional(), "maxRaiseUSD"),
  minInvestment: decimalAmount,
  maxInvestment: decimalAmount,
  tokenPrice: decimalAmount.optional().meta({ description: "Checked against maxRaiseUSD / tokenAmount when given" }),
});
type Body = z.infer<typeof body>;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The earliest time the block opening the offering can carry: the later of the latest block's timestamp and the
 * service's clock. Public networks and the local chains keep the wall clock, so the next block is never older than
 * now even when the latest one is (a 12 s Sepolia slot, an idle local chain); a chain moved ahead (evm_increaseTime)
 * is ahead of both. The escrow refuses a start before its block (InvalidWindow): this refuses it before signing.
 */
async function openingTime(ctx: MethodContext): Promise<{ chainTime: number; latestBlockTime: number }> {
  const latestBlockTime = await chainNow(ctx);
  return { chainTime: Math.max(latestBlockTime, Math.floor(Date.now() / 1000)), latestBlockTime };
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw badRequest(`${field} is required`, { field });
  return value;
}

/** Opens an offering on the token's escrow (one at a time). Tokenizer only. */
export const newSto = defineMethod({
  name: "newSto",
  area: "sto",
  summary: "Create a security token offering (soft/hard cap, min/max ticket, window)",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["offering.created"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "create offerings");
    const coin = b.acceptedCoin ?? b.paymentTokenSymbol ?? token.paymentToken.symbol;
    if (coin.toUpperCase() !== token.paymentToken.symbol) {
      throw badRequest(`acceptedCoin must be ${token.paymentToken.symbol}, the payment token of ${token.symbol}`, {
        field: "acceptedCoin",
      });
    }
    const pd = token.paymentToken.decimals;
    const tokenAmount = toUnits(
      required(b.tokenAmount ?? b.issuanceAmount, "tokenAmount"),
      token.decimals,
      "tokenAmount",
    );
    const softCap = toUnits(required(b.minRaiseUSD ?? b.softCap, "minRaiseUSD"), pd, "minRaiseUSD", {
      allowZero: true,
    });
    const hardCap = toUnits(required(b.maxRaiseUSD ?? b.hardCap, "maxRaiseUSD"), pd, "maxRaiseUSD");
    const minInvestment = toUnits(b.minInvestment, pd, "minInvestment", { allowZero: true });
    const maxInvestment = toUnits(b.maxInvestment, pd, "maxInvestment");
    const start = Math.floor(Date.parse(b.startDate) / 1000);
    const end = Math.floor(Date.parse(b.endDate) / 1000);

    if (softCap > hardCap)
      throw badRequest("minRaiseUSD (soft cap) cannot exceed maxRaiseUSD (hard cap)", { field: "minRaiseUSD" });
    if (minInvestment > maxInvestment)
      throw badRequest("minInvestment cannot exceed maxInvestment", { field: "minInvestment" });
    if (end <= start) throw badRequest("endDate must be after startDate", { field: "endDate" });
    const now = await openingTime(ctx);
    if (start <= now.chainTime) {
      // A start that is not in the future (a client clock a little behind, a request that took a few seconds) is
      // refused, naming the chain's time, rather than moved: the offering's window is what the tokenizer signs.
      throw badRequest(`startDate must be in the future (chain time is ${iso(now.chainTime)})`, {
        field: "startDate",
        startDate: iso(start),
        chainTime: iso(now.chainTime),
        latestBlockTime: iso(now.latestBlockTime),
      });
    }

    const derivedPrice = (hardCap * 10n ** BigInt(token.decimals)) / tokenAmount;
    if (b.tokenPrice !== undefined && toUnits(b.tokenPrice, pd, "tokenPrice", { allowZero: true }) !== derivedPrice) {
      throw badRequest(
        `tokenPrice ${b.tokenPrice} does not match maxRaiseUSD / tokenAmount = ${fromUnits(derivedPrice, pd)}`,
        { field: "tokenPrice" },
      );
    }

    const current = await currentOffering(ctx, token);
    if (current.offering && !current.offering.closed) {
      throw preflightError("Tokenizer already has an ongoing STO", {
        field: "tokenSymbol",
        offeringId: current.id,
        status: current.status,
      });
    }
    const contract = securityToken(ctx, token);
    const [cap, supply, reserved] = await Promise.all([
      contract.supplyCap(),
      contract.totalSupply(),
      contract.reservedSupply(),
    ]);
    if (cap > 0n && supply + reserved + tokenAmount > cap) {
      throw preflightError(
        `tokenAmount exceeds the room under ${token.symbol}'s supply cap (${fromUnits(cap - supply - reserved, token.decimals)} left)`,
        {
          field: "tokenAmount",
        },
      );
    }

    const name = b.offeringName ?? `${token.symbol} offering`;
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.escrowAddress,
          data: stoEscrowInterface.encodeFunctionData("newOffering", [
            tokenAmount,
            0n,
            softCap,
            hardCap,
            minInvestment,
            maxInvestment,
            BigInt(start),
            BigInt(end),
          ]),
          description: `open offering "${name}" of ${fromUnits(tokenAmount, token.decimals)} ${token.symbol}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        offeringName: name,
        tokenPrice: fromUnits(derivedPrice, pd),
      },
      record: { tokenSymbol: token.symbol, offeringName: name },
    };
  },
  onConfirmed: (tx, batch) => recordOfferingEvents(tx, batch, { offeringName: batch.record.offeringName as string }),
});
