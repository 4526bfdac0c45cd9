import { randomBytes } from "node:crypto";
import { toBeHex, toQuantity } from "ethers";
import type { Chain } from "../chains/registry";
import { decodeRevert, revertDataOf } from "../chains/contracts";
import { marketFees, type MarketFees } from "../chains/fees";
import { isChainUnavailable, latestFirst } from "../chains/rpc-errors";
import { wouldRevert } from "./errors";
import type { PlannedCall, UnsignedTransaction } from "../model/batch";

/** Headroom over a gas estimate: state can move a little between prepare and broadcast. */
const GAS_HEADROOM_PERCENT = 125n;

/** Where the first nonce of a build comes from. */
export interface NonceSource {
  /** Client-chosen first nonce (a common body field, docs/wire-conventions.md); default: the signer's pending nonce. */
  nonce?: number;
  /**
   * The signer's highest nonce the service holds in a batch being sent (it may not be in the node's pool: dropped, or
   * taken off the chain by a reorg and not re-broadcast yet); the default nonce comes after it.
   */
  heldNonce?: Promise<number | undefined>;
  /**
   * A relayed batch: its relayer takes the nonce when it signs, so the one shown is provisional: the relayer's counter
   * (no chain read), the pending count on chain before its first.
   */
  provisionalNonce?: Promise<number | undefined>;
}

/**
 * The reads a build needs that do not depend on the planned calls (the signer's first nonce, the market fees), started
 * before the method plans so that they travel while its pre-checks read the chain. A prepare then costs one chain
 * round trip (the estimates) after its pre-checks, instead of one carrying the nonce, the fees and the estimates.
 */
export interface BuildReads {
  /** The signer they were read for: a plan that names another signer needs its own (see readsFor). */
  signer: string;
  startNonce: Promise<number>;
  fees: Promise<MarketFees>;
}

/**
 * Starts the reads of a build for `signer`. A pre-check that refuses the request leaves them unawaited: their failure
 * is then nobody's answer, so it is marked handled here, and it still rejects the build that awaits them.
 */
export function startBuildReads(chain: Chain, signer: string, source: NonceSource = {}): BuildReads {
  const startNonce =
    source.nonce !== undefined
      ? Promise.resolve(source.nonce)
      : source.provisionalNonce
        ? source.provisionalNonce.then((held) => held ?? nextNonce(chain, signer))
        : nextNonce(chain, signer, source.heldNonce);
  const fees = marketFees(chain);
  startNonce.catch(() => {});
  fees.catch(() => {});
  return { signer, startNonce, fees };
}

/**
 * `early` when it was read for `signer` (addresses compare in any case; the transactions are from `signer` as the plan
 * spells it), else the reads `start` makes for it now.
 */
export function readsFor(early: BuildReads, signer: string, start: (signer: string) => BuildReads): BuildReads {
  return early.signer.toLowerCase() === signer.toLowerCase() ? { ...early, signer } : start(signer);
}

export interface BuildOptions {
  /** Client-chosen gas limit applied to every transaction. */
  gasLimit?: bigint;
  /**
   * A relayed batch: the relayer simulates the call with the gas it signs with (engine/relayed-call.ts), so the first
   * call is estimated on the latest block first (chains/rpc-errors.ts latestFirst), then as the node defaults (the
   * pending block).
   */
  relayed?: boolean;
}

/** The signer's next nonce: its pending count on chain, or past the last one the service holds for it. */
async function nextNonce(chain: Chain, signer: string, held?: Promise<number | undefined>): Promise<number> {
  const [pending, highest] = await Promise.all([
    chain.provider.getTransactionCount(signer, "pending"),
    held ?? Promise.resolve(undefined),
  ]);
  return highest === undefined ? pending : Math.max(pending, highest + 1);
}

/** A fresh internal batch id: 0x + 32 random bytes (not a blockchain hash). */
export function newTxId(): string {
  return "0x" + randomBytes(32).toString("hex");
}

/**
 * Turns planned calls into unsigned EIP-1559 transactions from `reads.signer` with sequential nonces, current fees
 * and gas limits. The first call is estimated against the chain as it is; a later call may depend on an earlier one
 * not yet mined, so its estimate is only trusted when it succeeds, and its declared ceiling is the floor (and the
 * fallback).
 */
export async function buildTransactions(
  chain: Chain,
  calls: PlannedCall[],
  reads: BuildReads,
  options: BuildOptions = {},
): Promise<UnsignedTransaction[]> {
  const signer = reads.signer;
  // Every estimate is an independent read: asked together, they travel as one JSON-RPC batch.
  const estimates = calls.map((call, index) =>
    options.gasLimit !== undefined
      ? Promise.resolve(options.gasLimit)
      : gasFor(chain, signer, call, index, calls.length, !!options.relayed).catch((error: unknown) => error as Error),
  );
  const [startNonce, fees, gasLimits] = await Promise.all([reads.startNonce, reads.fees, Promise.all(estimates)]);
  const { maxFeePerGas, maxPriorityFeePerGas } = fees;

  const transactions: UnsignedTransaction[] = [];
  for (const [index, call] of calls.entries()) {
    const gasLimit = gasLimits[index];
    if (gasLimit instanceof Error) throw gasLimit; // the first call that would revert, in order
    transactions.push({
      from: signer,
      to: call.to,
      value: call.value ? toBeHex(call.value) : "0x00",
      nonce: Number(startNonce) + index,
      chainId: chain.chainId,
      data: call.data,
      type: 2,
      maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
      maxFeePerGas: maxFeePerGas.toString(),
      gasLimit: toBeHex(gasLimit),
    });
  }
  return transactions;
}

async function gasFor(
  chain: Chain,
  from: string,
  call: PlannedCall,
  index: number,
  count: number,
  relayed: boolean,
): Promise<bigint> {
  if (call.completedAtSend && call.gasCeiling) return call.gasCeiling;
  const request = { from, to: call.to, data: call.data, value: call.value ?? 0n };
  const onLatest = () =>
    chain.provider
      .send("eth_estimateGas", [{ ...request, value: toQuantity(request.value) }, "latest"])
      .then((gas: string) => BigInt(gas));
  const asTheNodeDefaults = () => chain.provider.estimateGas(request);
  try {
    const estimate =
      relayed && index === 0 ? await latestFirst(onLatest, asTheNodeDefaults) : await asTheNodeDefaults();
    const padded = (estimate * GAS_HEADROOM_PERCENT + 99n) / 100n;
    return index > 0 && call.gasCeiling && call.gasCeiling > padded ? call.gasCeiling : padded;
  } catch (error) {
    // The chain could not be asked: not a verdict on the call (a 503 for the caller, never "would revert").
    if (isChainUnavailable(error)) throw error;
    if (index > 0 && call.gasCeiling) return call.gasCeiling;
    const reason = decodeRevert(revertDataOf(error)) ?? shortMessage(error);
    throw wouldRevert(`Transaction ${index + 1} of ${count} (${call.description}) would revert: ${reason}`, {
      transactionIndex: index,
      reason,
    });
  }
}

function shortMessage(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string };
  return e.shortMessage ?? e.message ?? String(error);
}
