import type { Db, Queryable } from "./db";

export interface FaucetClaimRecord {
  id: string;
  recipient: string;
  txId: string;
}

/** Claims of the sandbox BKN faucet, one per Idempotency-Key (the key makes a retried claim answer the first one). */
export class FaucetClaims {
  constructor(private readonly db: Db) {}

  async byIdempotencyKey(idempotencyKey: string): Promise<FaucetClaimRecord | undefined> {
    const [row] = await this.db.query<{ id: string; recipient: string; tx_id: string }>(
      "SELECT id, recipient, tx_id FROM faucet_claims WHERE idempotency_key = $1",
      [idempotencyKey],
    );
    return row && { id: row.id, recipient: row.recipient, txId: row.tx_id };
  }

  /** Records a claim in the caller's transaction; a concurrent claim with the same key fails on the unique key. */
  async insert(
    q: Queryable,
    claim: FaucetClaimRecord & { idempotencyKey: string; apiKeyId: string | null },
  ): Promise<void> {
    await q.query(
      "INSERT INTO faucet_claims (id, idempotency_key, recipient, tx_id, api_key_id) VALUES ($1, $2, $3, $4, $5)",
      [claim.id, claim.idempotencyKey, claim.recipient, claim.txId, claim.apiKeyId],
    );
  }
}
