import { revertDataOf } from "../chains/contracts";
import type { Chain } from "../chains/registry";
import { relayedRevertReason } from "../engine/relayed-call";
import { HEAD_TIMEOUT_MS, withTimeout } from "./chain-facts";

/** What a mined transaction's receipt and its replay say about it, for a batch's page. */
export interface MinedFacts {
  blockNumber: number;
  status: "success" | "reverted";
  /** A reverted transaction's reason: out of gas, or its revert data decoded with our contracts' errors. */
  reason: string | null;
}

/** Decoded reasons are kept (a mined revert's never changes); at most this many. */
const KEPT = 500;
const known = new Map<string, MinedFacts>();

/**
 * A mined transaction as the chain has it: its block, and, when it reverted, why. The receipt says only that it
 * reverted; the reason comes from running the same call again on the state its block left (eth_call at that block:
 * what earlier transactions of the block did, which a revert often comes from, is in it): its revert data decoded with
 * every error our contracts declare (a relayed operation's OperationFailed and SettlementFailed unwrapped), or "out of
 * gas" when it used all the gas it had. A call that passes on that state (a later transaction of the block changed
 * what it depended on) is said as such. Null when the chain does not know the hash (yet).
 */
export async function minedFacts(chain: Chain, hash: string): Promise<MinedFacts | null> {
  const kept = known.get(hash);
  if (kept) return kept;
  const [receipt, tx] = await Promise.all([
    withTimeout(chain.provider.getTransactionReceipt(hash), HEAD_TIMEOUT_MS),
    withTimeout(chain.provider.getTransaction(hash), HEAD_TIMEOUT_MS),
  ]).catch(() => [null, null] as const);
  if (!receipt) return null;
  if (receipt.status === 1) return { blockNumber: receipt.blockNumber, status: "success", reason: null };
  let reason: string;
  if (tx && receipt.gasUsed >= tx.gasLimit) reason = `out of gas: it used all ${tx.gasLimit} gas it was given`;
  else if (!tx) reason = "the node no longer has the transaction to replay it";
  else reason = await replayedReason(chain, tx, receipt.blockNumber);
  const facts: MinedFacts = { blockNumber: receipt.blockNumber, status: "reverted", reason };
  if (known.size >= KEPT) known.delete(known.keys().next().value!);
  known.set(hash, facts);
  return facts;
}

async function replayedReason(
  chain: Chain,
  tx: { from: string; to: string | null; data: string; value: bigint; gasLimit: bigint },
  blockNumber: number,
): Promise<string> {
  try {
    await withTimeout(
      chain.provider.call({
        from: tx.from,
        to: tx.to,
        data: tx.data,
        value: tx.value,
        gasLimit: tx.gasLimit,
        blockTag: blockNumber,
      }),
      HEAD_TIMEOUT_MS,
    );
    return "it does not revert when replayed on the state its block left: a later transaction of the block changed what it depended on";
  } catch (error) {
    const data = revertDataOf(error);
    if (data !== undefined || /revert/i.test((error as Error).message ?? "")) return relayedRevertReason(data);
    return `it could not be replayed (${((error as Error).message ?? String(error)).slice(0, 160)})`;
  }
}
