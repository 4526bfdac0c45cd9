import { getAddress } from "ethers";
import type { Db } from "./db";

/** An AgentExecutor the operator set up for a principal (written by `npm run admin -- rams setup-executor`). */
export interface RamsExecutorRecord {
  chainId: number;
  executor: string;
  registry: string;
  principal: string;
  owner: string;
  createdAt: string;
}

const toRecord = (r: any): RamsExecutorRecord => ({
  chainId: r.chain_id,
  executor: getAddress(r.executor),
  registry: getAddress(r.registry),
  principal: getAddress(r.principal),
  owner: getAddress(r.owner),
  createdAt: (r.created_at instanceof Date ? r.created_at : new Date(r.created_at)).toISOString(),
});

/** Executors per principal; the latest recorded one is the principal's default executor. Addresses stored lower-case. */
export class RamsExecutors {
  constructor(private readonly db: Db) {}

  async record(entry: {
    chainId: number;
    executor: string;
    registry: string;
    principal: string;
    owner: string;
  }): Promise<RamsExecutorRecord> {
    const [row] = await this.db.query(
      `INSERT INTO rams_executors (chain_id, executor, registry, principal, owner) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (chain_id, executor) DO UPDATE SET registry = EXCLUDED.registry, principal = EXCLUDED.principal, owner = EXCLUDED.owner, created_at = now()
       RETURNING *`,
      [
        entry.chainId,
        entry.executor.toLowerCase(),
        entry.registry.toLowerCase(),
        entry.principal.toLowerCase(),
        entry.owner.toLowerCase(),
      ],
    );
    return toRecord(row);
  }

  /** The principal's default executor on a chain (the latest recorded), optionally for one registry. */
  async defaultFor(chainId: number, principal: string, registry?: string): Promise<RamsExecutorRecord | undefined> {
    const rows = await this.db.query(
      `SELECT * FROM rams_executors WHERE chain_id = $1 AND principal = $2 AND ($3::text IS NULL OR registry = $3)
       ORDER BY created_at DESC, executor LIMIT 1`,
      [chainId, principal.toLowerCase(), registry?.toLowerCase() ?? null],
    );
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list(chainId?: number): Promise<RamsExecutorRecord[]> {
    const rows = await this.db.query(
      "SELECT * FROM rams_executors WHERE ($1::int IS NULL OR chain_id = $1) ORDER BY chain_id, created_at, executor",
      [chainId ?? null],
    );
    return rows.map(toRecord);
  }
}
