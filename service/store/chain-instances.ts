import { errorFacts } from "../logger";
import { ENDED_CLEARS } from "./payments";
import type { Stores } from "./stores";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Logger } from "../logger";

/** What the chain-instance check uses. */
export type ChainInstanceServices = Pick<Stores, "credits" | "db"> & {
  chains: ChainRegistry;
  config: Config;
  logger: Logger;
};

/**
 * Local chains started by `npm start` begin empty every time, while the embedded database survives. A chain whose
 * genesis block changed no longer holds what the database recorded for it, so those records are dropped (sandbox) or
 * the service refuses to start (production). The database never claims what the chain does not show.
 */
export async function checkChainInstances(services: ChainInstanceServices): Promise<void> {
  const { db, chains, config, logger } = services;
  for (const chain of chains.list()) {
    let genesis: string | undefined;
    try {
      genesis = (await chain.provider.getBlock(0))?.hash ?? undefined;
    } catch (error) {
      logger.warn(
        { chainId: chain.chainId, err: errorFacts(error) },
        "chain unreachable at start; genesis not checked",
      );
      continue;
    }
    if (!genesis) continue;
    const rows = await db.query<{ genesis_hash: string }>(
      "SELECT genesis_hash FROM chain_instances WHERE chain_id = $1",
      [chain.chainId],
    );
    if (rows.length && rows[0].genesis_hash !== genesis) {
      if (config.ENVIRONMENT === "production") {
        throw new Error(
          `Chain ${chain.chainId} has a different genesis block than the one recorded; refusing to start`,
        );
      }
      const refunded = await forgetChain(services, chain.chainId);
      logger.warn(
        { chainId: chain.chainId, abandonedBatches: refunded },
        "chain was reset: dropped the records of its previous instance, refunded abandoned batches",
      );
    }
    await db.query(
      `INSERT INTO chain_instances (chain_id, genesis_hash) VALUES ($1, $2)
       ON CONFLICT (chain_id) DO UPDATE SET genesis_hash = EXCLUDED.genesis_hash, seen_at = now()`,
      [chain.chainId, genesis],
    );
  }
}

/**
 * Deletes every record that describes state of one chain (tokens and their children, batches). Credit charges stay:
 * they are the ledger. Batches the reset abandoned mid-flight (sending) give their credit back and release their
 * payments first: their transactions went with the chain, so the caller got nothing for them.
 */
async function forgetChain(services: ChainInstanceServices, chainId: number): Promise<number> {
  return services.db.transaction(async (tx) => {
    const abandoned = await tx.query<{ tx_id: string }>(
      "SELECT tx_id FROM batches WHERE chain_id = $1 AND status = 'sending'",
      [chainId],
    );
    for (const { tx_id } of abandoned) {
      await services.credits.refund(tx, tx_id);
      await tx.query(
        `UPDATE payments SET status = 'released', release_reason = 'the chain was reset before the operation confirmed', ${ENDED_CLEARS}, updated_at = now() WHERE tx_id = $1 AND status = 'reserved'`,
        [tx_id],
      );
    }
    for (const table of chainScopedTables) await tx.query(table.sql, [chainId]);
    return abandoned.length;
  });
}

/** Child tables first. */
export const chainScopedTables: { sql: string }[] = [
  {
    sql: "DELETE FROM investments WHERE offering_id IN (SELECT o.id FROM offerings o JOIN tokens t ON t.id = o.token_id WHERE t.chain_id = $1)",
  },
  { sql: "DELETE FROM offerings WHERE token_id IN (SELECT id FROM tokens WHERE chain_id = $1)" },
  { sql: "DELETE FROM investors WHERE token_id IN (SELECT id FROM tokens WHERE chain_id = $1)" },
  { sql: "DELETE FROM dividend_distributions WHERE token_id IN (SELECT id FROM tokens WHERE chain_id = $1)" },
  { sql: "DELETE FROM dividend_claims WHERE token_id IN (SELECT id FROM tokens WHERE chain_id = $1)" },
  { sql: "DELETE FROM tokens WHERE chain_id = $1" },
  {
    sql: `UPDATE payments SET status = 'released', release_reason = 'payment chain was reset', ${ENDED_CLEARS} WHERE network = 'eip155:' || $1::text AND status IN ('reserved', 'settling')`,
  },
  { sql: "DELETE FROM agent_tokens WHERE chain_id = $1" },
  { sql: "DELETE FROM agent_activity WHERE chain_id = $1" },
  { sql: "DELETE FROM relayed_feedback WHERE chain_id = $1" },
  { sql: "DELETE FROM agents WHERE chain_id = $1" },
  { sql: "DELETE FROM wallet_nonces WHERE chain_id = $1" },
  { sql: "DELETE FROM rams_executors WHERE chain_id = $1" },
  { sql: "DELETE FROM faucet_claims WHERE tx_id IN (SELECT tx_id FROM batches WHERE chain_id = $1)" },
  { sql: "DELETE FROM batch_transaction_replacements WHERE tx_id IN (SELECT tx_id FROM batches WHERE chain_id = $1)" },
  { sql: "DELETE FROM batch_transactions WHERE tx_id IN (SELECT tx_id FROM batches WHERE chain_id = $1)" },
  { sql: "DELETE FROM batches WHERE chain_id = $1" },
];
