import type { Chain } from "../chains/registry";
import { buildTransactions, newTxId, readsFor, startBuildReads } from "../engine/prepare";
import { badRequest, forbidden } from "../errors";
import type { UnsignedTransaction } from "../model/batch";
import type { ApiKeyRecord } from "../store/api-keys";
import type { Stores } from "../store/stores";
import type { ExecutionMode } from "../wire/fields";
import type { MethodDefinition, MethodServices } from "./types";

/**
 * The prepare use case: a method plans its calls, the engine builds them into unsigned transactions, the batch is
 * stored before anything is sent. Routes (write, x402 facades, the faucet) call this; nothing below knows methods.
 */

/** What a prepare uses: what methods use to plan, the signer whitelist and the batches it stores. */
export type PrepareServices = MethodServices &
  Pick<Stores, "signers" | "batches" | "batchTransactions" | "walletNonces">;

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
    throw badRequest(`${method.name} runs on chain ${method.chains.join(" or ")} only, not on ${chain.chainId}`, {
      field: "chainId",
    });
  }
  if (chain.areas && !chain.areas.includes(method.area)) {
    throw badRequest(
      `chain ${chain.chainId} serves only ${chain.areas.join(", ")} on the ${services.config.ENVIRONMENT} deployment, not ${method.name}`,
      { field: "chainId" },
    );
  }
  return chain;
}

/**
 * The prepare half of a write up to the point where it could be stored: resolve the chain, settle who signs (the
 * body's signer, which the operator must have whitelisted for the caller's key, or for every key, or the service's
 * relayer), let the method plan its calls
 * (its pre-checks read the chain; one that decides nothing the plan builds on, the signer's role, it may defer to run
 * beside the gas estimates: DomainContext.deferCheck) and build the unsigned transactions. Everything a client could
 * get wrong is found here, before anyone is asked to pay.
 */
export async function planBatch(services: PrepareServices, input: PrepareInput): Promise<PlannedBatch> {
  const { method, body, apiKey, executionMode } = input;
  const chain = chainFor(services, method, body);
  const relayed = executionMode === "service-relayed";
  const signer = !relayed
    ? method.signerOf(body)
    : method.anyRelayerKey
      ? services.relayer.nextKeyAddress(chain.chainId)
      : services.relayer.address(chain.chainId);
  // The build's reads that need no plan (nonce, fees) start now and travel with the pre-checks' reads of the chain.
  const buildReads = (who: string) =>
    startBuildReads(chain, who, {
      nonce: body.nonce === undefined || relayed ? undefined : Number(BigInt(body.nonce)),
      heldNonce:
        relayed || body.nonce !== undefined
          ? undefined
          : services.batchTransactions.highestNonceInFlight(chain.chainId, who),
      provisionalNonce: relayed ? services.walletNonces.provisional(chain.chainId, who) : undefined,
    });
  const early = buildReads(signer);
  const deferred = deferredChecks();
  // The whitelist check and the method's own checks are independent reads: run together, the whitelist answers first.
  const [allowed, planned] = await Promise.allSettled([
    relayed || services.signers.isAllowed(signer, apiKey?.id),
    method.plan({ services, chain, apiKey, signer, executionMode, deferCheck: deferred.add }, body),
  ]);
  if (allowed.status === "rejected") throw allowed.reason;
  if (!allowed.value) {
    const whom = apiKey ? `for this API key (${apiKey.id})` : "for payers without an API key";
    throw forbidden(
      `Signer ${signer} is not whitelisted ${whom}: ask the operator to whitelist this wallet for you before preparing with it`,
      {
        field: "signerAddress",
        signerAddress: signer,
      },
    );
  }
  if (planned.status === "rejected") {
    await deferred.passed();
    throw planned.reason;
  }
  const plan = planned.value;
  const [checked, built] = await Promise.allSettled([
    deferred.passed(),
    buildTransactions(chain, plan.calls, readsFor(early, plan.signer, buildReads), {
      gasLimit: body.gasLimit === undefined ? undefined : BigInt(body.gasLimit),
      relayed,
    }),
  ]);
  if (checked.status === "rejected") throw checked.reason;
  if (built.status === "rejected") throw built.reason;
  const transactions = built.value;
  const info = {
    method: method.name,
    chainId: chain.chainId,
    ...Object.fromEntries(Object.entries(plan.info).filter(([, v]) => v !== undefined)),
    steps: plan.calls.map((c) => c.description),
    ...(relayed
      ? { relayer: plan.signer, note: "the relayer signs at send time; nonce and fees shown here are provisional" }
      : {}),
  };
  return {
    method,
    chain,
    body,
    apiKeyId: apiKey?.id ?? null,
    executionMode,
    signer: plan.signer,
    transactions,
    info,
    record: plan.record ?? {},
  };
}

/**
 * The pre-checks a plan deferred (DomainContext.deferCheck): `passed` settles when every one has, and refuses with the
 * first one, in the order they were made, that refused.
 */
function deferredChecks() {
  const checks: Promise<void>[] = [];
  return {
    add: (check: Promise<void>) => {
      check.catch(() => undefined); // awaited by passed(); a prepare refused before it must not leave it unhandled
      checks.push(check);
    },
    passed: async () => {
      for (const check of checks) await check;
    },
  };
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
