import { Transaction, type TransactionReceipt, type TransactionResponse } from "ethers";
import type { Fees } from "../chains/fee-bump";
import type { BatchTransaction } from "../model/batch";

// Facts about one transaction the tracker, the send and the operator's actions all read: a mined no-op (a
// cancellation), the fees its current bytes carry, how a transaction found on chain differs from the one prepared.

/**
 * A mined relayed transaction that is the operator's cancellation (engine/operator-actions.ts): the relayer called
 * itself and nothing happened (no log). Any relayed operation either calls another contract, or calls the relayer's
 * delegate, whose settleAndCall always logs (the payment's Transfer and PaidCall).
 */
export function isNoOp(receipt: Pick<TransactionReceipt, "from" | "to" | "logs" | "status">): boolean {
  return (
    receipt.status === 1 &&
    receipt.to !== null &&
    receipt.to.toLowerCase() === receipt.from.toLowerCase() &&
    receipt.logs.length === 0
  );
}

/** The fees a transaction's current bytes were signed with (a client's wallet may have re-priced the prepared ones). */
export function feesOf(tx: BatchTransaction): Fees {
  if (tx.signedRaw) {
    const signed = Transaction.from(tx.signedRaw);
    return { maxFeePerGas: signed.maxFeePerGas ?? 0n, maxPriorityFeePerGas: signed.maxPriorityFeePerGas ?? 0n };
  }
  return {
    maxFeePerGas: BigInt(tx.unsigned.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(tx.unsigned.maxPriorityFeePerGas),
  };
}

/**
 * The first field in which a transaction found on chain differs from the one prepared (sender, nonce, target, data,
 * value, chain), or undefined when it is that transaction.
 */
export function reportedMismatch(
  onChain: Pick<TransactionResponse, "from" | "to" | "data" | "nonce" | "value" | "chainId">,
  prepared: BatchTransaction["unsigned"],
): { field: string; expected: string; actual: string } | undefined {
  const checks: [string, string, string][] = [
    ["from", prepared.from.toLowerCase(), onChain.from.toLowerCase()],
    ["chainId", String(prepared.chainId), String(onChain.chainId)],
    ["nonce", String(prepared.nonce), String(onChain.nonce)],
    ["to", prepared.to.toLowerCase(), (onChain.to ?? "").toLowerCase()],
    ["data", prepared.data.toLowerCase(), onChain.data.toLowerCase()],
    ["value", BigInt(prepared.value).toString(), onChain.value.toString()],
  ];
  const [field, expected, actual] = checks.find(([, want, got]) => want !== got) ?? [];
  return field ? { field, expected: expected!, actual: actual! } : undefined;
}
