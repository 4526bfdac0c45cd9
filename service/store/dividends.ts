import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "./db";

export interface DividendDistributionRecord {
  id: string;
  amount: string;
  distributor: string;
  txHash: string;
  blockNumber: number;
  createdAt: string;
}

export interface DividendClaimRecord {
  id: string;
  holder: string;
  amount: string;
  txHash: string;
  blockNumber: number;
  createdAt: string;
}

interface Row {
  id: string;
  amount: string;
  distributor?: string;
  holder?: string;
  tx_hash: string;
  block_number: string;
  created_at: Date | string;
}

/** Dividend distributions and claims, as their receipts show them (amounts in payment-token base units). */
export class Dividends {
  constructor(private readonly db: Db) {}

  async recordDistribution(
    tx: Queryable,
    tokenId: string,
    d: { amount: bigint; distributor: string; txHash: string; blockNumber: number },
  ) {
    await tx.write(
      `INSERT INTO dividend_distributions (id, token_id, amount, distributor, tx_hash, block_number)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tx_hash) DO NOTHING`,
      [randomUUID(), tokenId, d.amount.toString(), d.distributor.toLowerCase(), d.txHash.toLowerCase(), d.blockNumber],
    );
  }

  async recordClaim(
    tx: Queryable,
    tokenId: string,
    c: { amount: bigint; holder: string; txHash: string; blockNumber: number },
  ) {
    await tx.write(
      `INSERT INTO dividend_claims (id, token_id, holder, amount, tx_hash, block_number)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tx_hash) DO NOTHING`,
      [randomUUID(), tokenId, c.holder.toLowerCase(), c.amount.toString(), c.txHash.toLowerCase(), c.blockNumber],
    );
  }

  async distributions(tokenId: string): Promise<DividendDistributionRecord[]> {
    const rows = await this.db.query<Row>(
      "SELECT * FROM dividend_distributions WHERE token_id = $1 ORDER BY block_number, created_at",
      [tokenId],
    );
    return rows.map((r) => ({
      id: r.id,
      amount: r.amount,
      distributor: r.distributor!,
      txHash: r.tx_hash,
      blockNumber: Number(r.block_number),
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }

  async claims(tokenId: string): Promise<DividendClaimRecord[]> {
    const rows = await this.db.query<Row>(
      "SELECT * FROM dividend_claims WHERE token_id = $1 ORDER BY block_number, created_at",
      [tokenId],
    );
    return rows.map((r) => ({
      id: r.id,
      holder: r.holder!,
      amount: r.amount,
      txHash: r.tx_hash,
      blockNumber: Number(r.block_number),
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }
}
