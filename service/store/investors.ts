import { RecordCache } from "../cache/record-cache";
import type { Db, Queryable } from "./db";

export interface InvestorRecord {
  tokenId: string;
  address: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  investorType: string | null;
  whitelisted: boolean;
  receivedTokens: boolean;
  updatedAt: string;
}

interface InvestorRow {
  token_id: string;
  address: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  investor_type: string | null;
  whitelisted: boolean;
  received_tokens: boolean;
  updated_at: Date | string;
}

const toRecord = (r: InvestorRow): InvestorRecord => ({
  tokenId: r.token_id,
  address: r.address,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  investorType: r.investor_type,
  whitelisted: r.whitelisted,
  receivedTokens: r.received_tokens,
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** Facts about an investor of one token: from the request (e-mail, names) and from receipts (whitelist, tokens). */
export interface InvestorFacts {
  email?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  investorType?: string | null;
  whitelisted?: boolean;
  whitelistTxHash?: string;
  receivedTokens?: boolean;
}

/** How long an investor record read by address is served from memory (another process's changes show within it). */
export const INVESTOR_CACHE_TTL_MS = 1_000;

/** Wallets known per token. Each fact only overwrites when given, so events and request data merge. */
export class Investors {
  /** byAddress answers for INVESTOR_CACHE_TTL_MS (a hot read of get-balance-whitelist); upserts here drop them at once. */
  private readonly byAddressCache = new RecordCache<InvestorRecord>(INVESTOR_CACHE_TTL_MS);

  constructor(private readonly db: Db) {}

  async upsert(tx: Queryable, tokenId: string, address: string, facts: InvestorFacts): Promise<void> {
    this.byAddressCache.markChanged(`${tokenId}:${address.toLowerCase()}`);
    await tx.write(
      `INSERT INTO investors (token_id, address, email, first_name, last_name, investor_type, whitelisted, whitelist_tx_hash, received_tokens)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7, false), $8, COALESCE($9, false))
       ON CONFLICT (token_id, address) DO UPDATE SET
         email = COALESCE(EXCLUDED.email, investors.email),
         first_name = COALESCE(EXCLUDED.first_name, investors.first_name),
         last_name = COALESCE(EXCLUDED.last_name, investors.last_name),
         investor_type = COALESCE(EXCLUDED.investor_type, investors.investor_type),
         whitelisted = COALESCE($7, investors.whitelisted),
         whitelist_tx_hash = COALESCE($8, investors.whitelist_tx_hash),
         received_tokens = investors.received_tokens OR COALESCE($9, false),
         updated_at = now()`,
      [
        tokenId,
        address.toLowerCase(),
        facts.email ?? null,
        facts.firstName ?? null,
        facts.lastName ?? null,
        facts.investorType ?? null,
        facts.whitelisted ?? null,
        facts.whitelistTxHash ?? null,
        facts.receivedTokens ?? null,
      ],
    );
  }

  async byAddress(tokenId: string, address: string): Promise<InvestorRecord | undefined> {
    return this.byAddressCache.read(`${tokenId}:${address.toLowerCase()}`, async () => {
      const [row] = await this.db.query<InvestorRow>("SELECT * FROM investors WHERE token_id = $1 AND address = $2", [
        tokenId,
        address.toLowerCase(),
      ]);
      return row && toRecord(row);
    });
  }

  async byEmail(tokenId: string, email: string): Promise<InvestorRecord[]> {
    const rows = await this.db.query<InvestorRow>(
      "SELECT * FROM investors WHERE token_id = $1 AND lower(email) = lower($2) ORDER BY updated_at DESC",
      [tokenId, email],
    );
    return rows.map(toRecord);
  }

  /** Every wallet recorded for a token (e-mail order, wallets without one last). */
  async ofToken(tokenId: string): Promise<InvestorRecord[]> {
    const rows = await this.db.query<InvestorRow>(
      "SELECT * FROM investors WHERE token_id = $1 ORDER BY lower(email) NULLS LAST, updated_at DESC, address",
      [tokenId],
    );
    return rows.map(toRecord);
  }

  /** Distinct wallets recorded with an e-mail on any token of these tokenizer e-mails (newest first). */
  async walletsOfEmail(tokenizerEmails: string[], email: string): Promise<string[]> {
    if (!tokenizerEmails.length) return [];
    const rows = await this.db.query<{ address: string }>(
      `SELECT i.address FROM investors i JOIN tokens t ON t.id = i.token_id
       WHERE t.tokenizer_email = ANY($1) AND lower(i.email) = lower($2)
       GROUP BY i.address ORDER BY max(i.updated_at) DESC`,
      [tokenizerEmails, email],
    );
    return rows.map((r) => r.address);
  }

  /** Wallets that ever received the token (candidates for balances and dividends). */
  async holders(tokenId: string): Promise<InvestorRecord[]> {
    const rows = await this.db.query<InvestorRow>(
      "SELECT * FROM investors WHERE token_id = $1 AND received_tokens ORDER BY address",
      [tokenId],
    );
    return rows.map(toRecord);
  }
}
