import { getAddress } from "ethers";
import type { Db } from "./db";

/**
 * For whom a signer is whitelisted: one API key, or every key and payers without one ("all-keys", the operator's
 * explicit choice: `npm run admin -- signers add <address> --all-keys`).
 */
export type SignerScope = { keyId: string } | "all-keys";

/** A whitelist entry as the operator lists it. */
export interface SignerEntry {
  address: string;
  /** The key it is whitelisted for; null: every key and payers without a key. */
  keyId: string | null;
}

const keyOf = (scope: SignerScope) => (scope === "all-keys" ? null : scope.keyId);

/**
 * Wallets the operator has whitelisted as signers, per API key: every prepare checks its signer against the entries of
 * its key (or, without a key, against those for every key).
 */
export class Signers {
  constructor(private readonly db: Db) {}

  async add(address: string, scope: SignerScope): Promise<void> {
    await this.db.query(
      "INSERT INTO signers (address, api_key_id) VALUES ($1, $2) ON CONFLICT (address, COALESCE(api_key_id, '')) DO NOTHING",
      [address.toLowerCase(), keyOf(scope)],
    );
  }

  async remove(address: string, scope: SignerScope): Promise<boolean> {
    const rows = await this.db.query(
      "DELETE FROM signers WHERE address = $1 AND COALESCE(api_key_id, '') = COALESCE($2::text, '') RETURNING address",
      [address.toLowerCase(), keyOf(scope)],
    );
    return rows.length > 0;
  }

  /** Every entry, or those that apply to one key (its own and those for every key). */
  async list(filter: { keyId?: string } = {}): Promise<SignerEntry[]> {
    const rows = await this.db.query<{ address: string; api_key_id: string | null }>(
      "SELECT address, api_key_id FROM signers WHERE $1::text IS NULL OR api_key_id = $1 OR api_key_id IS NULL ORDER BY added_at, address, api_key_id",
      [filter.keyId ?? null],
    );
    return rows.map((r) => ({ address: getAddress(r.address), keyId: r.api_key_id }));
  }

  /** Whether `keyId` (undefined: a payer without a key) may prepare for `address`. */
  async isAllowed(address: string, keyId: string | undefined): Promise<boolean> {
    const rows = await this.db.query(
      "SELECT 1 FROM signers WHERE address = $1 AND (api_key_id IS NULL OR api_key_id = $2) LIMIT 1",
      [address.toLowerCase(), keyId ?? null],
    );
    return rows.length > 0;
  }
}
