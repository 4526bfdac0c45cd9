import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import { conflicting, notYours } from "./errors";
import { clientReplacements } from "./send";
import type { Batch } from "../model/batch";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import type { Logger } from "../logger";
import type { BatchRunner } from "./runner";

/** What a client's replacement uses. */
export type ReplaceServices = Pick<Stores, "batches" | "batchTransactions" | "db"> & {
  chains: ChainRegistry;
  logger: Logger;
  runner: BatchRunner;
};

/**
 * A client replaces transactions of its pending client-signed batch with higher fees (same txId, same nonces): each
 * replacement is checked against the prepared transaction and the current one, stored beside the current hash
 * (whichever is mined wins), and broadcast. Nothing is charged again. A batch prepared under a key takes replacements
 * only with that key; a keyless one from whoever holds the signer's key (the signature proves it).
 */
export async function replacePendingTransactions(
  services: ReplaceServices,
  callerKeyId: string | undefined,
  txId: string,
  signed: string[],
): Promise<Batch> {
  const batch = await services.batches.get(txId);
  if (!batch || batch.status !== "sending") throw conflicting(`txId ${txId} is not pending`, { txId });
  if (batch.apiKeyId && batch.apiKeyId !== callerKeyId)
    throw notYours("Only the API key that prepared this txId may replace its transactions", { txId });
  const chain = services.chains.find(batch.chainId)!;
  const market = await marketFees(chain);
  for (const r of clientReplacements(batch, signed, market.maxFeePerGas)) {
    if (
      !(await services.batchTransactions.replaceSigned(
        services.db,
        txId,
        r.index,
        r.replacing,
        { signedRaw: r.signedRaw, txHash: r.txHash },
        r.replacedFees,
      ))
    ) {
      throw conflicting(
        `transaction ${r.index + 1} of txId ${txId} changed meanwhile (mined or replaced): look it up with GET /get-transaction-status`,
        { txId, transactionIndex: r.index },
      );
    }
    const current = batch.transactions[r.index];
    // Sent now when its turn has come (its predecessor confirmed); otherwise the runner sends it when it gets there.
    if (current.status === "broadcast") await broadcast(chain.provider, r.signedRaw, r.txHash);
    services.logger.info(
      { txId, index: r.index, replaced: r.replacing, hash: r.txHash },
      "client replaced a pending transaction with higher fees",
    );
    await services.runner.replaced(txId, r.index);
  }
  return (await services.batches.get(txId))!;
}
