import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import { resourceUrl, type Caller } from "../auth/gate";
import { shareOf } from "../auth/access-rules";
import type { Chain } from "../chains/registry";
import { newTxId } from "../engine/prepare";
import { ApiError, badRequest, conflict, notFound, outOfCredits } from "../errors";
import { paymentHeaderOf, paymentResponseHeaders } from "../http/x402-headers";
import { findMethod } from "../methods";
import { prepareBatch } from "../methods/prepare";
import type { Batch } from "../model/batch";
import { FAUCET_CREDIT_METHOD } from "../model/plans";
import { fromUnits } from "../model/units";
import { assertX402Available } from "../payments/x402";
import { paymentView, refundsOf } from "../reads/transaction-status";
import type { PaymentRecord } from "../store/payments";
import type { RequestFacts } from "../wire/request";
import type { FaucetClaim } from "../wire/responses";
import type { Services } from "./services";

/** The sandbox faucet runs on the Sepolia chain (where BKN lives). */
export const FAUCET_CHAIN_ID = 11155111;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * A claim of 100 BKN for `recipient` (sandbox only), once per Idempotency-Key: a key pays with its faucet credits, a
 * caller without one with x402. The claim is a relayed batch; the answer waits up to SEND_WAIT_MS for it.
 */
export async function claimFaucet(services: Services, req: RequestFacts, caller: Caller, recipient: string) {
  if (services.config.ENVIRONMENT !== "sandbox") throw notFound("The BKN faucet exists only in the sandbox");
  const idempotencyKey = (req.header("idempotency-key") ?? "").trim();
  if (!UUID_V4.test(idempotencyKey))
    throw badRequest("Idempotency-Key header is required (a UUID v4)", { header: "Idempotency-Key" });
  const chain = services.chains.resolve(FAUCET_CHAIN_ID);

  const existing = await services.faucetClaims.byIdempotencyKey(idempotencyKey);
  if (existing) {
    if (existing.recipient.toLowerCase() !== recipient.toLowerCase()) {
      throw conflict("This Idempotency-Key was used for another recipient", {
        header: "Idempotency-Key",
        recipientAddress: existing.recipient,
      });
    }
    const [payment] = await services.payments.forBatch(existing.txId);
    return faucetResponse(services, (await services.batches.get(existing.txId))!, existing, payment);
  }

  // A key pays with its own faucet balance (and skips x402 entirely); without one, x402 pays.
  const { apiKey } = caller;
  const x402 = apiKey ? undefined : assertX402Available(services, chain.chainId);
  await assertFaucetReady(chain, recipient);

  const claim = { id: randomUUID(), recipient, txId: newTxId(), idempotencyKey, apiKeyId: apiKey?.id ?? null };
  const payment = x402
    ? await x402.reserve(paymentHeaderOf(req), {
        subject: `faucet:${idempotencyKey}`,
        routeKey: "POST /faucet/bkn",
        amount: shareOf(await services.prices.of("faucet", "faucet"), "service-relayed", "send"),
        resourceUrl: resourceUrl(services, req),
        description: "BKN faucet claim (100 BKN)",
        txId: claim.txId,
      })
    : undefined;
  let sent: Batch | undefined;
  try {
    await prepareBatch(services, {
      method: findMethod("faucetBkn")!,
      body: { chainId: FAUCET_CHAIN_ID, recipientAddress: recipient },
      executionMode: "service-relayed",
      txId: claim.txId,
    });
    sent = await services.db.transaction(async (q) => {
      if (apiKey && !(await services.credits.spend(q, apiKey.id, FAUCET_CREDIT_METHOD, claim.txId)).ok) {
        throw outOfCredits(FAUCET_CREDIT_METHOD);
      }
      await services.faucetClaims.insert(q, claim);
      return (await services.batches.markSending(q, claim.txId, [])).sent;
    });
  } catch (error) {
    if (payment) await x402!.release(payment.id, `faucet claim refused: ${(error as Error).message}`);
    if (/faucet_claims_idempotency_key|duplicate key/i.test((error as Error).message))
      throw conflict("This Idempotency-Key is being used by a concurrent claim");
    throw error;
  }
  void services.runner.run(claim.txId, sent);
  await services.runner.waitFor(claim.txId, services.config.SEND_WAIT_MS);
  const settled = payment ? await services.payments.get(payment.id) : undefined;
  return faucetResponse(services, (await services.batches.get(claim.txId))!, claim, settled);
}

/** Refuses (429 with Retry-After) a recipient still in the faucet's cooldown, as the chain's latest block sees it. */
async function assertFaucetReady(chain: Chain, recipient: string): Promise<void> {
  const bkn = BKN__factory.connect(chain.deployment.contracts.BKN, chain.provider);
  const [availableAt, block] = await Promise.all([bkn.faucetAvailableAt(recipient), chain.provider.getBlock("latest")]);
  if (Number(availableAt) <= block!.timestamp) return;
  const cooldownEndsAt = new Date(Number(availableAt) * 1000).toISOString();
  throw new ApiError(
    "FAUCET_COOLDOWN",
    `${recipient} claimed recently; it may claim again at ${cooldownEndsAt}`,
    { recipientAddress: recipient, cooldownEndsAt },
    {
      "Retry-After": String(Number(availableAt) - block!.timestamp),
    },
  );
}

/** The claim as the API answers it: 202 while its transaction is on its way, else 200 (confirmed or failed). */
async function faucetResponse(
  services: Services,
  batch: Batch,
  claim: { id: string; recipient: string },
  payment?: PaymentRecord,
) {
  const chain = services.chains.find(batch.chainId)!;
  const tx = batch.transactions[0];
  const outcome = batch.outcome as Record<string, string> | null;
  const status =
    batch.status === "success" ? "confirmed" : batch.status === "rejected" ? "failed" : ("submitted" as const);
  const amountRaw =
    outcome?.amountRaw ??
    (await BKN__factory.connect(chain.deployment.contracts.BKN, chain.provider).FAUCET_AMOUNT()).toString();
  return {
    status: status === "submitted" ? 202 : 200,
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
      ...(payment
        ? { payment: paymentView(payment, (await refundsOf(services, batch, [payment]))?.get(payment.id)) }
        : {}),
    } satisfies z.infer<typeof FaucetClaim>,
    headers: payment?.status === "settled" ? paymentResponseHeaders(payment.settlement) : {},
  };
}
