import { admitPrepare, admitSend, chargePrepare, chargeSend, requireKeyOf, type Caller } from "../auth/gate";
import { newTxId } from "../engine/prepare";
import { EngineError } from "../engine/errors";
import { replacePendingTransactions } from "../engine/replace";
import {
  assertHashesFree,
  assertReportedTransactions,
  loadBatchToSend,
  loadSendableBatch,
  normalizeSendBody,
  reportable,
  sendingState,
  type SendBody,
  type SendRequest,
} from "../engine/send";
import { badRequest, conflict, outOfCredits as outOfCreditsError } from "../errors";
import { parseInput } from "../wire/parse-input";
import { paymentHeaderOf, paymentResponseHeaders } from "../http/x402-headers";
import { findPublicMethod } from "../methods";
import { chainFor, planBatch, storeBatch } from "../methods/prepare";
import type { MethodDefinition } from "../methods/types";
import type { Batch } from "../model/batch";
import { sendSummary } from "../model/batch-views";
import { paymentView, refundsOf } from "../reads/transaction-status";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";
import { echoedExecutionMode, type ExecutionMode } from "../wire/fields";
import type { RequestFacts } from "../wire/request";
import { streamTokenOf } from "../events/stream-tokens";
import type { Services } from "./services";

/**
 * Prepare one method's batch: rate limit, key, body, chain, access (key or payment), the method's plan and the engine's
 * unsigned transactions; the batch is stored, and paid for when x402 pays, in one step (auth/gate.chargePrepare).
 */
export async function prepareWrite(
  services: Services,
  req: RequestFacts,
  caller: Caller,
  method: MethodDefinition,
  rawBody: unknown,
  defaultMode?: ExecutionMode,
) {
  const wallet =
    typeof (rawBody as { signerAddress?: unknown })?.signerAddress === "string"
      ? (rawBody as { signerAddress: string }).signerAddress
      : undefined;
  const release = await services.rateLimiter.admit(req, caller.apiKey?.id, wallet);
  try {
    requireKeyOf(caller, method.access);
    const body = parseInput(method.body, rawBody, "body");
    const mode: ExecutionMode = body.executionMode ?? defaultMode ?? "client-signed";
    const chain = chainFor(services, method, body);
    const access = await admitPrepare(services, caller, method, mode, chain.chainId);
    const planned = await planBatch(services, { method, body, apiKey: access.apiKey, executionMode: mode });
    const txId = newTxId();
    const charged = await chargePrepare(services, req, paymentHeaderOf(req), access, { method, mode, txId }, () =>
      storeBatch(services, planned, txId),
    );
    // Without a key, the prepare's answer is the only proof of the batch: it carries the capability to stream it.
    const streamToken = access.apiKey ? {} : { streamToken: streamTokenOf(services.sealer, txId) };
    const answer = {
      ...charged.body,
      ...streamToken,
      executionMode: echoedExecutionMode((rawBody as { executionMode?: unknown })?.executionMode, mode),
    };
    return { body: answer, headers: paymentResponseHeaders(charged.settlement) };
  } finally {
    await release();
  }
}

/**
 * A relayed batch is sent by the relayer key it was prepared for: when the service no longer has that key (removed from
 * RELAYER_EXTRA_PRIVATE_KEYS since), the batch is refused before anyone pays; preparing it again picks a key it has.
 */
function assertRelayerStillHas(services: Services, batch: Batch): void {
  const gone = batch.transactions.find((t) => !services.relayer.hasKey(batch.chainId, t.unsigned.from));
  if (gone) {
    throw conflict(
      `txId ${batch.txId} was prepared for the relayer key ${gone.unsigned.from}, which this service no longer sends with: prepare it again`,
      {
        txId: batch.txId,
        relayer: gone.unsigned.from,
      },
    );
  }
}

/** Checks one send (body against the batch first, then credentials and payment), then starts broadcasting. */
async function startSend(
  services: Services,
  req: RequestFacts,
  caller: Caller,
  batch: Batch,
  body: SendBody,
  request: SendRequest,
  hashOwners: Map<string, string>,
): Promise<PaymentRecord | undefined> {
  const method = findPublicMethod(batch.method);
  let state: ReturnType<typeof sendingState> = [];
  if (batch.executionMode === "service-relayed") {
    if (request.kind !== "relayed") {
      throw badRequest(
        "A service-relayed txId is sent as { txId } (optionally with transactions) and an x402 payment, without signed transactions",
        {
          field: "signedTransactions",
        },
      );
    }
    for (const [index, t] of (body.transactions ?? []).entries()) {
      const twin = batch.transactions[index];
      if (
        !twin ||
        (t.to && t.to.toLowerCase() !== twin.unsigned.to.toLowerCase()) ||
        (t.data && t.data.toLowerCase() !== twin.unsigned.data.toLowerCase())
      ) {
        throw badRequest(`transactions[${index}] is not the prepared transaction ${index + 1} of this txId`, {
          transactionIndex: index,
        });
      }
    }
    assertRelayerStillHas(services, batch);
  } else {
    state = sendingState(batch, request);
    assertHashesFree(batch, state, hashOwners);
    if (request.kind === "reported")
      await assertReportedTransactions(services.chains.resolve(batch.chainId), batch, state);
  }
  const access = admitSend(services, caller, batch, method);
  if (request.kind !== "reported") await method?.checkAtSend?.(services, batch);
  const checkPayer =
    method?.checkRelayedPayer && batch.executionMode === "service-relayed"
      ? (payer: string) => method.checkRelayedPayer!(services, batch, payer)
      : undefined;
  const payment = method
    ? await chargeSend(services, req, paymentHeaderOf(req), access, batch, method, checkPayer)
    : undefined;
  // One statement marks the batch sending; a reported batch being sent again is first reopened, in one transaction.
  // Answers the batch as that statement left it: what its run starts from.
  const markSending = async (q: Queryable): Promise<Batch> => {
    const credit = access.creditKeyId ? { keyId: access.creditKeyId, method: batch.method } : undefined;
    if (credit) await services.credits.grantPlanned(q, credit.keyId, credit.method);
    const { sent, outOfCredits, hashOwners: taken } = await services.batches.markSending(q, batch.txId, state, credit);
    assertHashesFree(batch, state, taken);
    if (sent) return sent;
    // Only a prepared batch moves: of two concurrent sends of one txId, the second finds it moved and gets the 409.
    await loadSendableBatch(services, batch.txId, q);
    if (outOfCredits) throw outOfCreditsError(batch.method);
    throw conflict(`txId ${batch.txId} changed while it was being sent; look it up with GET /get-transaction-status`, {
      txId: batch.txId,
    });
  };
  let sent: Batch;
  try {
    if (!reportable(batch)) sent = await markSending(services.db);
    else {
      sent = await services.db.transaction(async (q) => {
        if (request.kind !== "reported")
          throw badRequest("This txId's reported hash never appeared: report the right hash with { txId, txHash }", {
            field: "txHash",
          });
        if ((await services.batches.lock(q, batch.txId)) !== "rejected")
          await loadSendableBatch(services, batch.txId, q);
        await services.batches.reopen(q, batch.txId);
        return markSending(q);
      });
    }
  } catch (error) {
    if (payment) await services.x402!.release(payment.id, `send refused: ${(error as Error).message}`);
    throw error;
  }
  void services.runner.run(batch.txId, sent, batch.executionMode === "service-relayed" ? payment : undefined);
  return payment;
}

/**
 * Send a prepared batch: signed transactions, client-reported hashes, or a paid relayed txId; a pending client-signed
 * batch's signed transactions with higher fees replace its unmined ones. Answers once the batch ended (200) or after
 * SEND_WAIT_MS while it is still pending (202).
 */
export async function sendWrite(services: Services, req: RequestFacts, caller: Caller, body: SendBody) {
  const request = normalizeSendBody(body);
  // A caller without an API key may be asked to pay (x402): a taken hash is refused before that; so is a reported hash
  // (before it is looked for on chain).
  const loaded = await loadBatchToSend(services, request, !caller.apiKey || request.kind === "reported").catch(
    (error: unknown) => {
      // Signed transactions for a pending batch: a replacement with higher fees (same nonces), when they are one.
      if (
        request.kind === "signed" &&
        error instanceof EngineError &&
        error.kind === "conflict" &&
        error.details?.status === "pending"
      )
        return undefined;
      throw error;
    },
  );
  if (!loaded) {
    const replaced = await replacePendingTransactions(
      services,
      caller.apiKey?.id,
      request.txId,
      (request as { signedTransactions: string[] }).signedTransactions,
    );
    return { status: 202, body: sendSummary(replaced) };
  }
  const { batch, hashOwners } = loaded;
  const payment = await startSend(services, req, caller, batch, body, request, hashOwners);
  const after =
    (await services.runner.waitFor(batch.txId, services.config.SEND_WAIT_MS)) ??
    (await services.batches.get(batch.txId))!;
  const settled = payment ? await services.x402!.settledOrStored(payment.id) : undefined;
  // Settled, then the operation failed for a reason of ours: the answer says it is owed back.
  const refund = settled && (await refundsOf(services, after, [settled]))?.get(settled.id);
  return {
    status: after.status === "sending" ? 202 : 200,
    body: { ...sendSummary(after), ...(settled ? { payment: paymentView(settled, refund) } : {}) },
    headers: settled?.status === "settled" ? paymentResponseHeaders(settled.settlement) : {},
  };
}
