import { getAddress } from "ethers";
import { z } from "zod";
import { responseFields } from "../wire/responses";
import { notFound } from "../errors";
import type { DomainContext } from "../domains/context";
import type { OfferingRecord } from "../store/offerings";
import type { TokenRecord } from "../store/tokens";
import { fromUnits } from "../model/units";
import { escrowOf, STO_STATUS } from "../domains/offerings/offerings";
import { offeringRecordView } from "../domains/offerings/views";

const { address, hash32, int } = responseFields;
const amount = z.string().regex(/^\d+(\.\d+)?$/);
const status = z.enum(STO_STATUS).meta({ description: "Live from the escrow" });

const balanceFields = {
  uuid: z.string().meta({ description: "The STO id" }),
  name: z.string(),
  companyName: z.string(),
  status,
  tokenAmount: amount.meta({ description: "Tokens offered" }),
  hardCap: amount,
  softCap: amount,
  minInvestment: amount,
  maxInvestment: amount,
  startDate: z.string().meta({ description: "ISO 8601" }),
  endDate: z.string().meta({ description: "ISO 8601" }),
  tokenPrice: amount,
  tokenSymbol: z.string(),
  currentAmountRaised: amount,
  availableAmount: amount.meta({ description: "Tokens still for sale" }),
};

/** The STO balance record: exactly the fields existing clients read, no more. */
export const StoBalance = z.strictObject(balanceFields).meta({ id: "StoBalance" });

export const Offering = z
  .strictObject({
    ...balanceFields,
    offeringId: int.meta({ description: "The escrow's offering number" }),
    acceptedCoin: z.string(),
    escrowAddress: address,
    createdTxHash: hash32,
  })
  .meta({ id: "Offering" });

export const OfferingList = z
  .strictObject({
    status: z.array(Offering).meta({ description: "The offerings (the list's name clients read)" }),
    total: int,
  })
  .meta({ id: "OfferingList" });

export const InvestmentList = z
  .strictObject({
    offeringTransactionsList: z.array(
      z.strictObject({
        id: z.string(),
        date: z.string(),
        txHash: hash32.nullable(),
        user: z.string().meta({ description: "The investor's e-mail (its wallet when none was given)" }),
        currency: z.string().nullable(),
        amountInUSD: amount,
        status: z.string().meta({ description: "invest, claimTokens or refund" }),
      }),
    ),
    total: int,
  })
  .meta({ id: "InvestmentList" });

/** An offering with its live status, raised amount and tokens left (chain), and its record (database). */
export async function offeringView(
  ctx: DomainContext,
  token: TokenRecord,
  offering: OfferingRecord,
): Promise<z.infer<typeof Offering>> {
  const escrow = escrowOf(ctx, token);
  const [live, status] = await Promise.all([escrow.offering(offering.onchainId), escrow.status(offering.onchainId)]);
  const pd = token.paymentToken.decimals;
  return {
    ...offeringRecordView(token, offering),
    status: STO_STATUS[Number(status)],
    currentAmountRaised: fromUnits(live.raised, pd),
    // Tokens still for sale: none once the offering is closed (unsold supply went back to the token).
    availableAmount: fromUnits(live.closed ? 0n : live.tokenAmount - live.tokensSold, token.decimals),
  };
}

export async function offeringById(ctx: DomainContext, token: TokenRecord, id: string): Promise<OfferingRecord> {
  const offering = await ctx.services.offerings.byId(id);
  if (!offering || offering.tokenId !== token.id)
    throw notFound(`No offering ${id} for ${token.symbol}`, { field: "id" });
  return offering;
}

/** The STO balance record: exactly the fields existing clients read, no more. */
export async function stoBalanceView(
  ctx: DomainContext,
  token: TokenRecord,
  offering: OfferingRecord,
): Promise<z.infer<typeof StoBalance>> {
  const v = await offeringView(ctx, token, offering);
  return {
    uuid: v.uuid,
    name: v.name,
    companyName: v.companyName,
    status: v.status,
    tokenAmount: v.tokenAmount,
    hardCap: v.hardCap,
    softCap: v.softCap,
    minInvestment: v.minInvestment,
    maxInvestment: v.maxInvestment,
    startDate: v.startDate,
    endDate: v.endDate,
    tokenPrice: v.tokenPrice,
    tokenSymbol: v.tokenSymbol,
    currentAmountRaised: v.currentAmountRaised,
    availableAmount: v.availableAmount,
  };
}

/** The investment list in the form clients read: { offeringTransactionsList, total }. */
export async function investmentListView(
  ctx: DomainContext,
  token: TokenRecord,
  offering: OfferingRecord,
): Promise<z.infer<typeof InvestmentList>> {
  const investments = await ctx.services.offerings.investments(offering.id);
  const pd = token.paymentToken.decimals;
  return {
    offeringTransactionsList: investments.map((i) => ({
      id: i.id,
      date: i.createdAt,
      txHash: i.txHash,
      user: i.investorEmail ?? getAddress(i.investorAddress),
      currency: offering.acceptedCoin,
      amountInUSD: fromUnits(BigInt(i.amount), pd),
      status: i.status,
    })),
    total: investments.length,
  };
}
