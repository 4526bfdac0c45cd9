import type { Db, Queryable } from "./db";

/**
 * Nonces of the wallets the service itself signs with (relayer, x402 settlement), kept in the database. A nonce is
 * taken under a row lock, in the same transaction that stores the transaction signed with it, so a nonce is never
 * used twice, never skipped by a crash, and shared safely by several service instances on one PostgreSQL server.
 */
export class WalletNonces {
  /** The next nonce as this process last took, synced or read it, per "chainId:address" (see provisional). */
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly db: Db) {}

  private seen(chainId: number, address: string, next: number): void {
    this.lastSeen.set(`${chainId}:${address.toLowerCase()}`, next);
  }

  /** Takes the next nonce inside `tx` (which must also persist the signed transaction). */
  async take(tx: Queryable, chainId: number, address: string, chainPending: () => Promise<number>): Promise<number> {
    const key = [chainId, address.toLowerCase()];
    // The UPDATE locks the row until `tx` ends: a concurrent taker waits, then takes the next one.
    const advance =
      "UPDATE wallet_nonces SET next_nonce = next_nonce + 1 WHERE chain_id = $1 AND address = $2 RETURNING next_nonce - 1 AS nonce";
    let [row] = await tx.query<{ nonce: string }>(advance, key);
    if (!row) {
      // A wallet's first nonce comes from the chain; of two first takers, the one whose insert loses advances instead.
      [row] = await tx.query<{ nonce: string }>(
        "INSERT INTO wallet_nonces (chain_id, address, next_nonce) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING next_nonce - 1 AS nonce",
        [...key, (await chainPending()) + 1],
      );
      if (!row) [row] = await tx.query<{ nonce: string }>(advance, key);
    }
    this.seen(chainId, address, Number(row.nonce) + 1);
    return Number(row.nonce);
  }

  /** The next nonce the service will take for a wallet (undefined before its first). */
  async next(chainId: number, address: string): Promise<number | undefined> {
    const [row] = await this.db.query<{ next_nonce: string }>(
      "SELECT next_nonce::text AS next_nonce FROM wallet_nonces WHERE chain_id = $1 AND address = $2",
      [chainId, address.toLowerCase()],
    );
    if (row) this.seen(chainId, address, Number(row.next_nonce));
    return row ? Number(row.next_nonce) : undefined;
  }

  /**
   * The next nonce as this process last saw it (its own takes and syncs), read from the database only before it saw any:
   * what a relayed prepare shows, provisional anyway (the relayer takes the real one when it signs), without a trip to
   * the database per prepare. Other instances' takes since are not in it.
   */
  async provisional(chainId: number, address: string): Promise<number | undefined> {
    return this.lastSeen.get(`${chainId}:${address.toLowerCase()}`) ?? this.next(chainId, address);
  }

  /** Raises the counter to the chain's pending count (never lowers it: signed, unsent transactions hold the gap). */
  async syncFloor(chainId: number, address: string, chainPending: number): Promise<number> {
    const [row] = await this.db.query<{ next_nonce: string }>(
      `INSERT INTO wallet_nonces (chain_id, address, next_nonce) VALUES ($1, $2, $3)
       ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = GREATEST(wallet_nonces.next_nonce, EXCLUDED.next_nonce)
       RETURNING next_nonce`,
      [chainId, address.toLowerCase(), chainPending],
    );
    this.seen(chainId, address, Number(row.next_nonce));
    return Number(row.next_nonce);
  }

  /**
   * Nonces at or above `from` that transactions of this wallet still hold: relayed transactions signed or broadcast
   * and not ended, and x402 settlements being sent. Ascending.
   */
  async held(chainId: number, address: string, from: number, q: Queryable = this.db): Promise<number[]> {
    const addr = address.toLowerCase();
    const rows = await q.query<{ nonce: string }>(
      `SELECT (t.unsigned->>'nonce')::bigint::text AS nonce FROM batch_transactions t JOIN batches b ON b.tx_id = t.tx_id
       WHERE b.chain_id = $1 AND lower(t.unsigned->>'from') = $2 AND t.status IN ('signed', 'broadcast') AND (t.unsigned->>'nonce')::bigint >= $3
       UNION SELECT settle_tx_nonce::text FROM payments WHERE status = 'settling' AND settle_tx_nonce IS NOT NULL AND network = 'eip155:' || $1::text
         AND lower(settle_tx_from) = $2 AND settle_tx_nonce >= $3`,
      [chainId, addr, from],
    );
    return rows.map((r) => Number(r.nonce)).sort((a, b) => a - b);
  }

  /**
   * The nonces in use at or above `onChain` (held) and, in the same database transaction with the wallet's counter
   * locked first (no nonce is taken in between), the counter rewound to just above them (or to `onChain`) when it
   * drifted higher.
   */
  async heal(
    chainId: number,
    address: string,
    onChain: number,
  ): Promise<{ held: number[]; rewound?: { was: number; next: number } }> {
    return this.db.transaction(async (q) => {
      await q.query("SELECT next_nonce FROM wallet_nonces WHERE chain_id = $1 AND address = $2 FOR UPDATE", [
        chainId,
        address.toLowerCase(),
      ]);
      const held = await this.held(chainId, address, onChain, q);
      const next = held.length ? Math.max(onChain, held[held.length - 1] + 1) : onChain;
      return { held, rewound: await this.rewind(chainId, address, next, q) };
    });
  }

  /** Lowers the counter to `next` when it is above it (never raises it). The counter before, or undefined when unchanged. */
  async rewind(
    chainId: number,
    address: string,
    next: number,
    q: Queryable = this.db,
  ): Promise<{ was: number; next: number } | undefined> {
    const [row] = await q.query<{ was: string }>(
      `UPDATE wallet_nonces w SET next_nonce = $3 FROM (SELECT next_nonce FROM wallet_nonces WHERE chain_id = $1 AND address = $2 FOR UPDATE) old
       WHERE w.chain_id = $1 AND w.address = $2 AND w.next_nonce > $3 RETURNING old.next_nonce::text AS was`,
      [chainId, address.toLowerCase(), next],
    );
    return row ? { was: Number(row.was), next } : undefined;
  }

  /** Gives back `nonce` if it is the last one taken (its transaction never reached the chain). True when given back. */
  async giveBack(chainId: number, address: string, nonce: number): Promise<boolean> {
    const rows = await this.db.query(
      "UPDATE wallet_nonces SET next_nonce = $3 WHERE chain_id = $1 AND address = $2 AND next_nonce = $4 RETURNING next_nonce",
      [chainId, address.toLowerCase(), nonce, nonce + 1],
    );
    return rows.length > 0;
  }
}
