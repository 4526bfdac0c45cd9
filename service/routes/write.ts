import type { Request } from "express";
import { z } from "zod";
import { admitPrepare, admitSend, chargePrepare, chargeSend, requireKeyOf, type Caller } from "../access/gate";
import { ACCESS } from "../auth/access-rules";
import { chainFor, newTxId, planBatch, storeBatch } from "../engine/prepare";
import { assertHashesFree, loadBatchToSend, loadSendableBatch, reportable, normalizeSendBody, sendBodySchema, sendingState, type SendBody, type SendRequest } from "../engine/send";
import { replacePendingTransactions } from "../engine/replace";
import { sendSummary } from "../model/batch-views";
import { paymentView, transactionStatus } from "../reads/transaction-status";
import type { Batch } from "../model/batch";
import { ApiError, badRequest, conflict, outOfCredits as outOfCreditsError } from "../errors";
import { echoedExecutionMode, type ExecutionMode } from "../wire/fields";
import { FacadePrepareResponse, PrepareResponse, SendSummary, TransactionStatus } from "../wire/responses";
import { defineRoute, parseInput } from "../http/route";
import { findPublicMethod, methodForBody, PUBLIC_METHODS } from "../methods";
import type { MethodDefinition } from "../methods/types";
import type { Services } from "../composition";
import type { Queryable } from "../store/db";
import type { PaymentRecord } from "../store/payments";

const methodNames = PUBLIC_METHODS.map((m) => m.name);

const pascal = (name: string) => name[0].toUpperCase() + name.slice(1);

/** A method's body as documented: the component <Method>Body (the same schema that validates it). */
const documentedBodies = new Map(PUBLIC_METHODS.map((m) => [m.name, (m.body as z.ZodType).meta({ id: `${pascal(m.name)}Body`, description: m.summary })]));
export const documentedMethodBody = (method: MethodDefinition): z.ZodType => documentedBodies.get(method.name)!;

/**
 * Body of /prepare-transactions for the OpenAPI document: one request schema per method (<Method>Request = its body
 * and `method`), discriminated by `method` (aliases map to the method they name).
 */
const prepareBodyDoc = z
  .union(
    PUBLIC_METHODS.map((m) =>
      z
        .object({ method: z.enum([m.name, ...(m.aliases ?? [])]).meta({ description: m.aliases?.length ? `${m.name} (alias ${m.aliases.join(", ")})` : m.name }) })
        .and(documentedMethodBody(m))
        .meta({ id: `${pascal(m.name)}Request`, description: m.summary }),
    ) as unknown as [z.ZodType, z.ZodType],
  )
  .meta({
    description: "The method's body and its name in `method`",
    discriminator: {
      propertyName: "method",
      mapping: Object.fromEntries(PUBLIC_METHODS.flatMap((m) => [m.name, ...(m.aliases ?? [])].map((name) => [name, `#/components/schemas/${pascal(m.name)}Request`]))),
    },
  });

const hash32 = z.string().trim().regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters");
const statusQuery = z.object({ hash: hash32.optional(), txId: hash32.optional() });

/**
 * The prepare / send / status flow. Routes only adapt HTTP: who may call and who pays is decided by service/access,
 * what to do by the method, how to do it on-chain by the engine.
 */
export function writeRoutes(services: Services) {
  async function prepare(req: Request, caller: Caller, method: MethodDefinition, rawBody: unknown, defaultMode?: ExecutionMode) {
    const wallet = typeof (rawBody as { signerAddress?: unknown })?.signerAddress === "string" ? (rawBody as { signerAddress: string }).signerAddress : undefined;
    const release = await services.rateLimiter.admit(req, caller.apiKey?.id, wallet);
    try {
      requireKeyOf(caller, method.access);
      const body = parseInput(method.body, rawBody, "body");
      const mode: ExecutionMode = body.executionMode ?? defaultMode ?? "client-signed";
      const chain = chainFor(services, method, body);
      const access = await admitPrepare(services, caller, method, mode, chain.chainId);
      const planned = await planBatch(services, { method, body, apiKey: access.apiKey, executionMode: mode });
      const txId = newTxId();
      const charged = await chargePrepare(services, req, access, { method, mode, txId }, () => storeBatch(services, planned, txId));
      return { ...charged, body: { ...charged.body, executionMode: echoedExecutionMode((rawBody as { executionMode?: unknown })?.executionMode, mode) } };
    } finally {
      await release();
    }
  }

  /** Checks one send (body against the batch first, then credentials and payment), then starts broadcasting. */
  async function startSend(req: Request, caller: Caller, batch: Batch, body: SendBody, request: SendRequest, hashOwners: Map<string, string>): Promise<PaymentRecord | undefined> {
    const method = findPublicMethod(batch.method);
    let state: ReturnType<typeof sendingState> = [];
    if (batch.executionMode === "service-relayed") {
      if (request.kind !== "relayed") {
        throw badRequest("A service-relayed txId is sent as { txId } (optionally with transactions) and an x402 payment, without signed transactions", {
          field: "signedTransactions",
        });
      }
      for (const [index, t] of (body.transactions ?? []).entries()) {
        const twin = batch.transactions[index];
        if (!twin || (t.to && t.to.toLowerCase() !== twin.unsigned.to.toLowerCase()) || (t.data && t.data.toLowerCase() !== twin.unsigned.data.toLowerCase())) {
          throw badRequest(`transactions[${index}] is not the prepared transaction ${index + 1} of this txId`, { transactionIndex: index });
        }
      }
    } else {
      state = sendingState(batch, request);
      assertHashesFree(batch, state, hashOwners);
    }
    const access = admitSend(services, caller, batch, method);
    if (request.kind !== "reported") await method?.checkAtSend?.(services, batch);
    const checkPayer = method?.checkRelayedPayer && batch.executionMode === "service-relayed" ? (payer: string) => method.checkRelayedPayer!(services, batch, payer) : undefined;
    const payment = method ? await chargeSend(services, req, access, batch, method, checkPayer) : undefined;
    // One statement marks the batch sending; a reported batch being sent again is first reopened, in one transaction.
    const markSending = async (q: Queryable) => {
      const credit = access.creditKeyId ? { keyId: access.creditKeyId, method: batch.method } : undefined;
      const { moved, outOfCredits, hashOwners: taken } = await services.batches.markSending(q, batch.txId, state, credit);
      assertHashesFree(batch, state, taken);
      if (moved) return;
      // Only a prepared batch moves: of two concurrent sends of one txId, the second finds it moved and gets the 409.
      await loadSendableBatch(services, batch.txId, q);
      if (outOfCredits) throw outOfCreditsError(batch.method);
      throw conflict(`txId ${batch.txId} changed while it was being sent; look it up with GET /get-transaction-status`, { txId: batch.txId });
    };
    try {
      if (!reportable(batch)) await markSending(services.db);
      else {
        await services.db.transaction(async (q) => {
          if (request.kind !== "reported") throw badRequest("This txId's reported hash never appeared: report the right hash with { txId, txHash }", { field: "txHash" });
          if ((await services.batches.lock(q, batch.txId)) !== "rejected") await loadSendableBatch(services, batch.txId, q);
          await services.batches.reopen(q, batch.txId);
          await markSending(q);
        });
      }
    } catch (error) {
      if (payment) await services.x402!.release(payment.id, `send refused: ${(error as Error).message}`);
      throw error;
    }
    void services.runner.run(batch.txId, sendingBatch(batch, state));
    return payment;
  }

  return [
    defineRoute({
      method: "post",
      path: "/prepare-transactions",
      summary: "Prepare the unsigned transactions of one method; sign them locally, then call /send-transactions",
      tags: ["write"],
      access: ACCESS.agenticWrite,
      documentedBody: prepareBodyDoc,
      response: PrepareResponse,
      rateLimited: true,
      handler: async ({ req, caller }) => {
        const name = (req.body as { method?: unknown })?.method;
        if (name === undefined || name === null || name === "") throw badRequest("method is required", { field: "method", methods: methodNames });
        const method = typeof name === "string" ? methodForBody(name, req.body) : undefined;
        if (!method) throw badRequest(`Unknown method: ${typeof name === "string" ? name : JSON.stringify(name)}`, { field: "method", methods: methodNames });
        return prepare(req, caller, method, req.body);
      },
    }),
    ...PUBLIC_METHODS.map((method) =>
      defineRoute({
        method: "post",
        path: `/prepare-transactions/${method.name}`,
        summary: method.summary,
        tags: ["write", method.area],
        access: method.access,
        documentedBody: documentedMethodBody(method),
        response: PrepareResponse,
        rateLimited: true,
        handler: async ({ req, caller }) => prepare(req, caller, method, req.body),
      }),
    ),
    ...PUBLIC_METHODS.filter((m) => m.facadePath).map((method) =>
      defineRoute({
        method: "post",
        path: method.facadePath!,
        summary: `${method.summary} — facade (default execution mode: ${method.facadeMode ?? "service-relayed"})`,
        tags: ["x402", method.area],
        access: ACCESS.agenticWrite,
        documentedBody: documentedMethodBody(method),
        response: method.facadeEnvelope === "data" ? FacadePrepareResponse : PrepareResponse,
        rateLimited: true,
        handler: async ({ req, caller }) => {
          const prepared = await prepare(req, caller, method, req.body, method.facadeMode ?? "service-relayed");
          return method.facadeEnvelope === "data" ? { body: { data: prepared.body }, headers: prepared.headers } : prepared;
        },
      }),
    ),
    defineRoute({
      method: "post",
      path: "/send-transactions",
      summary: "Send signed transactions (or report client-broadcast hashes, or pay for a relayed txId); broadcast in order",
      description:
        "Accepts { txId, signedTransactions } with either field a string or an array, { txId, txHash } and, for " +
        "service-relayed batches, { txId, transactions? } with an x402 payment. Each signed transaction must match its " +
        "prepared twin. Answers 200 when the batch ended and 202 while it is still pending. Signed transactions for a " +
        "pending client-signed txId replace its unmined ones when they raise both fees by at least 10% (same nonces): " +
        "the service keeps every hash and whichever is mined wins.",
      tags: ["write"],
      access: ACCESS.agenticWrite,
      body: sendBodySchema,
      response: {
        200: { description: "The batch ended: success, or rejected (see error and failedIndex)", schema: SendSummary },
        202: { description: "Accepted; the batch is still pending: poll GET /get-transaction-status?txId=…", schema: SendSummary },
      },
      handler: async ({ req, body, caller }) => {
        const request = normalizeSendBody(body);
        // A caller without an API key may be asked to pay (x402): a taken hash is refused before that.
        const loaded = await loadBatchToSend(services, request, !caller.apiKey).catch((error: unknown) => {
          // Signed transactions for a pending batch: a replacement with higher fees (same nonces), when they are one.
          if (request.kind === "signed" && error instanceof ApiError && error.status === 409 && error.details?.status === "pending") return undefined;
          throw error;
        });
        if (!loaded) {
          const replaced = await replacePendingTransactions(services, caller.apiKey?.id, request.txId, (request as { signedTransactions: string[] }).signedTransactions);
          return { status: 202, body: sendSummary(replaced) };
        }
        const { batch, hashOwners } = loaded;
        const payment = await startSend(req, caller, batch, body, request, hashOwners);
        const after = (await services.runner.waitFor(batch.txId, services.config.SEND_WAIT_MS)) ?? (await services.batches.get(batch.txId))!;
        const settled = payment ? await services.payments.get(payment.id) : undefined;
        return {
          status: after.status === "sending" ? 202 : 200,
          body: { ...sendSummary(after), ...(settled ? { payment: paymentView(settled) } : {}) },
          headers: settled?.status === "settled" ? services.x402!.responseHeader(settled.settlement) : {},
        };
      },
    }),
    defineRoute({
      method: "get",
      path: "/get-transaction-status",
      summary: "Status of a prepared batch (txId) or of one transaction (hash): prepared, pending, success or rejected",
      description:
        "A batch prepared under an API key is read with that key; one prepared without a key (paid with x402, or " +
        "service-relayed) by whoever names it: its txId (32 random bytes) or one of its transaction hashes. Other " +
        "callers get 404 for the txId, and for a hash only what the chain shows.",
      tags: ["write"],
      access: ACCESS.keyScoped,
      query: statusQuery,
      response: TransactionStatus,
      handler: ({ query, caller }) => transactionStatus(services, query, caller.apiKey?.id),
    }),
  ];
}

/** The batch as markSending (after a reopen, if any) just stored it: what its runner starts from. */
function sendingBatch(batch: Batch, state: ReturnType<typeof sendingState>): Batch {
  const now = new Date().toISOString();
  const sent = new Map(state.map((s) => [s.index, s]));
  const reopened = reportable(batch);
  return {
    ...batch,
    status: "sending",
    ...(reopened ? { failedIndex: null, error: null } : {}),
    transactions: batch.transactions.map((t) => {
      const s = sent.get(t.index);
      const base = reopened ? { ...t, status: "prepared" as const, txHash: null, signedRaw: null, error: null, broadcastAt: null, blockNumber: null, gasUsed: null } : t;
      if (!s) return base;
      return { ...base, signedRaw: s.signedRaw, txHash: s.txHash?.toLowerCase() ?? null, status: s.status, broadcastAt: s.status === "broadcast" ? now : null };
    }),
  };
}
