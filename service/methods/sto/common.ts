import { getAddress } from "ethers";
import { stoEscrowInterface, parseEventLog } from "../../chains/contracts";
import { z } from "zod";
import { badRequest, preflightError } from "../../errors";
import { address, email } from "../../wire/fields";
import { commonFields } from "../common";
import type { Queryable } from "../../store/db";
import type { TokenRecord } from "../../store/tokens";
import { recordTokenEvents } from "../token-events";
import { emitEvent } from "../../events/emit";
import { offeringRecordView } from "../../domains/offerings/views";
import type { ConfirmedBatch } from "../types";
import { fromUnits } from "../../model/units";
import { currentOffering } from "../../domains/offerings/offerings";

/** Body fields of the investor-signed methods (newInvest, claimTokens): investorAddress stands in for signerAddress. */
export const investorFields = {
  ...commonFields,
  investorAddress: address.optional(),
  signerAddress: address.optional(),
  investorEmail: email.optional(),
  tokenSymbol: z.string().trim().min(1),
};

/** The wallet that signs an investor's transaction. */
export function investorSigner(b: { investorAddress?: string; signerAddress?: string }): string {
  const wallet = b.investorAddress ?? b.signerAddress;
  if (!wallet) throw badRequest("investorAddress is required", { field: "investorAddress" });
  return wallet;
}

/** The on-chain offering a body names (`offeringId`), or the latest; a 400 naming offeringId for one that is not there. */
export async function offeringIdOf(
  escrow: { currentOfferingId(): Promise<bigint> },
  symbol: string,
  offeringId: string | undefined,
): Promise<number> {
  const latest = Number(await escrow.currentOfferingId());
  const id = offeringId !== undefined ? Number(offeringId) : latest;
  if (id === 0 || id > latest)
    throw preflightError(`${symbol} has no offering ${offeringId ?? ""}`.trim(), { field: "offeringId" });
  return id;
}

export function requireOpenOffering(current: Awaited<ReturnType<typeof currentOffering>>, symbol: string) {
  if (!current.offering || current.offering.closed) {
    throw preflightError(`${symbol} has no ongoing offering`, { field: "tokenSymbol", status: current.status });
  }
  return current.offering;
}

/**
 * Records what escrow and token events of a batch prove: offerings created and closed, investments, claims (and,
 * through the token's events, the wallets that received tokens).
 */
export async function recordOfferingEvents(
  tx: Queryable,
  batch: ConfirmedBatch,
  hints: { offeringName?: string; investorEmail?: string | null } = {},
) {
  const symbol = batch.record.tokenSymbol as string;
  const token = await batch.services.tokens.bySymbol(symbol, tx);
  if (!token) return;
  const { offerings } = batch.services;
  const escrow = token.escrowAddress.toLowerCase();
  for (const receipt of batch.receipts) {
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== escrow) continue;
      const event = parseEventLog(stoEscrowInterface, log);
      if (!event) continue;
      const onchainId = Number(event.args.offeringId);
      switch (event.name) {
        case "OfferingCreated": {
          await offerings.insert(tx, {
            tokenId: token.id,
            onchainId,
            name: hints.offeringName ?? `${token.symbol} offering ${onchainId}`,
            acceptedCoin: token.paymentToken.symbol,
            tokenAmount: event.args.tokenAmount.toString(),
            price: event.args.price.toString(),
            softCap: event.args.softCap.toString(),
            hardCap: event.args.hardCap.toString(),
            minInvestment: event.args.minInvestment.toString(),
            maxInvestment: event.args.maxInvestment.toString(),
            startTime: new Date(Number(event.args.startTime) * 1000).toISOString(),
            endTime: new Date(Number(event.args.endTime) * 1000).toISOString(),
            createdTxHash: receipt.hash,
          });
          const created = await offerings.byOnchainId(token.id, onchainId, tx);
          if (created)
            await emitEvent(tx, {
              ...offeringEnvelope(batch, token, receipt.hash),
              type: "offering.created",
              data: { offering: offeringRecordView(token, created) },
            });
          break;
        }
        case "Invested": {
          const offering = await offerings.byOnchainId(token.id, onchainId, tx);
          if (!offering) break;
          await offerings.recordInvestment(tx, {
            offeringId: offering.id,
            investorAddress: getAddress(event.args.investor),
            investorEmail: hints.investorEmail ?? null,
            amount: event.args.amount,
            refunded: event.args.refunded,
            tokens: event.args.tokens,
            txHash: receipt.hash,
            logIndex: log.index,
            blockNumber: receipt.blockNumber,
          });
          if (hints.investorEmail)
            await batch.services.investors.upsert(tx, token.id, event.args.investor, { email: hints.investorEmail });
          break;
        }
        case "Claimed": {
          const offering = await offerings.byOnchainId(token.id, onchainId, tx);
          if (offering)
            await offerings.markClaimed(
              tx,
              offering.id,
              event.args.investor,
              event.args.refund > 0n ? "refund" : "claimTokens",
            );
          break;
        }
        case "OfferingClosed": {
          await offerings.markClosed(tx, token.id, onchainId, {
            succeeded: event.args.succeeded,
            raised: event.args.raised,
            txHash: receipt.hash,
          });
          const closed = await offerings.byOnchainId(token.id, onchainId, tx);
          if (!closed) break;
          await emitEvent(tx, {
            ...offeringEnvelope(batch, token, receipt.hash),
            type: "offering.closed",
            data: {
              offering: offeringRecordView(token, closed),
              status: event.args.succeeded ? "COMPLETED" : "FAILED",
              raised: fromUnits(event.args.raised, token.paymentToken.decimals),
              closedTxHash: receipt.hash,
            },
          });
          break;
        }
      }
    }
  }
  await recordTokenEvents(tx, batch, token);
}

/** Offering events belong to the token's key (whoever closed it), in the batch's order. */
function offeringEnvelope(batch: ConfirmedBatch, token: TokenRecord, hash: string) {
  return { apiKeyId: token.apiKeyId ?? batch.apiKeyId, txId: batch.txId, chainId: batch.chain.chainId, hash };
}
