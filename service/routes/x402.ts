import { randomUUID } from "node:crypto";
import type { Request } from "express";
import { z } from "zod";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import { resourceUrl, type Caller } from "../access/gate";
import { ACCESS, shareOf } from "../auth/access-rules";
import { FAUCET_CREDIT_METHOD } from "../auth/plans";
import { newTxId, prepareBatch } from "../engine/prepare";
import type { Batch } from "../model/batch";
import { ApiError, badRequest, conflict, notFound, outOfCredits } from "../errors";
import { address } from "../wire/fields";
import { PaymentRequirements, PaymentView, responseFields } from "../wire/responses";
import { defineRoute, type RouteDefinition } from "../http/route";
import { findMethod, PUBLIC_METHODS } from "../methods";
import { assertX402Available } from "../payments/x402";
import type { Services } from "../composition";
import type { PaymentRecord } from "../store/payments";
import { paymentView } from "../reads/transaction-status";
import { fromUnits } from "../model/units";

const { address: addressOut, hash32, integerText, int } = responseFields;

const Discovery = z
  .strictObject({
    x402Version: int,
    enabled: z.boolean(),
    network: z.string().optional().meta({ example: "eip155:84532" }),
    asset: addressOut.optional(),
    payTo: addressOut.optional(),
    resources: z.array(
      z.strictObject({
        resource: z.string(),
        method: z.string(),
        operation: z.string(),
        executionMode: z
          .enum(["client-signed", "service-relayed", "read"])
          .meta({ description: "How the operation runs; read is a paid GET (an agent getter or a RAMS read)" }),
        step: z.enum(["prepare", "send", "call"]).meta({ description: "The call that takes this payment; call is the paid GET itself" }),
        accepts: z.array(PaymentRequirements),
      }),
    ),
  })
  .meta({ id: "X402Discovery" });

const FaucetClaim = z
  .strictObject({
    claimId: z.string(),
    status: z.enum(["submitted", "confirmed", "failed"]),
    chainId: z.string(),
    recipientAddress: addressOut,
    amount: z.string().meta({ example: "100" }),
    amountRaw: integerText,
    token: z.strictObject({ address: addressOut, symbol: z.literal("BKN"), decimals: int }),
    transactionHash: hash32.nullable(),
    explorerUrl: z.string().nullable(),
    cooldownEndsAt: z.string().nullable(),
    txId: hash32,
    error: z.string().optional(),
    payment: PaymentView.optional(),
  })
  .meta({ id: "FaucetClaim" });

const FAUCET_CHAIN_ID = 11155111;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Discovery of the paid resources, and the sandbox governance-token faucet. `paidReads` lists the API's paid GET routes
 * (the app's route list; handed in, since the app is built from these routes).
 */
export function x402Routes(services: Services, paidReads: () => RouteDefinition<any, any>[]) {
  const faucetMethod = findMethod("faucetBkn")!;

  async function faucetResponse(batch: Batch, claim: { id: string; recipient: string }, payment?: PaymentRecord) {
    const chain = services.chains.find(batch.chainId)!;
    const tx = batch.transactions[0];
    const outcome = (await services.db.query<{ outcome: Record<string, string> | null }>("SELECT outcome FROM batches WHERE tx_id = $1", [batch.txId]))[0]
      ?.outcome;
    const status = batch.status === "success" ? "confirmed" : batch.status === "rejected" ? "failed" : ("submitted" as const);
    const bkn = BKN__factory.connect(chain.deployment.contracts.BKN, chain.provider);
    const amountRaw = outcome?.amountRaw ?? (await bkn.FAUCET_AMOUNT()).toString();
    return {
      status: status === "confirmed" ? 200 : status === "submitted" ? 202 : 200,
      body: {
        claimId: claim.id,
        status,
        chainId: String(chain.chainId),
        recipientAddress: claim.recipient,
        amount: fromUnits(BigInt(amountRaw), 18),
        amountRaw,
        token: { address: chain.deployment.contracts.BKN, symbol: "BKN", decimals: 18 },
        transactionHash: tx.txHash,
        explorerUrl: tx.txHash ? `${chain.deployment.blockExplorerUrl}/tx/${tx.txHash}` : null,
        cooldownEndsAt: outcome?.cooldownEndsAt ?? null,
        txId: batch.txId,
        ...(batch.error ? { error: batch.error } : {}),
        ...(payment ? { payment: paymentView(payment) } : {}),
      } satisfies z.infer<typeof FaucetClaim>,
      headers: payment?.status === "settled" ? services.x402!.responseHeader(payment.settlement) : {},
    };
  }

  async function claimFaucet(req: Request, caller: Caller, recipient: string) {
    if (services.config.ENVIRONMENT !== "sandbox") throw notFound("The BKN faucet exists only in the sandbox");
    const idempotencyKey = (req.header("idempotency-key") ?? "").trim();
    if (!UUID_V4.test(idempotencyKey)) throw badRequest("Idempotency-Key header is required (a UUID v4)", { header: "Idempotency-Key" });
    const chain = services.chains.resolve(FAUCET_CHAIN_ID);

    const [existing] = await services.db.query<{ id: string; recipient: string; tx_id: string }>(
      "SELECT id, recipient, tx_id FROM faucet_claims WHERE idempotency_key = $1",
      [idempotencyKey],
    );
    if (existing) {
      if (existing.recipient.toLowerCase() !== recipient.toLowerCase()) {
        throw conflict("This Idempotency-Key was used for another recipient", { header: "Idempotency-Key", recipientAddress: existing.recipient });
      }
      const [payment] = await services.payments.forBatch(existing.tx_id);
      return faucetResponse((await services.batches.get(existing.tx_id))!, existing, payment);
    }

    // A key pays with its own faucet balance (and skips x402 entirely); without one, x402 pays.
    const { apiKey } = caller;
    const x402 = apiKey ? undefined : assertX402Available(services, chain.chainId);

    const bkn = BKN__factory.connect(chain.deployment.contracts.BKN, chain.provider);
    const [availableAt, block] = await Promise.all([bkn.faucetAvailableAt(recipient), chain.provider.getBlock("latest")]);
    if (Number(availableAt) > block!.timestamp) {
      const wait = Number(availableAt) - block!.timestamp;
      throw new ApiError("FAUCET_COOLDOWN", `${recipient} claimed recently; it may claim again at ${new Date(Number(availableAt) * 1000).toISOString()}`, {
        recipientAddress: recipient,
        cooldownEndsAt: new Date(Number(availableAt) * 1000).toISOString(),
      }, { "Retry-After": String(wait) });
    }

    const claimId = randomUUID();
    const txId = newTxId();
    const payment = x402
      ? await x402.reserve(req, {
          subject: `faucet:${idempotencyKey}`,
          routeKey: "POST /faucet/bkn",
          amount: shareOf(await services.prices.of("faucet", "faucet"), "service-relayed", "send"),
          resourceUrl: resourceUrl(services, req),
          description: "BKN faucet claim (100 BKN)",
          txId,
        })
      : undefined;
    let prepared: { txId: string };
    try {
      prepared = await prepareBatch(services, { method: faucetMethod, body: { chainId: FAUCET_CHAIN_ID, recipientAddress: recipient }, executionMode: "service-relayed", txId });
      await services.db.transaction(async (q) => {
        if (apiKey) {
          const spent = await services.credits.spend(q, apiKey.id, FAUCET_CREDIT_METHOD, prepared.txId);
          if (!spent.ok) throw outOfCredits(FAUCET_CREDIT_METHOD);
        }
        await q.query("INSERT INTO faucet_claims (id, idempotency_key, recipient, tx_id, api_key_id) VALUES ($1, $2, $3, $4, $5)", [
          claimId,
          idempotencyKey,
          recipient,
          prepared.txId,
          apiKey?.id ?? null,
        ]);
        await services.batches.markSending(q, prepared.txId, []);
      });
    } catch (error) {
      if (payment) await x402!.release(payment.id, `faucet claim refused: ${(error as Error).message}`);
      if (/faucet_claims_idempotency_key|duplicate key/i.test((error as Error).message)) throw conflict("This Idempotency-Key is being used by a concurrent claim");
      throw error;
    }
    void services.runner.run(prepared.txId);
    await services.runner.waitFor(prepared.txId, services.config.SEND_WAIT_MS);
    const settled = payment ? await services.payments.get(payment.id) : undefined;
    return faucetResponse((await services.batches.get(prepared.txId))!, { id: claimId, recipient }, settled);
  }

  return [
    defineRoute({
      method: "get",
      path: "/.well-known/x402",
      summary: "Paid resources and their prices (x402 v2 discovery)",
      tags: ["x402"],
      access: ACCESS.public,
      response: Discovery,
      handler: async ({ req }) => {
        const x402 = services.x402;
        if (!x402) return { x402Version: 2, enabled: false, resources: [] };
        const base = resourceUrl(services, req).replace(/\/\.well-known\/x402$/, "");
        const resources = [];
        for (const method of PUBLIC_METHODS.filter((m) => m.access.price)) {
          const price = await services.prices.of(method.name, method.access.price!);
          const entry = (path: string, routeKey: string, mode: "client-signed" | "service-relayed", step: "prepare" | "send") => ({
            resource: `${base}${path}`,
            method: "POST",
            operation: method.name,
            executionMode: mode,
            step,
            accepts: [x402.requirements({ subject: "", routeKey, amount: shareOf(price, mode, step), resourceUrl: `${base}${path}`, description: method.summary })],
          });
          resources.push(
            entry("/prepare-transactions", "POST /prepare-transactions", "client-signed", "prepare"),
            entry("/send-transactions", "POST /send-transactions", "client-signed", "send"),
            ...(method.relayable ? [entry("/send-transactions", "POST /send-transactions", "service-relayed", "send")] : []),
          );
        }
        // Paid reads (agent getters, RAMS reads): one call, one payment.
        for (const route of paidReads()) {
          const amount = await services.prices.of(route.path.replace(/^\//, ""), route.access.price!);
          const url = `${base}${route.path}`;
          resources.push({
            resource: url,
            method: "GET",
            operation: route.path.replace(/^\//, ""),
            executionMode: "read",
            step: "call",
            accepts: [x402.requirements({ subject: "", routeKey: `GET ${route.path}`, amount, resourceUrl: url, description: route.summary })],
          });
        }
        if (services.config.ENVIRONMENT === "sandbox") {
          const amount = shareOf(await services.prices.of("faucet", "faucet"), "service-relayed", "send");
          resources.push({
            resource: `${base}/faucet/bkn`,
            method: "POST",
            operation: "faucet",
            executionMode: "service-relayed",
            step: "send",
            accepts: [x402.requirements({ subject: "", routeKey: "POST /faucet/bkn", amount, resourceUrl: `${base}/faucet/bkn`, description: "BKN faucet" })],
          });
        }
        return { x402Version: 2, enabled: true, network: x402.network, asset: x402.asset, payTo: x402.payTo, resources };
      },
    }),
    defineRoute({
      method: "post",
      path: "/faucet/bkn",
      summary: "Sandbox: 100 BKN to a recipient (Idempotency-Key header; an API key's 10 claims, or 0.01 USDC via x402)",
      tags: ["x402"],
      access: ACCESS.faucet,
      response: {
        200: { description: "The claim was confirmed (status confirmed), or failed (status failed; an x402 payment was released)", schema: FaucetClaim },
        202: { description: "Submitted, not yet confirmed", schema: FaucetClaim },
      },
      rateLimited: true,
      body: z.looseObject({ recipientAddress: address.refine((a) => !/^0x0{40}$/i.test(a), "must not be the zero address") }),
      handler: async ({ req, body, caller }) => claimFaucet(req, caller, body.recipientAddress),
    }),
  ];
}
