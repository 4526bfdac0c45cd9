import type { Request } from "express";
import { z } from "zod";
import { optionalApiKey, requireApiKey } from "../auth/api-key";
import { isMetered } from "../auth/plans";
import { chainIdHex } from "../chains/networks";
import { prepareBatch } from "../engine/prepare";
import { loadSendableBatch, normalizeSendBody, sendBodySchema, sendingState } from "../engine/send";
import { sendSummary, statusView } from "../engine/status";
import { ApiError, badRequest, forbidden, notFound } from "../errors";
import { defineRoute, parseInput } from "../http/route";
import { findMethod, METHODS } from "../methods";
import type { MethodDefinition } from "../methods/types";
import type { Services } from "../services";

const methodNames = METHODS.map((m) => m.name);

/** Body schema of /prepare-transactions for the OpenAPI document: one variant per method. */
const prepareBodyDoc = z.union(
  METHODS.map((m) => (m.body as z.ZodObject).extend({ method: z.literal(m.name) })) as unknown as [z.ZodObject, z.ZodObject],
);

const hash32 = z.string().trim().regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters");
const statusQuery = z.object({ hash: hash32.optional(), txId: hash32.optional() });

/** The prepare / send / status flow. */
export function writeRoutes(services: Services) {
  async function prepare(req: Request, method: MethodDefinition, rawBody: unknown) {
    const wallet = typeof (rawBody as { signerAddress?: unknown })?.signerAddress === "string" ? (rawBody as { signerAddress: string }).signerAddress : undefined;
    const presented = await optionalApiKey(services, req);
    const release = await services.rateLimiter.admit(req, presented?.id, wallet);
    try {
      const apiKey = presented ?? (await requireApiKey(services, req, "method"));
      const body = parseInput(method.body, rawBody, "body");
      if (body.executionMode === "service-relayed") {
        throw badRequest(`${method.name} cannot be service-relayed: it must be signed by ${method.area === "tokenization" ? "the token holder or tokenizer" : "the investor or tokenizer"}`, {
          field: "executionMode",
        });
      }
      return await prepareBatch(services, { method, body, apiKey });
    } finally {
      await release();
    }
  }

  return [
    defineRoute({
      method: "post",
      path: "/prepare-transactions",
      summary: "Prepare the unsigned transactions of one method; sign them locally, then call /send-transactions",
      tags: ["write"],
      auth: "apiKey",
      documentedBody: prepareBodyDoc,
      handler: async ({ req }) => {
        const name = (req.body as { method?: unknown })?.method;
        if (name === undefined || name === null || name === "") throw badRequest("method is required", { field: "method", methods: methodNames });
        const method = typeof name === "string" ? findMethod(name) : undefined;
        if (!method) throw badRequest(`Unknown method: ${String(name)}`, { field: "method", methods: methodNames });
        return prepare(req, method, req.body);
      },
    }),
    ...METHODS.map((method) =>
      defineRoute({
        method: "post",
        path: `/prepare-transactions/${method.name}`,
        summary: method.summary,
        tags: ["write", method.area],
        auth: "apiKey",
        documentedBody: method.body,
        handler: async ({ req }) => prepare(req, method, req.body),
      }),
    ),
    defineRoute({
      method: "post",
      path: "/send-transactions",
      summary: "Send signed transactions (or report client-broadcast hashes) of a prepared txId; broadcast in order",
      description:
        "Accepts { txId, signedTransactions } with either field a string or an array, and { txId, txHash }. Each signed " +
        "transaction must match its prepared twin. Answers 200 when the batch ended and 202 while it is still pending.",
      tags: ["write"],
      auth: "apiKey",
      body: sendBodySchema,
      handler: async ({ req, body }) => {
        const request = normalizeSendBody(body);
        const batch = await loadSendableBatch(services, request.txId);
        const apiKey = await optionalApiKey(services, req);
        if (batch.apiKeyId) {
          if (!apiKey) await requireApiKey(services, req, "method");
          if (apiKey!.id !== batch.apiKeyId) throw forbidden("This txId was prepared under another API key", { txId: batch.txId });
        }
        const state = sendingState(batch, request);
        await services.db.transaction(async (q) => {
          // Re-checked under the row lock: of two concurrent sends of one txId, the second gets the 409.
          if ((await services.batches.lock(q, batch.txId)) !== "prepared") await loadSendableBatch(services, batch.txId, q);
          if (batch.apiKeyId && isMetered(batch.method)) {
            const spent = await services.credits.spend(q, batch.apiKeyId, batch.method, batch.txId);
            if (!spent.ok) throw new ApiError(403, "OUT_OF_CREDITS", `Out of credits for ${batch.method}`, { method: batch.method });
          }
          await services.batches.markSending(q, batch.txId, state);
        });
        void services.runner.run(batch.txId);
        await services.runner.waitFor(batch.txId, services.config.SEND_WAIT_MS);
        const after = (await services.batches.get(batch.txId))!;
        return { status: after.status === "sending" ? 202 : 200, body: sendSummary(after) };
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
          if (batch) return statusView(batch, query.hash);
          throw notFound(`No prepared transactions with txId ${txId}`, { txId });
        }
        return chainTransactionStatus(services, query.hash!);
      },
    }),
  ];
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
