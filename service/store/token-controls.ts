import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "./db";

/**
 * The actions a control may record, the one list of them: the event catalogue's TokenControlData, GET
 * /get-token-controls and the check in `record` read it (the database keeps no CHECK of its own since migration 083).
 */
export const TOKEN_CONTROL_ACTIONS = [
  "frozen",
  "address_frozen",
  "address_unfrozen",
  "forced_transfer",
  "recovery",
  "paused",
  "unpaused",
  "role_granted",
  "role_revoked",
  "recovery_requested",
  "recovery_cancelled",
  "tokenizer_transfer_started",
  "tokenizer_changed",
  "upgrade_scheduled",
  "upgrade_cancelled",
  "upgraded",
] as const;
export type TokenControlAction = (typeof TOKEN_CONTROL_ACTIONS)[number];
const knownActions = new Set<string>(TOKEN_CONTROL_ACTIONS);

/** One issuer control as its event proves it. `amount` in token base units (the frozen amount after a freeze). */
export interface TokenControl {
  action: TokenControlAction;
  account: string | null;
  counterparty: string | null;
  amount: string | null;
  role: string | null;
  agent: string | null;
  txHash: string;
  logIndex: number;
  blockNumber: number;
}

export interface TokenControlRecord extends TokenControl {
  id: string;
  createdAt: string;
}

interface Row {
  id: string;
  action: TokenControlAction;
  account: string | null;
  counterparty: string | null;
  amount: string | null;
  role: string | null;
  agent: string | null;
  tx_hash: string;
  log_index: number;
  block_number: string;
  created_at: Date | string;
}

/** The issuer controls applied to each token (freezes, forced transfers, recoveries, pauses, role changes). */
export class TokenControls {
  constructor(private readonly db: Db) {}

  /** Idempotent: a batch's receipts recorded twice (a resume) write each event once. */
  async record(tx: Queryable, tokenId: string, c: TokenControl): Promise<void> {
    if (!knownActions.has(c.action)) throw new Error(`unknown token control action ${String(c.action)}`);
    await tx.write(
      `INSERT INTO token_controls (id, token_id, action, account, counterparty, amount, role, agent, tx_hash, log_index, block_number)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (tx_hash, log_index) DO NOTHING`,
      [
        randomUUID(),
        tokenId,
        c.action,
        c.account?.toLowerCase() ?? null,
        c.counterparty?.toLowerCase() ?? null,
        c.amount,
        c.role,
        c.agent?.toLowerCase() ?? null,
        c.txHash.toLowerCase(),
        c.logIndex,
        c.blockNumber,
      ],
    );
  }

  /** Oldest first; `account` matches either side. */
  async list(
    tokenId: string,
    q: { account?: string; limit: number; offset: number },
  ): Promise<{ total: number; controls: TokenControlRecord[] }> {
    const filter = q.account ? "AND (account = $2 OR counterparty = $2)" : "";
    const params: unknown[] = q.account ? [tokenId, q.account.toLowerCase()] : [tokenId];
    const [count] = await this.db.query<{ total: string }>(
      `SELECT count(*) AS total FROM token_controls WHERE token_id = $1 ${filter}`,
      params,
    );
    const rows = await this.db.query<Row>(
      `SELECT * FROM token_controls WHERE token_id = $1 ${filter} ORDER BY block_number, log_index LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    );
    return {
      total: Number(count.total),
      controls: rows.map((r) => ({
        id: r.id,
        action: r.action,
        account: r.account,
        counterparty: r.counterparty,
        amount: r.amount,
        role: r.role,
        agent: r.agent,
        txHash: r.tx_hash,
        logIndex: r.log_index,
        blockNumber: Number(r.block_number),
        createdAt: new Date(r.created_at).toISOString(),
      })),
    };
  }
}
