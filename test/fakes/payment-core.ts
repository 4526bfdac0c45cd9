import { randomBytes, randomUUID } from "node:crypto";
import type { Chain } from "../../service/chains/registry";
import { createLogger } from "../../service/logger";
import type { Batch } from "../../service/model/batch";
import { BatchSettlement } from "../../service/payments/batch-settlement";
import type { PaymentTerms } from "../../service/payments/payment-terms";
import { PaymentRefunder } from "../../service/payments/refunds";
import { PaymentSettler } from "../../service/payments/settler";
import type { NewPayment, PaymentRecord } from "../../service/store/payments";
import { FakeFacilitator } from "./facilitator";
import { FakePaymentStores } from "./payment-stores";

export const PAYMENT_CHAIN_ID = 84532;
export const USDC = "0x" + "a0".repeat(20);
export const PAY_TO = "0x" + "b0".repeat(20);

/**
 * The payment chain as the payment core's unit tests give it: its id, confirmations and block interval, and no
 * provider. What these tests drive never asks the chain (payloads carry no signature, so no transfer is simulated;
 * no payer owes two payments, so no balance is read); a path that did would fail on the missing provider.
 */
export function paymentChainWithoutNode(): Chain {
  return { chainId: PAYMENT_CHAIN_ID, confirmations: 1, blocks: { intervalMs: 2_000 } } as unknown as Chain;
}

/**
 * The payment core (payments/settler.ts, batch-settlement.ts, refunds.ts) on in-memory stores and a scripted
 * facilitator: no database, no chain, no service.
 */
export function fakePaymentCore() {
  const stores = new FakePaymentStores();
  const facilitator = new FakeFacilitator(stores.payments);
  const batches = new Map<string, Batch>();
  const terms: PaymentTerms = {
    chain: paymentChainWithoutNode(),
    facilitator,
    asset: USDC,
    payTo: PAY_TO,
    domain: { name: "USDC", version: "2" },
  };
  const log = createLogger("silent");
  const settler = new PaymentSettler(
    { batches: { get: (txId: string) => Promise.resolve(batches.get(txId)) }, payments: stores.payments },
    terms,
    log,
  );
  const refunder = new PaymentRefunder({ paymentRefunds: stores.refunds }, undefined, log);
  const port = new BatchSettlement({ payments: stores.payments }, terms, settler, log, refunder);

  /** A batch paid with x402 (no key), in `status`, of one transaction. */
  const batch = (status: Batch["status"] = "sending", over: Partial<Batch> = {}): Batch => {
    const b: Batch = {
      txId: randomBytes(16).toString("hex"),
      chainId: PAYMENT_CHAIN_ID,
      method: "whitelist",
      executionMode: "client-signed",
      signer: "0x" + "c0".repeat(20),
      apiKeyId: null,
      status,
      body: {},
      plan: {},
      info: {},
      failedIndex: null,
      error: null,
      outcome: null,
      createdAt: new Date().toISOString(),
      transactions: [],
      ...over,
    };
    batches.set(b.txId, b);
    stores.batches.set(b.txId, b.status);
    return b;
  };

  /**
   * A verified payment reserved for `subject` (a payer of its own unless given), valid for `validForS` seconds;
   * `payload`: the payer's signed x402 payload (one without a signature can be neither simulated nor carried).
   */
  const reserve = (
    txId: string | null,
    options: { subject?: string; payer?: string; validForS?: number; payload?: NewPayment["payload"] } = {},
  ): Promise<PaymentRecord> => {
    const payment: NewPayment = {
      subject: options.subject ?? `send:${txId ?? randomUUID()}`,
      route: "POST /send-transactions",
      txId,
      network: `eip155:${PAYMENT_CHAIN_ID}`,
      asset: USDC,
      payTo: PAY_TO,
      amount: "10000",
      payer: options.payer ?? "0x" + randomBytes(20).toString("hex"),
      authorizationNonce: "0x" + randomBytes(32).toString("hex"),
      validBefore: Math.floor(Date.now() / 1000) + (options.validForS ?? 300),
      payload: options.payload ?? { x402Version: 2, payload: { authorization: {} } },
      requirements: {},
    };
    return stores.payments.reserve(payment);
  };

  /** The batch ended rejected (as the runner's end writes it before its payments hear of it). */
  const rejected = (b: Batch) => {
    b.status = "rejected";
    stores.batches.set(b.txId, "rejected");
  };

  const statusOf = async (id: string) => (await stores.payments.get(id))?.status;

  return { stores, facilitator, terms, log, settler, refunder, port, batch, reserve, rejected, statusOf };
}
