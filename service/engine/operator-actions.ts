import { broadcast } from "../chains/broadcast";
import { feeCapWei, replacementFees } from "../chains/fee-bump";
import { marketFees } from "../chains/fees";
import type { Chain, ChainRegistry } from "../chains/registry";
import type { BroadcastVerdict } from "../chains/rpc-errors";
import type { Config } from "../config";
import { conflicting, invalid, noSuchBatch } from "./errors";
import type { Batch, BatchTransaction } from "../model/batch";
import { publicStatus } from "../model/batch-views";
import type { Stores } from "../store/stores";
import type { Relayer } from "./relayer";
import type { BatchRunner } from "./runner";
import { feesOf } from "./transaction-facts";

/** What the operator's actions on relayed transactions use. */
export type OperatorActionServices = Pick<Stores, "batches"> & {
  chains: ChainRegistry;
  config: Config;
  relayer: Pick<Relayer, "replace">;
  runner: Pick<BatchRunner, "replaced">;
};

/** What an action did, as the console shows it and the audit log keeps it. */
export interface ActionOutcome {
  txId: string;
  index: number;
  /** The hash the transaction had before the action. */
  previousHash: string;
  /** Its hash now (the same for a re-broadcast). */
  hash: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** The node's answer to the broadcast: accepted, or why not (it is sent again by the batch's run either way). */
  verdict: string;
}

/**
 * The operator's actions on the service's own transactions (service-relayed batches), one transaction at a time, while
 * it waits to be mined: send the same bytes again now, replace them with higher fees, or cancel (replace them with a
 * no-op at the same nonce: when the no-op is mined the batch ends rejected, its payment released and its credit back;
 * engine/tracker.ts isNoOp). A replacement goes through the relayer and the store as the tracker's own fee bumps do,
 * and the batch's run picks it up at once (runner.replaced).
 */
export async function rebroadcast(
  services: OperatorActionServices,
  txId: string,
  index: number,
): Promise<ActionOutcome> {
  const { tx, chain } = await pendingRelayed(services, txId, index);
  const verdict = await broadcast(chain.provider, tx.signedRaw!, tx.txHash!);
  return outcome(txId, tx, tx, verdictText(verdict));
}

export async function replaceWithHigherFees(
  services: OperatorActionServices,
  txId: string,
  index: number,
): Promise<ActionOutcome> {
  return replaceRelayed(services, txId, index, false);
}

export async function cancelRelayed(
  services: OperatorActionServices,
  txId: string,
  index: number,
): Promise<ActionOutcome> {
  return replaceRelayed(services, txId, index, true);
}

async function replaceRelayed(
  services: OperatorActionServices,
  txId: string,
  index: number,
  noOp: boolean,
): Promise<ActionOutcome> {
  const { batch, tx, chain } = await pendingRelayed(services, txId, index);
  const market = await marketFees(chain);
  const cap = services.config.RELAYER_MAX_FEE_GWEI;
  const fees = replacementFees(feesOf(tx), market, feeCapWei(cap));
  if (!fees)
    throw conflicting(
      `RELAYER_MAX_FEE_GWEI (${cap} gwei) leaves no room for fees 10% above the current ones: raise it to replace this transaction`,
      { txId, index },
    );
  const replaced = await services.relayer.replace(batch, tx, fees, { noOp });
  if (!replaced)
    throw conflicting(
      `Transaction ${index + 1} of ${txId} changed meanwhile (mined, or replaced by the service's own fee bump): look at it again`,
      { txId, index },
    );
  await services.runner.replaced(txId, index);
  return outcome(txId, tx, replaced.tx, verdictText(replaced.verdict));
}

/** A transaction of a relayed batch in flight, signed and not mined yet: what the actions act on (409 for anything else). */
async function pendingRelayed(
  services: OperatorActionServices,
  txId: string,
  index: number,
): Promise<{ batch: Batch; tx: BatchTransaction; chain: Chain }> {
  const batch = await services.batches.get(txId);
  if (!batch) throw noSuchBatch(`No batch with txId ${txId}`, { field: "txId" });
  if (batch.executionMode !== "service-relayed")
    throw conflicting(
      `${txId} is ${batch.executionMode}: only the service's own (relayed) transactions can be re-sent, replaced or cancelled`,
      { txId },
    );
  if (batch.status !== "sending")
    throw conflicting(`${txId} is ${publicStatus(batch.status)}, not pending`, {
      txId,
      status: publicStatus(batch.status),
    });
  const tx = batch.transactions[index];
  if (!tx)
    throw invalid(`index must be a transaction of the batch (0 to ${batch.transactions.length - 1})`, {
      field: "index",
    });
  if (!tx.signedRaw || !tx.txHash || (tx.status !== "signed" && tx.status !== "broadcast")) {
    throw conflicting(`Transaction ${index + 1} of ${txId} is not waiting to be mined (it is ${tx.status})`, {
      txId,
      index,
      status: tx.status,
    });
  }
  const chain = services.chains.find(batch.chainId);
  if (!chain) throw conflicting(`Chain ${batch.chainId} of ${txId} is not served by this instance`, { txId });
  const receipt = await chain.provider.getTransactionReceipt(tx.txHash);
  if (receipt)
    throw conflicting(
      `Transaction ${index + 1} of ${txId} was mined in block ${receipt.blockNumber}: it can no longer be replaced`,
      { txId, index },
    );
  return { batch, tx, chain };
}

const verdictText = (v: BroadcastVerdict) => (v.kind === "accepted" ? "accepted" : `${v.kind}: ${v.message}`);

function outcome(txId: string, before: BatchTransaction, after: BatchTransaction, verdict: string): ActionOutcome {
  const fees = feesOf(after);
  return {
    txId,
    index: before.index,
    previousHash: before.txHash!,
    hash: after.txHash!,
    maxFeePerGas: fees.maxFeePerGas.toString(),
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    verdict,
  };
}
