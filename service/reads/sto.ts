import { getAddress } from "ethers";
import { notFound } from "../errors";
import { fromUnits } from "../methods/common";
import { escrowOf, STO_STATUS } from "../methods/sto/common";
import type { MethodContext } from "../methods/types";
import type { OfferingRecord } from "../store/offerings";
import type { TokenRecord } from "../store/tokens";

/** An offering with its live status, raised amount and tokens left (chain), and its record (database). */
export async function offeringView(ctx: MethodContext, token: TokenRecord, offering: OfferingRecord) {
  const escrow = escrowOf(ctx, token);
  const [live, status] = await Promise.all([escrow.offering(offering.onchainId), escrow.status(offering.onchainId)]);
  const pd = token.paymentToken.decimals;
  return {
    uuid: offering.id,
    offeringId: offering.onchainId,
    name: offering.name,
    companyName: token.name,
    status: STO_STATUS[Number(status)],
    tokenSymbol: token.symbol,
    acceptedCoin: offering.acceptedCoin,
    tokenAmount: fromUnits(BigInt(offering.tokenAmount), token.decimals),
    tokenPrice: fromUnits(BigInt(offering.price), pd),
    hardCap: fromUnits(BigInt(offering.hardCap), pd),
    softCap: fromUnits(BigInt(offering.softCap), pd),
    minInvestment: fromUnits(BigInt(offering.minInvestment), pd),
    maxInvestment: fromUnits(BigInt(offering.maxInvestment), pd),
    startDate: offering.startTime,
    endDate: offering.endTime,
    currentAmountRaised: fromUnits(live.raised, pd),
    // Tokens still for sale: none once the offering is closed (unsold supply went back to the token).
    availableAmount: fromUnits(live.closed ? 0n : live.tokenAmount - live.tokensSold, token.decimals),
    escrowAddress: token.escrowAddress,
    createdTxHash: offering.createdTxHash,
  };
}

export async function offeringById(ctx: MethodContext, token: TokenRecord, id: string): Promise<OfferingRecord> {
  const offering = await ctx.services.offerings.byId(id);
  if (!offering || offering.tokenId !== token.id) throw notFound(`No offering ${id} for ${token.symbol}`, { field: "id" });
  return offering;
}

/** The STO balance record of API-SPEC: exactly its fields. */
export async function stoBalanceView(ctx: MethodContext, token: TokenRecord, offering: OfferingRecord) {
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

/** The investment list in the spec's schema form: { offeringTransactionsList, total }. */
export async function investmentListView(ctx: MethodContext, token: TokenRecord, offering: OfferingRecord) {
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
