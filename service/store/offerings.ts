import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "./db";
import { iso } from "./columns";

export interface OfferingRecord {
  id: string;
  tokenId: string;
  onchainId: number;
  name: string;
  acceptedCoin: string;
  tokenAmount: string;
  price: string;
  softCap: string;
  hardCap: string;
  minInvestment: string;
  maxInvestment: string;
  startTime: string;
  endTime: string;
  createdTxHash: string;
  closed: boolean;
  succeeded: boolean | null;
  raisedAtClose: string | null;
  createdAt: string;
}

export interface InvestmentRecord {
  id: string;
  offeringId: string;
  investorAddress: string;
  investorEmail: string | null;
  amount: string;
  refunded: string;
  tokens: string;
  txHash: string;
  blockNumber: number;
  status: string;
  createdAt: string;
}

const toOffering = (r: any): OfferingRecord => ({
  id: r.id,
  tokenId: r.token_id,
  onchainId: r.onchain_id,
  name: r.name,
  acceptedCoin: r.accepted_coin,
  tokenAmount: r.token_amount,
  price: r.price,
  softCap: r.soft_cap,
  hardCap: r.hard_cap,
  minInvestment: r.min_investment,
  maxInvestment: r.max_investment,
  startTime: iso(r.start_time),
  endTime: iso(r.end_time),
  createdTxHash: r.created_tx_hash,
  closed: r.closed,
  succeeded: r.succeeded,
  raisedAtClose: r.raised_at_close,
  createdAt: iso(r.created_at),
});

const toInvestment = (r: any): InvestmentRecord => ({
  id: r.id,
  offeringId: r.offering_id,
  investorAddress: r.investor_address,
  investorEmail: r.investor_email,
  amount: r.amount,
  refunded: r.refunded,
  tokens: r.tokens,
  txHash: r.tx_hash,
  blockNumber: Number(r.block_number),
  status: r.status,
  createdAt: iso(r.created_at),
});

export type NewOffering = Omit<OfferingRecord, "id" | "closed" | "succeeded" | "raisedAtClose" | "createdAt">;

/** Offerings and investments, written from escrow events only. */
export class Offerings {
  constructor(private readonly db: Db) {}

  async insert(tx: Queryable, o: NewOffering): Promise<void> {
    await tx.query(
      `INSERT INTO offerings (id, token_id, onchain_id, name, accepted_coin, token_amount, price, soft_cap, hard_cap,
         min_investment, max_investment, start_time, end_time, created_tx_hash)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT (token_id, onchain_id) DO NOTHING`,
      [
        randomUUID(),
        o.tokenId,
        o.onchainId,
        o.name,
        o.acceptedCoin,
        o.tokenAmount,
        o.price,
        o.softCap,
        o.hardCap,
        o.minInvestment,
        o.maxInvestment,
        o.startTime,
        o.endTime,
        o.createdTxHash,
      ],
    );
  }

  async markClosed(
    tx: Queryable,
    tokenId: string,
    onchainId: number,
    c: { succeeded: boolean; raised: bigint; txHash: string },
  ) {
    await tx.query(
      "UPDATE offerings SET closed = true, succeeded = $3, raised_at_close = $4, closed_tx_hash = $5 WHERE token_id = $1 AND onchain_id = $2",
      [tokenId, onchainId, c.succeeded, c.raised.toString(), c.txHash],
    );
  }

  async byToken(tokenId: string): Promise<OfferingRecord[]> {
    return (await this.db.query("SELECT * FROM offerings WHERE token_id = $1 ORDER BY onchain_id", [tokenId])).map(
      toOffering,
    );
  }

  async byId(id: string): Promise<OfferingRecord | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const [row] = await this.db.query("SELECT * FROM offerings WHERE id = $1", [id]);
    return row && toOffering(row);
  }

  async byOnchainId(tokenId: string, onchainId: number, q: Queryable = this.db): Promise<OfferingRecord | undefined> {
    const [row] = await q.query("SELECT * FROM offerings WHERE token_id = $1 AND onchain_id = $2", [
      tokenId,
      onchainId,
    ]);
    return row && toOffering(row);
  }

  async recordInvestment(
    tx: Queryable,
    i: {
      offeringId: string;
      investorAddress: string;
      investorEmail: string | null;
      amount: bigint;
      refunded: bigint;
      tokens: bigint;
      txHash: string;
      logIndex: number;
      blockNumber: number;
    },
  ) {
    await tx.query(
      `INSERT INTO investments (id, offering_id, investor_address, investor_email, amount, refunded, tokens, tx_hash, log_index, block_number)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) ON CONFLICT (tx_hash, log_index) DO NOTHING`,
      [
        randomUUID(),
        i.offeringId,
        i.investorAddress.toLowerCase(),
        i.investorEmail,
        i.amount.toString(),
        i.refunded.toString(),
        i.tokens.toString(),
        i.txHash,
        i.logIndex,
        i.blockNumber,
      ],
    );
  }

  /** An investor's claim settles all of its investments in the offering. */
  async markClaimed(tx: Queryable, offeringId: string, investor: string, status: "claimTokens" | "refund") {
    await tx.query("UPDATE investments SET status = $3 WHERE offering_id = $1 AND investor_address = $2", [
      offeringId,
      investor.toLowerCase(),
      status,
    ]);
  }

  async investments(offeringId: string): Promise<InvestmentRecord[]> {
    return (
      await this.db.query("SELECT * FROM investments WHERE offering_id = $1 ORDER BY block_number, log_index", [
        offeringId,
      ])
    ).map(toInvestment);
  }

  async investmentsByEmail(
    tokenId: string,
    email: string,
  ): Promise<(InvestmentRecord & { offeringName: string; onchainId: number })[]> {
    const rows = await this.db.query(
      `SELECT i.*, o.name AS offering_name, o.onchain_id FROM investments i JOIN offerings o ON o.id = i.offering_id
       WHERE o.token_id = $1 AND lower(i.investor_email) = lower($2) ORDER BY i.block_number, i.log_index`,
      [tokenId, email],
    );
    return rows.map((r: any) => ({ ...toInvestment(r), offeringName: r.offering_name, onchainId: r.onchain_id }));
  }
}
