import type { Request } from "express";
import { z } from "zod";
import { optionalApiKey, requireApiKey } from "../auth/api-key";
import { isMetered } from "../auth/plans";
import { chainIdHex } from "../chains/networks";
import { newTxId, prepareBatch } from "../engine/prepare";
import { loadSendableBatch, normalizeSendBody, sendBodySchema, sendingState, type SendBody } from "../engine/send";
import { sendSummary, statusView } from "../engine/status";
import type { Batch } from "../engine/types";
import { ApiError, badRequest, forbidden, notFound } from "../errors";
import type { ExecutionMode } from "../http/fields";
import { defineRoute, parseInput } from "../http/route";
import { findPublicMethod, PUBLIC_METHODS } from "../methods";
import type { MethodDefinition } from "../methods/types";
import { shareOf } from "../payments/pricing";
import { assertX402Available, RELAYED_NEEDS_X402, type Charge } from "../payments/x402";
import type { Services } from "../services";
import type { PaymentRecord } from "../store/payments";

const methodNames = PUBLIC_METHODS.map((m) => m.name);

/** Body schema of /prepare-transactions for the OpenAPI document: one variant per method. */
const prepareBodyDoc = z.union(
  PUBLIC_METHODS.map((m) => (m.body as z.ZodObject).extend({ method: z.literal(m.name) })) as unknown as [z.ZodObject, z.ZodObject],
);

const hash32 = z.string().trim().regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters");
const statusQuery = z.object({ hash: hash32.optional(), txId: hash32.optional() });

/** The URL a client called, for x402 resource descriptions. */
export function resourceUrl(services: Services, req: Request): string {
  const base = services.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.get("host")}`;
  return `${base.replace(/\/$/, "")}${req.originalUrl.split("?")[0]}`;
}

/**
 * The prepare / send / status flow, with the access matrix of the spec: tokenization and STO methods take an API key
 * only; agentic methods take a key or x402 (half at prepare and half at send when client-signed, free prepare and the
 * full price at send when service-relayed); a present key skips x402 entirely and cannot be relayed.
 */
export function writeRoutes(services: Services) {
  async function prepare(req: Request, method: MethodDefinition, rawBody: unknown, forcedMode?: ExecutionMode) {
    const presented = await optionalApiKey(services, req);
    const wallet = typeof (rawBody as { signerAddress?: unknown })?.signerAddress === "string" ? (rawBody as { signerAddress: string }).signerAddress : undefined;
    const release = await services.rateLimiter.admit(req, presented?.id, wallet);
    try {
      if (!method.x402) {
        const apiKey = presented ?? (await requireApiKey(services, req, "method"));
        const body = parseInput(method.body, rawBody, "body");
        const mode: ExecutionMode = forcedMode ?? body.executionMode ?? "client-signed";
        if (mode === "service-relayed") {
          throw badRequest(`${method.name} cannot be service-relayed: the token holder, investor or tokenizer signs it`, { field: "executionMode" });
        }
        return await prepareBatch(services, { method, body, apiKey, executionMode: mode });
      }
      const body = parseInput(method.body, rawBody, "body");
      const mode: ExecutionMode = forcedMode ?? body.executionMode ?? "client-signed";
      if (presented) {
        if (mode === "service-relayed") throw badRequest(RELAYED_NEEDS_X402, { field: "executionMode" });
        return await prepareBatch(services, { method, body, apiKey: presented, executionMode: mode });
      }
      const chain = services.chains.resolve(body.chainId);
      const x402 = assertX402Available(services, chain.chainId);
      const price = await services.prices.of(method.name, method.x402.tier);
      const sendCharge = (txId: string): Charge => ({
        subject: `send:${txId}`,
        routeKey: "POST /send-transactions",
        amount: shareOf(price, mode, "send"),
        resourceUrl: resourceUrl(services, req).replace(/\/(prepare-transactions.*|x402\/.*)$/, "/send-transactions"),
        description: `${method.name}: send`,
        txId,
      });
      if (mode === "service-relayed") {
        if (!method.relayable) throw badRequest(`${method.name} cannot be service-relayed`, { field: "executionMode" });
        const prepared = await prepareBatch(services, { method, body, executionMode: mode });
        return { ...prepared, x402Requirements: x402.requirements(sendCharge(prepared.txId)) };
      }
      const txId = newTxId();
      const payment = await x402.reserve(req, {
        subject: `prepare:${txId}`,
        routeKey: "POST /prepare-transactions",
        amount: shareOf(price, mode, "prepare"),
        resourceUrl: resourceUrl(services, req),
        description: `${method.name}: prepare`,
        txId,
      });
      let prepared;
      try {
        prepared = await prepareBatch(services, { method, body, executionMode: mode, txId });
      } catch (error) {
        await x402.release(payment.id, `prepare failed: ${(error as Error).message}`);
        throw error;
      }
      const settlement = await x402.settle(payment.id);
      return { body: { ...prepared, x402Requirements: x402.requirements(sendCharge(txId)) }, headers: x402.responseHeader(settlement) };
    } finally {
      await release();
    }
  }

  /** Runs the checks and the payment of one send, then starts broadcasting; returns the payment taken, if any. */
  async function startSend(req: Request, batch: Batch, body: SendBody): Promise<PaymentRecord | undefined> {
    const request = normalizeSendBody(body);
    const presented = await optionalApiKey(services, req);
    const method = findPublicMethod(batch.method) ?? undefined;
    let state: ReturnType<typeof sendingState> = [];
    let payment: PaymentRecord | undefined;
    let chargeCredit: string | undefined;

    if (batch.executionMode === "service-relayed") {
      if (presented) throw badRequest(RELAYED_NEEDS_X402, { header: "x-api-key" });
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
      if (batch.apiKeyId) {
        if (!presented) await requireApiKey(services, req, "method");
        if (presented!.id !== batch.apiKeyId) throw forbidden("This txId was prepared under another API key", { txId: batch.txId });
        if (isMetered(batch.method)) chargeCredit = batch.apiKeyId;
      }
    }
    const paidByX402 = !batch.apiKeyId && !presented && method?.x402;
    if (paidByX402) {
      const x402 = assertX402Available(services, batch.chainId);
      const price = await services.prices.of(batch.method, method.x402!.tier);
      payment = await x402.reserve(req, {
        subject: `send:${batch.txId}`,
        routeKey: "POST /send-transactions",
        amount: shareOf(price, batch.executionMode, "send"),
        resourceUrl: resourceUrl(services, req),
        description: `${batch.method}: send`,
        txId: batch.txId,
      });
    }
    try {
      await services.db.transaction(async (q) => {
        // Re-checked under the row lock: of two concurrent sends of one txId, the second gets the 409.
        if ((await services.batches.lock(q, batch.txId)) !== "prepared") await loadSendableBatch(services, batch.txId, q);
        if (chargeCredit) {
          const spent = await services.credits.spend(q, chargeCredit, batch.method, batch.txId);
          if (!spent.ok) throw new ApiError(403, "OUT_OF_CREDITS", `Out of credits for ${batch.method}`, { method: batch.method });
        }
        await services.batches.markSending(q, batch.txId, state);
      });
    } catch (error) {
      if (payment) await services.x402!.release(payment.id, `send refused: ${(error as Error).message}`);
      throw error;
    }
    void services.runner.run(batch.txId);
    return payment;
  }

  return [
    defineRoute({
      method: "post",
      path: "/prepare-transactions",
      summary: "Prepare the unsigned transactions of one method; sign them locally, then call /send-transactions",
      tags: ["write"],
      auth: "apiKeyOrPayment",
      documentedBody: prepareBodyDoc,
      handler: async ({ req }) => {
        const name = (req.body as { method?: unknown })?.method;
        if (name === undefined || name === null || name === "") throw badRequest("method is required", { field: "method", methods: methodNames });
        const method = typeof name === "string" ? findPublicMethod(name) : undefined;
        if (!method) throw badRequest(`Unknown method: ${String(name)}`, { field: "method", methods: methodNames });
        return prepare(req, method, req.body);
      },
    }),
    ...PUBLIC_METHODS.map((method) =>
      defineRoute({
        method: "post",
        path: `/prepare-transactions/${method.name}`,
        summary: method.summary,
        tags: ["write", method.area],
        auth: method.x402 ? "apiKeyOrPayment" : "apiKey",
        documentedBody: method.body,
        handler: async ({ req }) => prepare(req, method, req.body),
      }),
    ),
    ...PUBLIC_METHODS.filter((m) => m.facadePath).map((method) =>
      defineRoute({
        method: "post",
        path: method.facadePath!,
        summary: `${method.summary} — facade: always service-relayed, free to prepare, paid at send`,
        tags: ["x402", method.area],
        auth: "payment",
        documentedBody: method.body,
        handler: async ({ req }) => prepare(req, method, req.body, "service-relayed"),
      }),
    ),
    defineRoute({
      method: "post",
      path: "/send-transactions",
      summary: "Send signed transactions (or report client-broadcast hashes, or pay for a relayed txId); broadcast in order",
      description:
        "Accepts { txId, signedTransactions } with either field a string or an array, { txId, txHash } and, for " +
        "service-relayed batches, { txId, transactions? } with an x402 payment. Each signed transaction must match its " +
        "prepared twin. Answers 200 when the batch ended and 202 while it is still pending.",
      tags: ["write"],
      auth: "apiKeyOrPayment",
      body: sendBodySchema,
      handler: async ({ req, body }) => {
        const batch = await loadSendableBatch(services, normalizeSendBody(body).txId);
        const payment = await startSend(req, batch, body);
        await services.runner.waitFor(batch.txId, services.config.SEND_WAIT_MS);
        const after = (await services.batches.get(batch.txId))!;
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
      tags: ["write"],
      auth: "none",
      query: statusQuery,
      handler: async ({ query }) => {
        if (!query.hash && !query.txId) throw badRequest("hash or txId is required", { field: "hash" });
        const txId = query.txId ?? (await services.batches.txIdByHash(query.hash!));
        if (txId) {
          const batch = await services.batches.get(txId.toLowerCase());
          if (!batch) throw notFound(`No prepared transactions with txId ${txId}`, { txId });
          const payments = await services.payments.forBatch(batch.txId);
          return { ...statusView(batch, query.hash), payments: payments.map(paymentView) };
        }
        return chainTransactionStatus(services, query.hash!);
      },
    }),
  ];
}

export function paymentView(p: PaymentRecord) {
  return {
    status: p.status,
    amount: p.amount,
    network: p.network,
    payer: p.payer,
    step: p.subject.split(":")[0],
    settlementTransaction: p.settlement?.transaction ?? p.settleTxHash ?? null,
    ...(p.releaseReason ? { releaseReason: p.releaseReason } : {}),
  };
}

/** A hash this service never saw: answer from the chains it serves. */
async function chainTransactionStatus(services: Services, hash: string) {
  for (const chain of services.chains.list()) {
    const [receipt, tx] = await Promise.all([chain.provider.getTransactionReceipt(hash), chain.provider.getTransaction(hash)]);
    if (receipt) {
      return {
        status: receipt.status === 1 ? "success" : "rejected",
        txId: null,
        chainId: chain.chainId,
        chainIdHex: chainIdHex(chain.chainId),
        txHash: hash,
        txHashes: [hash],
        blockNumber: receipt.blockNumber,
        gasUsed: receipt.gasUsed.toString(),
        transactions: [],
      };
    }
    if (tx) return { status: "pending", txId: null, chainId: chain.chainId, txHash: hash, txHashes: [hash], blockNumber: null, gasUsed: null, transactions: [] };
  }
  throw notFound(`Transaction ${hash} is unknown to this service and to the chains it serves`, { hash });
}

