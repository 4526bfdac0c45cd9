import { getAddress, ZeroAddress, ZeroHash } from "ethers";
import { securityTokenInterface, parseEventLog } from "../chains/contracts";
import type { Queryable } from "../store/db";
import type { TokenRecord } from "../store/tokens";
import type { ConfirmedBatch } from "./types";
import { recordControlEvent } from "./control-events";

export interface InvestorHints {
  email?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  investorType?: string | null;
}

/**
 * Records what a batch's receipts prove about a security token: whitelist changes, wallets that received tokens,
 * dividend distributions and claims, issuer controls (freezes, forced transfers, recoveries, pauses, roles). Every
 * method that touches a token uses it, so the records follow the events, never the request. `hints` adds request facts
 * (e-mail, names) for the wallets the events mention.
 */
export async function recordTokenEvents(
  tx: Queryable,
  batch: ConfirmedBatch,
  token: Pick<TokenRecord, "id" | "tokenAddress" | "symbol" | "decimals" | "apiKeyId">,
  hints: Map<string, string | null | InvestorHints> = new Map(),
): Promise<void> {
  const { investors, dividends } = batch.services;
  const tokenAddress = token.tokenAddress.toLowerCase();
  const hintFor = (address: string): InvestorHints => {
    const hint = hints.get(address.toLowerCase());
    return typeof hint === "object" && hint !== null ? hint : { email: hint ?? null };
  };
  for (const receipt of batch.receipts) {
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== tokenAddress) continue;
      const event = parseEventLog(securityTokenInterface, log);
      if (!event) continue;
      if (event.name === "RoleGranted" && event.args.role === ZeroHash) {
        // The two-step tokenizer handover completed: the token's default admin is its tokenizer.
        await batch.services.tokens.setTokenizerAddress(token.id, getAddress(event.args.account), tx);
      }
      if (await recordControlEvent(tx, batch, token, event, receipt, log)) continue;
      switch (event.name) {
        case "WhitelistUpdated":
          await investors.upsert(tx, token.id, event.args.account, {
            ...hintFor(event.args.account),
            whitelisted: event.args.status,
            whitelistTxHash: receipt.hash,
          });
          break;
        case "Transfer":
          if (event.args.to !== ZeroAddress) {
            await investors.upsert(tx, token.id, event.args.to, { ...hintFor(event.args.to), receivedTokens: true });
          }
          break;
        case "DividendsDistributed":
          await dividends.recordDistribution(tx, token.id, {
            amount: event.args.amount,
            distributor: event.args.distributor,
            txHash: receipt.hash,
            blockNumber: receipt.blockNumber,
          });
          break;
        case "DividendClaimed":
          await dividends.recordClaim(tx, token.id, {
            amount: event.args.amount,
            holder: event.args.holder,
            txHash: receipt.hash,
            blockNumber: receipt.blockNumber,
          });
          break;
      }
    }
  }
}

/** The onConfirmed hook of methods that act on one security token named in the batch record. */
export function recordEventsOfRecordedToken(
  hintsOf?: (record: Record<string, unknown>) => Map<string, string | null | InvestorHints>,
) {
  return async (tx: Queryable, batch: ConfirmedBatch) => {
    const symbol = batch.record.tokenSymbol as string | undefined;
    if (!symbol) return;
    const token = await batch.services.tokens.factsBySymbol(symbol, tx);
    if (!token) return;
    await recordTokenEvents(tx, batch, token, hintsOf?.(batch.record));
  };
}
