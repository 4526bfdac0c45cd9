import { badRequest, conflict } from "../errors";
import { cancelRelayed, rebroadcast, replaceWithHigherFees, type ActionOutcome } from "../engine/operator-actions";
import type { BatchFilter, BatchRow } from "../store/batch-search";
import type { OperatorRecord } from "../store/operators";
import type { Services } from "../usecases/services";
import { chainFacts, stuckBounds } from "./chain-facts";
import { isCancellation } from "./transaction-detail";
import { listPage, parseTimeCursor, timeCursor, TX_ID, type ListPage } from "./paging";
import type { TransactionsQuery } from "./queries";

/**
 * A search of the batches: `q` is a txId or a transaction hash (the one batch that has it, `match`), an address (the
 * signer, or any address a transaction is from or to) or an API key id; chain, method, status, a time range of their
 * preparation and "stuck" (a transaction pending CONSOLE_STUCK_AFTER_BLOCKS blocks or more, or priced below its
 * chain's base fee) narrow it. Newest first, a page at a time, both ways.
 */
export async function searchTransactions(
  services: Services,
  query: TransactionsQuery,
): Promise<ListPage<BatchRow> & { match?: string }> {
  const q = query.q?.trim() ?? "";
  if (/^0x[0-9a-fA-F]{64}$/.test(q)) {
    const txId =
      (await services.batchSearch.page({ txId: q, limit: 1 }))[0]?.txId ??
      (await services.batchTransactions.txIdByHash(q));
    const items = txId ? await services.batchSearch.page({ txId, limit: 1 }) : [];
    return {
      items,
      next: null,
      previous: null,
      total: items.length,
      first: items.length ? 1 : 0,
      ...(txId ? { match: txId } : {}),
    };
  }
  const narrowed = /^0x[0-9a-fA-F]{40}$/.test(q)
    ? { address: q }
    : /^[0-9a-f]{16}$/.test(q)
      ? { apiKeyId: q }
      : q === ""
        ? {}
        : undefined;
  if (!narrowed)
    throw badRequest(
      "q must be a txId or a transaction hash (0x + 64 hex), an address (0x + 40 hex) or an API key id (16 hex)",
      { field: "q" },
    );
  const filter: BatchFilter = {
    ...narrowed,
    chainId: query.chain,
    method: query.method,
    status: query.status,
    from: query.from,
    to: query.to,
  };
  if (query.chain !== undefined && !services.chains.find(query.chain))
    throw badRequest(`chain must be a chain this service serves: ${chainIds(services)}`, { field: "chain" });
  if (query.stuck) {
    const facts = await chainFacts(services.chains.list(), services.config);
    filter.stuck = stuckBounds(facts, services.config.CONSOLE_STUCK_AFTER_BLOCKS);
  }
  const before = parseTimeCursor(query.before, "before", TX_ID);
  const after = parseTimeCursor(query.after, "after", TX_ID);
  return listPage(
    (limit) =>
      services.batchSearch.page({
        ...filter,
        before: before && { createdAt: before.at, txId: before.id },
        after: after && { createdAt: after.at, txId: after.id },
        limit,
      }),
    (first) => services.batchSearch.count(filter, first),
    (row) => timeCursor(row.createdAt, row.txId),
  );
}

const chainIds = (services: Services) =>
  services.chains
    .list()
    .map((c) => c.chainId)
    .join(", ");

export type TransactionAction = "rebroadcast" | "replace" | "cancel";

const ACTIONS = { rebroadcast, replace: replaceWithHigherFees, cancel: cancelRelayed } as const;

/** An operator's action on a relayed transaction, done through the engine and written to the audit log. */
export async function transactionAction(
  services: Services,
  operator: OperatorRecord,
  txId: string,
  index: number,
  action: TransactionAction,
): Promise<ActionOutcome> {
  if (action === "cancel") {
    const tx = (await services.batches.get(txId.toLowerCase()))?.transactions[index];
    if (tx && isCancellation(tx))
      throw conflict(
        `Transaction ${index + 1} of ${txId} is already being cancelled (its no-op ${tx.txHash} is live): send it again, or replace it with higher fees`,
        { field: "index", state: "cancelling" },
      );
  }
  const outcome = await ACTIONS[action](services, txId.toLowerCase(), index);
  await services.auditLog.record({
    actor: operator.email,
    action: `transaction.${action}`,
    target: outcome.txId,
    before: { index, hash: outcome.previousHash },
    after: outcome,
  });
  services.logger.info(
    { operator: operator.email, txId: outcome.txId, index, action, hash: outcome.hash },
    "operator acted on a relayed transaction",
  );
  return outcome;
}
