import type { TransactionReceipt } from "ethers";
import type { Chain } from "./registry";

/** Between blocks, a receipt waiting for confirmations is looked at again at least this often. */
const RECHECK_MS = 2_000;

export type ConfirmationOutcome =
  /** `confirmations` blocks (counting its own) on the canonical chain; the receipt as it stands now. */
  | { kind: "confirmed"; receipt: TransactionReceipt }
  /** A reorg took the transaction off the chain before it got there (it may be re-mined: wait for it again). */
  | { kind: "reorged"; blockNumber: number }
  | { kind: "stopped" };

/**
 * Waits until a mined transaction has `confirmations` blocks on the canonical chain, counting its own block. With one
 * confirmation the receipt itself is the answer. With more, the receipt is looked at again at every new block: when
 * it names another block (re-mined elsewhere) the count starts over from there; when it is gone and its block is no
 * longer the chain's, a reorg took it away. A node that lags (no receipt, but the block still there) proves nothing.
 */
export async function untilConfirmed(
  chain: Chain,
  mined: TransactionReceipt,
  confirmations: number,
  stop: { stopped: () => boolean; signal: Promise<void> },
): Promise<ConfirmationOutcome> {
  if (confirmations <= 1) return { kind: "confirmed", receipt: mined };
  let receipt = mined;
  let checkedAt = -1;
  while (!stop.stopped()) {
    const head = chain.blocks.head;
    const target = receipt.blockNumber + confirmations - 1;
    if (head !== checkedAt) {
      checkedAt = head;
      const now = await chain.provider.getTransactionReceipt(receipt.hash);
      if (!now) {
        const block = await chain.provider.getBlock(receipt.blockNumber);
        if (block && block.hash !== receipt.blockHash) return { kind: "reorged", blockNumber: receipt.blockNumber };
      } else if (now.blockHash !== receipt.blockHash) {
        receipt = now;
        continue;
      } else if (head >= target) {
        return { kind: "confirmed", receipt: now };
      }
    }
    await Promise.race([chain.blocks.next(head, RECHECK_MS), stop.signal]);
  }
  return { kind: "stopped" };
}
