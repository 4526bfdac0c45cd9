import { randomBytes } from "node:crypto";
import { toBeHex } from "ethers";
import type { Chain } from "../chains/registry";
import { decodeRevert, revertDataOf } from "../chains/contracts";
import { marketFees } from "../chains/fees";
import { isChainUnavailable } from "../chains/rpc-errors";
import { badRequest, forbidden, preflightError } from "../errors";
import type { ExecutionMode } from "../wire/fields";
import type { MethodDefinition, MethodServices } from "../methods/types";
import type { Stores } from "../store/stores";
import type { ApiKeyRecord } from "../store/api-keys";
import type { PlannedCall, UnsignedTransaction } from "../model/batch";

/** What a prepare uses: what methods use to plan, the signer whitelist and the batches it stores. */
export type PrepareServices = MethodServices & Pick<Stores, "signers" | "batches">;

/** Headroom over a gas estimate: state can move a little between prepare and broadcast. */
const GAS_HEADROOM_PERCENT = 125n;

export interface BuildOptions {
  /** Client-chosen first nonce (WIRE-COMPAT §3); default: the signer's pending nonce. */
  nonce?: number;
  /** Client-chosen gas limit applied to every transaction. */
  gasLimit?: bigint;
  /**
   * The signer's highest nonce the service holds in a batch being sent (it may not be in the node's pool: dropped, or
   * taken off the chain by a reorg and not re-broadcast yet); the default nonce comes after it.
   */
  heldNonce?: Promise<number | undefined>;
}

/** The signer's next nonce: its pending count on chain, or past the last one the service holds for it. */
async function nextNonce(chain: Chain, signer: string, held?: Promise<number | undefined>): Promise<number> {
  const [pending, highest] = await Promise.all([chain.provider.getTransactionCount(signer, "pending"), held ?? Promise.resolve(undefined)]);
  return highest === undefined ? pending : Math.max(pending, highest + 1);
}

/** A fresh internal batch id: 0x + 32 random bytes (not a blockchain hash). */
export function newTxId(): string {
  return "0x" + randomBytes(32).toString("hex");
}

/**
 * Turns planned calls into unsigned EIP-1559 transactions with sequential nonces, current fees and gas limits.
 * The first call is estimated against the chain as it is; a later call may depend on an earlier one not yet mined,
 * so its estimate is only trusted when it succeeds, and its declared ceiling is the floor (and the fallback).
 */
export async function buildTransactions(
  chain: Chain,
  signer: string,
  calls: PlannedCall[],
  options: BuildOptions = {},
): Promise<UnsignedTransaction[]> {
  // Nonce, fees and every estimate are independent reads: asked together, they travel as one JSON-RPC batch.
  const estimates = calls.map((call, index) =>
    options.gasLimit !== undefined ? Promise.resolve(options.gasLimit) : gasFor(chain, signer, call, index, calls.length).catch((error: unknown) => error as Error),
  );
  const [startNonce, fees, gasLimits] = await Promise.all([
    options.nonce ?? nextNonce(chain, signer, options.heldNonce),
    marketFees(chain),
    Promise.all(estimates),
  ]);
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

async function gasFor(chain: Chain, from: string, call: PlannedCall, index: number, count: number): Promise<bigint> {
  if (call.completedAtSend && call.gasCeiling) return call.gasCeiling;
  try {
    const estimate = await chain.provider.estimateGas({ from, to: call.to, data: call.data, value: call.value ?? 0n });
    const padded = (estimate * GAS_HEADROOM_PERCENT + 99n) / 100n;
    return index > 0 && call.gasCeiling && call.gasCeiling > padded ? call.gasCeiling : padded;
  } catch (error) {
    // The chain could not be asked: not a verdict on the call (a 503 for the caller, never "would revert").
    if (isChainUnavailable(error)) throw error;
    if (index > 0 && call.gasCeiling) return call.gasCeiling;
    const reason = decodeRevert(revertDataOf(error)) ?? shortMessage(error);
    throw preflightError(`Transaction ${index + 1} of ${count} (${call.description}) would revert: ${reason}`, {
      transactionIndex: index,
      reason,
    });
  }
}

function shortMessage(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string };
  return e.shortMessage ?? e.message ?? String(error);
}


export interface PrepareInput {
  method: MethodDefinition;
  /** The method's parsed body. */
  body: Record<string, any>;
  apiKey?: ApiKeyRecord;
  executionMode: ExecutionMode;
}

/** A batch fully planned and built, not yet stored: what a prepare answers once it is persisted. */
export interface PlannedBatch {
  method: MethodDefinition;
  chain: Chain;
  body: Record<string, any>;
  apiKeyId: string | null;
  executionMode: ExecutionMode;
  signer: string;
  transactions: UnsignedTransaction[];
  info: Record<string, unknown>;
  record: Record<string, unknown>;
}

/** The chain a method's body names, refused when the method does not run there. */
export function chainFor(services: PrepareServices, method: MethodDefinition, body: { chainId?: unknown }): Chain {
  const requested = body.chainId ?? method.defaultChainId?.(services.config.ENVIRONMENT);
  const chain = services.chains.resolve(requested);
  if (method.chains && !method.chains.includes(chain.chainId)) {
    throw badRequest(`${method.name} runs on chain ${method.chains.join(" or ")} only, not on ${chain.chainId}`, { field: "chainId" });
  }
  if (chain.areas && !chain.areas.includes(method.area)) {
    throw badRequest(`chain ${chain.chainId} serves only ${chain.areas.join(", ")} on the ${services.config.ENVIRONMENT} deployment, not ${method.name}`, { field: "chainId" });
  }
  return chain;
}

/**
 * The prepare half of a write up to the point where it could be stored: resolve the chain, settle who signs (the
 * body's signer, which the operator must have whitelisted, or the service's relayer), let the method plan its calls
 * (its pre-checks read the chain) and build the unsigned transactions. Everything a client could get wrong is found
 * here, before anyone is asked to pay.
 */
export async function planBatch(services: PrepareServices, input: PrepareInput): Promise<PlannedBatch> {
  const { method, body, apiKey, executionMode } = input;
  const chain = chainFor(services, method, body);
  const relayed = executionMode === "service-relayed";
  const signer = relayed ? services.relayer.address(chain.chainId) : method.signerOf(body);
  // The whitelist check and the method's own checks are independent reads: run together, the whitelist answers first.
  const [allowed, planned] = await Promise.allSettled([
    relayed || services.signers.isAllowed(signer),
    method.plan({ services, chain, apiKey, signer, executionMode }, body),
  ]);
  if (allowed.status === "rejected") throw allowed.reason;
  if (!allowed.value) {
    throw forbidden(`Signer ${signer} is not whitelisted: ask the operator to whitelist this wallet before preparing with it`, {
      field: "signerAddress",
      signerAddress: signer,
    });
  }
  if (planned.status === "rejected") throw planned.reason;
  const plan = planned.value;
  const transactions = await buildTransactions(chain, plan.signer, plan.calls, {
    nonce: body.nonce === undefined || relayed ? undefined : Number(BigInt(body.nonce)),
    gasLimit: body.gasLimit === undefined ? undefined : BigInt(body.gasLimit),
    heldNonce: relayed || body.nonce !== undefined ? undefined : services.batches.highestNonceInFlight(chain.chainId, plan.signer),
  });
  const info = {
    method: method.name,
    chainId: chain.chainId,
    ...Object.fromEntries(Object.entries(plan.info).filter(([, v]) => v !== undefined)),
    steps: plan.calls.map((c) => c.description),
    ...(relayed ? { relayer: plan.signer, note: "the relayer signs at send time; nonce and fees shown here are provisional" } : {}),
  };
  return { method, chain, body, apiKeyId: apiKey?.id ?? null, executionMode, signer: plan.signer, transactions, info, record: plan.record ?? {} };
}

/** Persists a planned batch under `txId` (write-ahead: nothing is sent before this). Returns the prepare response. */
export async function storeBatch(services: PrepareServices, planned: PlannedBatch, txId: string) {
  await services.batches.create({
    txId,
    chainId: planned.chain.chainId,
    method: planned.method.name,
    executionMode: planned.executionMode,
    signer: planned.signer,
    apiKeyId: planned.apiKeyId,
    // What the schema parsed (unknown keys are gone), minus signatures, which live only in the calldata.
    body: Object.fromEntries(Object.entries(planned.body).filter(([k, v]) => k !== "signature" && v !== undefined)),
    plan: planned.record,
    info: planned.info,
    transactions: planned.transactions.map((unsigned, index) => ({
      index,
      unsigned,
      signedRaw: null,
      txHash: null,
      status: "prepared" as const,
      blockNumber: null,
      gasUsed: null,
      error: null,
    })),
  });
  return { txId, transactions: planned.transactions, info: planned.info, executionMode: planned.executionMode };
}

/** plan + store in one step, for internal callers that take no payment at prepare (the faucet). */
export async function prepareBatch(services: PrepareServices, input: PrepareInput & { txId?: string }) {
  return storeBatch(services, await planBatch(services, input), input.txId ?? newTxId());
}
