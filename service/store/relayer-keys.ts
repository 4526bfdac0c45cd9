import { getAddress } from "ethers";
import type { KeySource } from "../signers/key-sources";
import type { Db } from "./db";

export type RelayerKeyState = "active" | "draining" | "removed";

/** An operator's decision about one relayer key (store of `relayer-keys` commands; migration 045). */
export interface RelayerKeyRecord {
  /** 0: every chain the relayer serves. */
  chainId: number;
  /** Checksummed. */
  address: string;
  state: RelayerKeyState;
  /** Where an added key is; null for a key of the configuration. */
  source: KeySource | null;
  addedAt: string;
  changedAt: string;
}

/** A relayer key's unfinished work: batches being sent, and batches prepared for it lately and not sent yet. */
export interface RelayerKeyWork {
  sending: number;
  prepared: number;
}

/**
 * A prepared batch not sent within this long no longer holds its relayer key back from removal (sent later, it is
 * refused with 409 and prepared again for a key the service has).
 */
export const PREPARED_HOLD_MINUTES = 15;

interface Row {
  chain_id: string;
  address: string;
  state: RelayerKeyState;
  source: KeySource | null;
  added_at: Date | string;
  changed_at: Date | string;
}

/** Relayer keys added, drained and removed by the operator on a running service, shared by every instance. */
export class RelayerKeys {
  constructor(private readonly db: Db) {}

  async list(): Promise<RelayerKeyRecord[]> {
    const rows = await this.db.query<Row>(
      "SELECT chain_id, address, state, source, added_at, changed_at FROM relayer_keys ORDER BY added_at, chain_id, address",
    );
    return rows.map((r) => ({
      chainId: Number(r.chain_id),
      address: getAddress(r.address),
      state: r.state,
      source: r.source,
      addedAt: new Date(r.added_at).toISOString(),
      changedAt: new Date(r.changed_at).toISOString(),
    }));
  }

  /** Adds (or adds again) a key at `source`, active. */
  async add(chainId: number, address: string, source: KeySource): Promise<void> {
    await this.db.query(
      `INSERT INTO relayer_keys (chain_id, address, state, source) VALUES ($1, $2, 'active', $3)
       ON CONFLICT (chain_id, address) DO UPDATE SET state = 'active', source = EXCLUDED.source, changed_at = now()`,
      [chainId, address.toLowerCase(), JSON.stringify(source)],
    );
  }

  /** Sets a key's state (a key of the configuration gets its row now). */
  async setState(chainId: number, address: string, state: RelayerKeyState): Promise<void> {
    await this.db.query(
      `INSERT INTO relayer_keys (chain_id, address, state) VALUES ($1, $2, $3)
       ON CONFLICT (chain_id, address) DO UPDATE SET state = EXCLUDED.state, changed_at = now()`,
      [chainId, address.toLowerCase(), state],
    );
  }

  /** The unfinished work of the relayer key `address` on `chainId` (0: on every chain). */
  async work(chainId: number, address: string): Promise<RelayerKeyWork> {
    const [row] = await this.db.query<{ sending: string; prepared: string }>(
      `SELECT count(*) FILTER (WHERE b.status = 'sending') AS sending,
              count(*) FILTER (WHERE b.status = 'prepared' AND b.created_at > now() - make_interval(mins => $3)) AS prepared
       FROM batches b
       WHERE b.execution_mode = 'service-relayed' AND b.status IN ('prepared', 'sending') AND ($1 = 0 OR b.chain_id = $1)
         AND EXISTS (SELECT 1 FROM batch_transactions t WHERE t.tx_id = b.tx_id AND lower(t.unsigned->>'from') = $2)`,
      [chainId, address.toLowerCase(), PREPARED_HOLD_MINUTES],
    );
    return { sending: Number(row.sending), prepared: Number(row.prepared) };
  }
}
