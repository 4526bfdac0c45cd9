import { TtlCache } from "../cache/ttl-cache";
import type { Db, Queryable } from "./db";

/**
 * How long a token record and a key's right to a tokenizer e-mail are served from memory. Changes made by this process
 * (documents, bindings) drop them at once; changes made by another process sharing the database show within this bound.
 */
export const TOKEN_CACHE_TTL_MS = 1_000;

/** A tokenized asset as recorded from its newTokenization receipt. */
export interface TokenRecord {
  id: string;
  chainId: number;
  symbol: string;
  name: string;
  tokenName: string;
  tokenType: string;
  tokenizerEmail: string;
  tokenizerAddress: string;
  companyWalletAddress: string;
  apiKeyId: string | null;
  tokenAddress: string;
  escrowAddress: string;
  paymentToken: { symbol: string; address: string; decimals: number };
  decimals: number;
  supplyCap: string;
  initialSupply: string;
  url: string;
  logotypeRef: string | null;
  subscriptionAgreementRef: string | null;
  legalDocsRef: string | null;
  createdTxId: string;
  createdTxHash: string;
  createdBlock: number;
  createdAt: string;
}

interface TokenRow {
  id: string;
  chain_id: number;
  symbol: string;
  name: string;
  token_name: string;
  token_type: string;
  tokenizer_email: string;
  tokenizer_address: string;
  company_wallet_address: string;
  api_key_id: string | null;
  token_address: string;
  escrow_address: string;
  payment_token_symbol: string;
  payment_token_address: string;
  payment_token_decimals: number;
  decimals: number;
  supply_cap: string;
  initial_supply: string;
  url: string;
  logotype_ref: string | null;
  subscription_agreement_ref: string | null;
  legal_docs_ref: string | null;
  created_tx_id: string;
  created_tx_hash: string;
  created_block: string;
  created_at: Date | string;
}

const toRecord = (r: TokenRow): TokenRecord => ({
  id: r.id,
  chainId: r.chain_id,
  symbol: r.symbol,
  name: r.name,
  tokenName: r.token_name,
  tokenType: r.token_type,
  tokenizerEmail: r.tokenizer_email,
  tokenizerAddress: r.tokenizer_address,
  companyWalletAddress: r.company_wallet_address,
  apiKeyId: r.api_key_id,
  tokenAddress: r.token_address,
  escrowAddress: r.escrow_address,
  paymentToken: {
    symbol: r.payment_token_symbol,
    address: r.payment_token_address,
    decimals: r.payment_token_decimals,
  },
  decimals: r.decimals,
  supplyCap: r.supply_cap,
  initialSupply: r.initial_supply,
  url: r.url,
  logotypeRef: r.logotype_ref,
  subscriptionAgreementRef: r.subscription_agreement_ref,
  legalDocsRef: r.legal_docs_ref,
  createdTxId: r.created_tx_id,
  createdTxHash: r.created_tx_hash,
  createdBlock: Number(r.created_block),
  createdAt: new Date(r.created_at).toISOString(),
});

export type NewToken = Omit<TokenRecord, "createdAt" | "logotypeRef" | "subscriptionAgreementRef" | "legalDocsRef">;

export type TokenDocument = "logotype" | "subscriptionAgreement" | "legalDocs";
const documentColumn: Record<TokenDocument, string> = {
  logotype: "logotype_ref",
  subscriptionAgreement: "subscription_agreement_ref",
  legalDocs: "legal_docs_ref",
};

/** Token records, and which API key may act on which symbol (docs/wire-conventions.md, Access, credits and prices). */
export class Tokens {
  /** Recorded tokens by symbol (reads outside a transaction only; an unknown symbol is never kept). */
  private readonly records = new TtlCache<string, TokenRecord>(TOKEN_CACHE_TTL_MS);
  /** Tokens changed within the last TTL: read from the database only (their change may still be uncommitted). */
  private readonly changed = new TtlCache<string, true>(TOKEN_CACHE_TTL_MS);
  /** keyMayUse's "yes" by key id and tokenizer e-mail ("no" is never kept: a confirming tokenization may grant it). */
  private readonly scopes = new TtlCache<string, true>(TOKEN_CACHE_TTL_MS);

  constructor(private readonly db: Db) {}

  async bySymbol(symbol: string, q: Queryable = this.db): Promise<TokenRecord | undefined> {
    const cacheable = q === this.db;
    const cached = cacheable ? this.records.get(symbol) : undefined;
    if (cached && !this.changed.get(cached.id)) return cached;
    const [row] = await q.query<TokenRow>("SELECT * FROM tokens WHERE symbol = $1", [symbol]);
    const record = row && toRecord(row);
    if (record && cacheable && !this.changed.get(record.id)) this.records.set(symbol, record);
    return record;
  }

  /**
   * A token's fixed facts (id, chain, address, symbol) by symbol: from the cache when it has the token, else read with
   * `q` (inside a transaction, which a read on the database itself would wait behind on the embedded database).
   */
  async factsBySymbol(
    symbol: string,
    q: Queryable,
  ): Promise<Pick<TokenRecord, "id" | "chainId" | "tokenAddress" | "symbol" | "decimals" | "apiKeyId"> | undefined> {
    return this.records.get(symbol) ?? (await this.bySymbol(symbol, q));
  }

  async byAddress(chainId: number, tokenAddress: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(
      "SELECT * FROM tokens WHERE chain_id = $1 AND lower(token_address) = lower($2)",
      [chainId, tokenAddress],
    );
    return row && toRecord(row);
  }

  /**
   * A token by symbol and whether the key may act on it (keyMayUse): from the caches when both are warm, else in one
   * statement whose answers fill them.
   */
  async bySymbolForKey(symbol: string, keyId: string): Promise<{ token: TokenRecord; keyMayUse: boolean } | undefined> {
    const cached = this.records.get(symbol);
    if (cached && !this.changed.get(cached.id) && this.scopes.get(scopeKey(keyId, cached)))
      return { token: cached, keyMayUse: true };
    const [row] = await this.db.query<TokenRow & { key_may_use: boolean }>(
      `SELECT t.*, EXISTS (SELECT 1 FROM tokenizer_email_keys k WHERE k.email = lower(t.tokenizer_email) AND k.api_key_id = $2) AS key_may_use
       FROM tokens t WHERE t.symbol = $1`,
      [symbol, keyId],
    );
    if (!row) return undefined;
    const token = toRecord(row);
    if (!this.changed.get(token.id)) this.records.set(symbol, token);
    if (row.key_may_use) this.scopes.set(scopeKey(keyId, token), true);
    return { token, keyMayUse: row.key_may_use };
  }

  /** A key may act on the tokens of the tokenizer e-mails it owns (tokenized first with them, or bound by the operator). */
  async keyMayUse(keyId: string, token: TokenRecord): Promise<boolean> {
    const scope = scopeKey(keyId, token);
    if (this.scopes.get(scope)) return true;
    const rows = await this.db.query(
      "SELECT 1 FROM tokenizer_email_keys WHERE email = lower($1) AND api_key_id = $2 LIMIT 1",
      [token.tokenizerEmail, keyId],
    );
    if (rows.length > 0) this.scopes.set(scope, true);
    return rows.length > 0;
  }

  /** Symbols and tokenizer e-mails a key may see. */
  async visibleTo(keyId: string): Promise<{ tokenSymbols: string[]; tokenizerEmails: string[] }> {
    const rows = await this.db.query<{ symbol: string; tokenizer_email: string }>(
      `SELECT symbol, tokenizer_email FROM tokens
       WHERE lower(tokenizer_email) IN (SELECT email FROM tokenizer_email_keys WHERE api_key_id = $1)
       ORDER BY created_at, symbol`,
      [keyId],
    );
    return {
      tokenSymbols: rows.map((r) => r.symbol),
      tokenizerEmails: [...new Set(rows.map((r) => r.tokenizer_email))],
    };
  }

  /** The keys a tokenizer e-mail belongs to (empty: nobody tokenized with it yet). */
  async emailKeys(email: string, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ api_key_id: string }>(
      "SELECT api_key_id FROM tokenizer_email_keys WHERE email = lower($1)",
      [email],
    );
    return rows.map((r) => r.api_key_id);
  }

  /**
   * The keys a tokenizer e-mail belongs to, read under a lock on the e-mail held to the end of `q`'s transaction: two
   * tokenizations confirming with one new e-mail at once decide its owner one after the other (claimEmail below).
   */
  async emailKeysLocked(q: Queryable, email: string): Promise<string[]> {
    await q.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`tokenizer-email:${email.toLowerCase()}`]);
    return this.emailKeys(email, q);
  }

  /** The first tokenization with an e-mail makes it its key's; later ones (refused at prepare unless bound) change nothing. */
  async claimEmail(q: Queryable, email: string, keyId: string): Promise<void> {
    await q.query(
      `INSERT INTO tokenizer_email_keys (email, api_key_id, bound_by)
       SELECT lower($1), $2, 'tokenization' WHERE NOT EXISTS (SELECT 1 FROM tokenizer_email_keys WHERE email = lower($1))`,
      [email, keyId],
    );
    this.scopes.clear();
  }

  /** Operator: let `keyId` act on `email`'s tokens too (npm run admin -- keys bind-email). */
  async bindEmail(email: string, keyId: string): Promise<void> {
    await this.db.query(
      "INSERT INTO tokenizer_email_keys (email, api_key_id, bound_by) VALUES (lower($1), $2, 'operator') ON CONFLICT (email, api_key_id) DO NOTHING",
      [email, keyId],
    );
  }

  async unbindEmail(email: string, keyId: string): Promise<boolean> {
    const removed =
      (
        await this.db.query(
          "DELETE FROM tokenizer_email_keys WHERE email = lower($1) AND api_key_id = $2 RETURNING email",
          [email, keyId],
        )
      ).length > 0;
    this.scopes.clear();
    return removed;
  }

  /** Records a token from its creation receipt; a second insert of the same token is ignored. */
  async insert(tx: Queryable, t: NewToken): Promise<void> {
    await tx.query(
      `INSERT INTO tokens (id, chain_id, symbol, name, token_name, token_type, tokenizer_email, tokenizer_address,
         company_wallet_address, api_key_id, token_address, escrow_address, payment_token_symbol, payment_token_address,
         payment_token_decimals, decimals, supply_cap, initial_supply, url, created_tx_id, created_tx_hash, created_block)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)
       ON CONFLICT DO NOTHING`,
      [
        t.id,
        t.chainId,
        t.symbol,
        t.name,
        t.tokenName,
        t.tokenType,
        t.tokenizerEmail,
        t.tokenizerAddress,
        t.companyWalletAddress,
        t.apiKeyId,
        t.tokenAddress,
        t.escrowAddress,
        t.paymentToken.symbol,
        t.paymentToken.address,
        t.paymentToken.decimals,
        t.decimals,
        t.supplyCap,
        t.initialSupply,
        t.url,
        t.createdTxId,
        t.createdTxHash,
        t.createdBlock,
      ],
    );
  }

  /** The token's tokenizer changed on chain (its default admin handed over): later checks compare with the new one. */
  async setTokenizerAddress(tokenId: string, tokenizerAddress: string, q: Queryable = this.db): Promise<void> {
    await q.query("UPDATE tokens SET tokenizer_address = $2 WHERE id = $1", [tokenId, tokenizerAddress]);
    this.changed.set(tokenId, true);
    this.records.deleteWhere((token) => token.id === tokenId);
  }

  async setDocument(tokenId: string, document: TokenDocument, ref: string, q: Queryable = this.db): Promise<void> {
    await q.query(`UPDATE tokens SET ${documentColumn[document]} = $2 WHERE id = $1`, [tokenId, ref]);
    this.changed.set(tokenId, true);
    this.records.deleteWhere((token) => token.id === tokenId);
  }
}

/** The scope cache's key: an API key id and a tokenizer e-mail. */
function scopeKey(keyId: string, token: TokenRecord): string {
  return `${keyId}\n${token.tokenizerEmail.toLowerCase()}`;
}
