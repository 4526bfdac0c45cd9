import { toBeHex, toQuantity } from "ethers";
import { PaidRelayDelegate__factory } from "../../typechain-types/factories/contracts/payments/PaidRelayDelegate__factory";
import { encodeCall } from "../chains/abi-words";
import { decodeRevert, revertDataOf } from "../chains/contracts";
import type { Chain } from "../chains/registry";
import { isChainUnavailable, latestFirst } from "../chains/rpc-errors";
import { describeRevert } from "../domains/rams/reverts";
import type { BatchTransaction } from "../model/batch";
import type { ServiceSigner } from "../signers/signer";
import type { OperationSettlement } from "../payments/run-payments";

/*
 * What a relayed transaction is made of before the relayer signs it: its calldata and gas, wrapped with the payment it
 * settles when the relayer key delegates to PaidRelayDelegate, and its simulation (WouldRevert).
 */

/**
 * Gas the settlement adds to a relayed operation's limit: transferWithAuthorization (signature recovery, two balances,
 * the authorization's slot: about 60,000 cold), the delegate's checks and calls, with room to spare.
 */
const SETTLEMENT_GAS = 120_000n;

const delegateInterface = PaidRelayDelegate__factory.createInterface();
const SETTLE_AND_CALL = delegateInterface.getFunction("settleAndCall").selector;

/**
 * A relayed transaction whose simulation reverts: it is not signed, and nothing is spent. `outOfGas`: it runs out of the
 * gas the service would give it (the service's estimate: a failure of ours), not a revert of the call itself.
 */
export class WouldRevert extends Error {
  constructor(
    readonly reason: string,
    readonly outOfGas = false,
  ) {
    super(reason);
  }
}

/**
 * The payment a relayed transaction was to carry can no longer ride in it (the relayer's delegation is gone, or the
 * payment is no longer reserved): nothing is signed; the payment is settled on its own first, or the batch refused.
 */
export class PaymentNotCarried extends Error {}

/**
 * What the relayer sends for `tx`: its calldata and gas limit, and, with a payment to settle in it (the delegate
 * still in place: `stillDelegated`), the call to the relayer itself whose delegate settles and then calls the target.
 */
export async function relayedCall(
  chain: Chain,
  signer: ServiceSigner,
  tx: BatchTransaction,
  options: { data?: string; settle?: OperationSettlement },
  stillDelegated: () => Promise<boolean>,
) {
  // Calldata bound at send time (it names the payer) gets its own gas estimate; the prepared limit is the fallback.
  const data = options.data ?? tx.unsigned.data;
  const gasLimit =
    options.data && options.data !== tx.unsigned.data
      ? await chain.provider
          .estimateGas({ from: signer.address, to: tx.unsigned.to, data, value: BigInt(tx.unsigned.value) })
          .then((g) => toBeHex((g * 125n + 99n) / 100n))
          .catch(() => tx.unsigned.gasLimit)
      : tx.unsigned.gasLimit;
  // With a payment to settle in it: sent to the relayer itself, whose delegate settles and then calls the target.
  const settle = options.settle && (await stillDelegated()) ? options.settle : undefined;
  const wrapped = settle && {
    to: signer.address,
    data: encodeCall(SETTLE_AND_CALL, [
      { address: settle.asset },
      { bytes: settle.calldata },
      { address: tx.unsigned.to },
      { bytes: data },
    ]),
  };
  // The operation's own limit plus what the settlement and the delegate add (no second estimate: one round trip less).
  const wrappedGas = wrapped && toBeHex(BigInt(gasLimit) + SETTLEMENT_GAS);
  return { data, gasLimit, settle, wrapped, wrappedGas };
}

/**
 * The relayed call (with its payment, when it carries one) run from the relayer with the gas it is signed with: throws
 * WouldRevert with the decoded reason when it would revert; a chain that could not be asked throws as it is. It runs on
 * the latest block, and on the pending one when it reverts there (chains/rpc-errors.ts latestFirst). What other
 * operations of ours in flight could make it revert is refused off chain: one balance one payment (store/payments.ts
 * reserve), each authorization once, the records' races (engine/runner-ending.ts).
 */
export async function simulateRelayedCall(
  chain: Chain,
  signer: ServiceSigner,
  tx: BatchTransaction,
  call: { data: string; gasLimit?: string; wrapped?: { to: string; data: string }; wrappedGas?: string },
): Promise<void> {
  // With the gas it will be signed with: a limit estimated before (on another block) that no longer suffices is found
  // here, not by a transaction that runs out of gas on chain at the relayer's expense.
  const gas = call.wrapped ? call.wrappedGas : call.gasLimit;
  const request = {
    from: signer.address,
    to: call.wrapped?.to ?? tx.unsigned.to,
    data: call.wrapped?.data ?? call.data,
    value: toQuantity(BigInt(tx.unsigned.value)),
    ...(gas ? { gas: toQuantity(BigInt(gas)) } : {}),
  };
  const runOn = (block: "latest" | "pending") => chain.provider.send("eth_call", [request, block]);
  try {
    await latestFirst(
      () => runOn("latest"),
      () => runOn("pending"),
      (error) => !isChainUnavailable(error) && isRevert(error),
    );
  } catch (error) {
    if (isChainUnavailable(error) || !isRevert(error)) throw error;
    const data = revertDataOf(error);
    if (gas && (!data || data === "0x") && /out of gas/i.test(nodeMessage(error)))
      throw new WouldRevert(`it runs out of gas at the limit it would be signed with (${BigInt(gas)})`, true);
    throw new WouldRevert(relayedRevertReason(data));
  }
}

/** What the node said (ethers keeps it under info.error), else the error's own message. */
function nodeMessage(error: unknown): string {
  const e = error as { info?: { error?: { message?: unknown } }; message?: string };
  return typeof e.info?.error?.message === "string" ? e.info.error.message : (e.message ?? "");
}

function isRevert(error: unknown): boolean {
  return revertDataOf(error) !== undefined || /revert/i.test((error as Error).message ?? "");
}

/**
 * Why a relayed call would revert, in words: a payment the delegate could not take (the payer's authorization
 * refused), or the operation's own revert, decoded.
 */
export function relayedRevertReason(data: string | undefined): string {
  if (data) {
    for (const name of ["SettlementFailed", "OperationFailed"] as const) {
      try {
        const [inner] = delegateInterface.decodeErrorResult(name, data);
        const reason =
          decodeRevert(inner) ??
          (inner && inner !== "0x" ? `unknown error ${String(inner).slice(0, 10)}` : "reverted without a reason");
        return name === "SettlementFailed"
          ? `the payment could not be taken: ${reason}`
          : describeRevert(inner).message;
      } catch {
        // not this error
      }
    }
  }
  return describeRevert(data).message;
}
