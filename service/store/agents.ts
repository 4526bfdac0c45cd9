import type { Db, Queryable } from "./db";
import { iso } from "./columns";

/** An ERC-8004 agent registered through this service. */
export interface AgentRecord {
  uuid: string;
  chainId: number;
  registry: string;
  agentId: string;
  apiKeyId: string | null;
  ownerEmail: string | null;
  /** Who controls the agent: its on-chain owner, or the paying wallet while the relayer holds the NFT for it. */
  ownerWallet: string;
  /** The relayer holding the NFT in custody for ownerWallet (relayed registration); null once the owner holds it. */
  custodian: string | null;
  agentWallet: string | null;
  agentUri: string;
  registration: Record<string, unknown>;
  metadataKeys: string[];
  prepareTxId: string;
  createdAt: string;
  updatedAt: string;
}

/** An agent-owned ERC-20 created through this service's factory. */
export interface AgentTokenRecord {
  tokenAddress: string;
  chainId: number;
  agentWallet: string;
  name: string;
  symbol: string;
  decimals: number;
  ownerEmail: string | null;
}

export type AgentCategory = "erc8004" | "agentToken" | "rams";

export interface AgentActivity {
  txId: string;
  chainId: number;
  agentUuid: string | null;
  tokenAddress: string | null;
  category: AgentCategory;
  method: string;
  txHashes: string[];
  details: Record<string, unknown>;
  createdAt: string;
}

const toAgent = (r: any): AgentRecord => ({
  uuid: r.uuid,
  chainId: r.chain_id,
  registry: r.registry,
  agentId: String(r.agent_id),
  apiKeyId: r.api_key_id,
  ownerEmail: r.owner_email,
  ownerWallet: r.owner_wallet,
  custodian: r.custodian,
  agentWallet: r.agent_wallet,
  agentUri: r.agent_uri,
  registration: r.registration,
  metadataKeys: r.metadata_keys ?? [],
  prepareTxId: r.prepare_tx_id,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

const toActivity = (r: any): AgentActivity => ({
  txId: r.tx_id,
  chainId: r.chain_id,
  agentUuid: r.agent_uuid,
  tokenAddress: r.token_address,
  category: r.category,
  method: r.method,
  txHashes: r.tx_hashes,
  details: r.details,
  createdAt: iso(r.created_at),
});

export interface AgentFilter {
  apiKeyId?: string;
  chainId?: number;
  ownerWallet?: string;
}

/** Agents, their activity, and the feedback the relayer gave for payers. Addresses are stored checksummed. */
export class Agents {
  constructor(private readonly db: Db) {}

  async byUuid(uuid: string, q: Queryable = this.db): Promise<AgentRecord | undefined> {
    const [row] = await q.query("SELECT * FROM agents WHERE uuid = $1", [uuid]);
    return row && toAgent(row);
  }

  async byAgentId(chainId: number, registry: string, agentId: bigint | string): Promise<AgentRecord | undefined> {
    const [row] = await this.db.query(
      "SELECT * FROM agents WHERE chain_id = $1 AND lower(registry) = lower($2) AND agent_id = $3",
      [chainId, registry, String(agentId)],
    );
    return row && toAgent(row);
  }

  /** The first agent (any chain) whose agent wallet is one of `wallets`. */
  async byWallet(wallets: string[], q: Queryable = this.db): Promise<AgentRecord | undefined> {
    const [row] = await q.query(
      "SELECT * FROM agents WHERE lower(agent_wallet) = ANY($1) ORDER BY created_at LIMIT 1",
      [wallets.map((w) => w.toLowerCase())],
    );
    return row && toAgent(row);
  }

  async insert(q: Queryable, a: Omit<AgentRecord, "createdAt" | "updatedAt" | "metadataKeys">): Promise<void> {
    await q.query(
      `INSERT INTO agents (uuid, chain_id, registry, agent_id, api_key_id, owner_email, owner_wallet, custodian, agent_wallet, agent_uri, registration, prepare_tx_id)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (uuid) DO NOTHING`,
      [
        a.uuid,
        a.chainId,
        a.registry,
        a.agentId,
        a.apiKeyId,
        a.ownerEmail,
        a.ownerWallet,
        a.custodian,
        a.agentWallet,
        a.agentUri,
        JSON.stringify(a.registration),
        a.prepareTxId,
      ],
    );
  }

  async update(
    q: Queryable,
    uuid: string,
    change: Partial<Pick<AgentRecord, "ownerWallet" | "custodian" | "agentWallet" | "agentUri" | "registration">> & {
      metadataKey?: string;
    },
  ): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [uuid];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (change.ownerWallet !== undefined) set("owner_wallet", change.ownerWallet);
    if (change.custodian !== undefined) set("custodian", change.custodian);
    if (change.agentWallet !== undefined) set("agent_wallet", change.agentWallet);
    if (change.agentUri !== undefined) set("agent_uri", change.agentUri);
    if (change.registration !== undefined) set("registration", JSON.stringify(change.registration));
    if (change.metadataKey !== undefined) {
      params.push(JSON.stringify([change.metadataKey]));
      sets.push(
        `metadata_keys = CASE WHEN metadata_keys @> $${params.length}::jsonb THEN metadata_keys ELSE metadata_keys || $${params.length}::jsonb END`,
      );
    }
    if (!sets.length) return;
    await q.query(`UPDATE agents SET ${sets.join(", ")}, updated_at = now() WHERE uuid = $1`, params);
  }

  async list(
    filter: AgentFilter,
    page: { limit: number; offset: number },
  ): Promise<{ agents: AgentRecord[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace("?", `$${params.length}`));
    };
    if (filter.apiKeyId) add("api_key_id = ?", filter.apiKeyId);
    if (filter.chainId) add("chain_id = ?", filter.chainId);
    if (filter.ownerWallet) add("lower(owner_wallet) = lower(?)", filter.ownerWallet);
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const [{ count }] = await this.db.query<{ count: string }>(
      `SELECT count(*)::text AS count FROM agents ${clause}`,
      params,
    );
    const rows = await this.db.query(
      `SELECT * FROM agents ${clause} ORDER BY created_at, uuid LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return { agents: rows.map(toAgent), total: Number(count) };
  }

  async tokenByAddress(chainId: number, tokenAddress: string): Promise<AgentTokenRecord | undefined> {
    const [r] = await this.db.query<any>(
      "SELECT * FROM agent_tokens WHERE chain_id = $1 AND lower(token_address) = lower($2)",
      [chainId, tokenAddress],
    );
    return (
      r && {
        tokenAddress: r.token_address,
        chainId: r.chain_id,
        agentWallet: r.agent_wallet,
        name: r.name,
        symbol: r.symbol,
        decimals: Number(r.decimals),
        ownerEmail: r.owner_email,
      }
    );
  }

  async recordActivity(q: Queryable, a: Omit<AgentActivity, "createdAt">): Promise<void> {
    await q.write(
      `INSERT INTO agent_activity (tx_id, chain_id, agent_uuid, token_address, category, method, tx_hashes, details)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (tx_id) DO NOTHING`,
      [
        a.txId,
        a.chainId,
        a.agentUuid,
        a.tokenAddress,
        a.category,
        a.method,
        JSON.stringify(a.txHashes),
        JSON.stringify(a.details),
      ],
    );
  }

  /**
   * An agent's activity, newest first: what was done to it, and to the agent tokens of its wallets (its owner and its
   * agent wallet own and mint them).
   */
  async activity(
    agent: AgentRecord,
    page: { limit: number; offset: number },
  ): Promise<{ transactions: AgentActivity[]; total: number }> {
    const wallets = [agent.ownerWallet, agent.agentWallet].filter((w): w is string => !!w).map((w) => w.toLowerCase());
    const clause = `WHERE agent_uuid = $1 OR lower(token_address) IN (SELECT lower(token_address) FROM agent_tokens WHERE chain_id = $2 AND lower(agent_wallet) = ANY($3))`;
    const params = [agent.uuid, agent.chainId, wallets];
    const [{ count }] = await this.db.query<{ count: string }>(
      `SELECT count(*)::text AS count FROM agent_activity ${clause}`,
      params,
    );
    const rows = await this.db.query(
      `SELECT * FROM agent_activity ${clause} ORDER BY created_at DESC, tx_id LIMIT ${page.limit} OFFSET ${page.offset}`,
      params,
    );
    return { transactions: rows.map(toActivity), total: Number(count) };
  }

  async recordRelayedFeedback(
    q: Queryable,
    f: { chainId: number; agentId: string; client: string; feedbackIndex: string; payer: string; txId: string },
  ): Promise<void> {
    await q.write(
      `INSERT INTO relayed_feedback (chain_id, agent_id, client, feedback_index, payer, tx_id) VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
      [f.chainId, f.agentId, f.client.toLowerCase(), f.feedbackIndex, f.payer.toLowerCase(), f.txId],
    );
  }

  async relayedFeedbackPayer(
    chainId: number,
    agentId: string,
    client: string,
    feedbackIndex: string,
  ): Promise<string | undefined> {
    const [row] = await this.db.query<{ payer: string }>(
      "SELECT payer FROM relayed_feedback WHERE chain_id = $1 AND agent_id = $2 AND client = $3 AND feedback_index = $4",
      [chainId, agentId, client.toLowerCase(), feedbackIndex],
    );
    return row?.payer;
  }
}
