import { admitPrepare, chargePrepare, requireKeyOf, type Caller } from "../auth/gate";
import { newTxId } from "../engine/prepare";
import type { SendBody } from "../engine/send";
import { parseInput } from "../wire/parse-input";
import { paymentHeaderOf, paymentResponseHeaders } from "../http/x402-headers";
import { chainFor, planBatch, storeBatch } from "../methods/prepare";
import type { MethodDefinition } from "../methods/types";
import { sendSummary } from "../model/batch-views";
import { paymentView, refundsOf } from "../reads/transaction-status";
import { echoedExecutionMode, type ExecutionMode } from "../wire/fields";
import type { RequestFacts } from "../wire/request";
import { streamTokenOf } from "../events/stream-tokens";
import { SendFlow } from "./send-flow";
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
 * Send a prepared batch: signed transactions, client-reported hashes, or a paid relayed txId; a pending client-signed
 * batch's signed transactions with higher fees replace its unmined ones. Answers once the batch ended (200) or after
 * SEND_WAIT_MS while it is still pending (202).
 */
export async function sendWrite(services: Services, req: RequestFacts, caller: Caller, body: SendBody) {
  const result = await new SendFlow(services, req, caller, body).run();
  if (result.kind === "replaced") return { status: 202, body: sendSummary(result.batch) };
  const { batch, payment } = result;
  // Settled, then the operation failed for a reason of ours: the answer says it is owed back.
  const refund = payment && (await refundsOf(services, batch, [payment]))?.get(payment.id);
  return {
    status: result.kind === "sending" ? 202 : 200,
    body: { ...sendSummary(batch), ...(payment ? { payment: paymentView(payment, refund) } : {}) },
    headers: payment?.status === "settled" ? paymentResponseHeaders(payment.settlement) : {},
  };
}
