import type { OfferingRecord } from "../../store/offerings";
import type { TokenRecord } from "../../store/tokens";
import { fromUnits } from "../../model/units";

/** An offering as get-sto-by-id shows it, without what it reads live from the escrow (status, raised, available). */
export function offeringRecordView(token: TokenRecord, offering: OfferingRecord) {
  const pd = token.paymentToken.decimals;
  return {
    uuid: offering.id,
    offeringId: offering.onchainId,
    name: offering.name,
    companyName: token.name,
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
    escrowAddress: token.escrowAddress,
    createdTxHash: offering.createdTxHash,
  };
}
