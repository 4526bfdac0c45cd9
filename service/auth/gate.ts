import { randomUUID } from "node:crypto";
import { missingKeyError, optionalApiKey } from "./api-key";
import type { Batch } from "../model/batch";
import { badRequest, forbidden } from "../errors";
import type { ExecutionMode } from "../wire/fields";
import type { MethodDefinition } from "../methods/types";
import { assertX402Available, RELAYED_NEEDS_X402, type Charge, type PayerCheck, type X402 } from "../payments/x402";
import type { PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { ApiKeyRecord } from "../store/api-keys";
import type { PaymentRecord } from "../store/payments";
import { shareOf, type AccessRule } from "./access-rules";
import type { KeyServices } from "./api-key";
import type { X402Services } from "../payments/x402";
import type { PriceList } from "../payments/pricing";
import type { RequestFacts, RequestHeaders } from "../wire/request";

/** What the access gate uses: who may call, who pays. */
export type GateServices = KeyServices & X402Services & { prices: PriceList };

/**
 * The one place that decides who may call and who pays: API keys per the rule of a route or method, x402 payments
 * (quote, reserve, settle, release) for the calls made without one. Routes and the write flow ask, handing over the
 * payment header's value (read by http/x402-headers.ts only); nobody else reads a key.
 */

export interface Caller {
  apiKey?: ApiKeyRecord;
}

/** The credential a rule asks for, checked before anything else: a present but invalid key is a 401 everywhere. */
export async function identify(services: GateServices, req: RequestHeaders, rule: AccessRule): Promise<Caller> {
  if (rule.key === "none") return {};
  return requireKeyOf({ apiKey: await optionalApiKey(services, req) }, rule);
}

/** The caller, unless `rule` needs a key it did not send. */
export function requireKeyOf(caller: Caller, rule: AccessRule): Caller {
  if (rule.key === "required" && !caller.apiKey) throw missingKeyError(rule.missingKey ?? "endpoint");
  return caller;
}

/** The URL a client called, for x402 resource descriptions. */
export function resourceUrl(services: GateServices, req: RequestFacts, path?: string): string {
  const base = services.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.header("host")}`;
  return `${base.replace(/\/$/, "")}${path ?? req.originalUrl.split("?")[0]}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Reads and other one-shot calls paid per call (agent getters, RAMS reads, …)

/**
 * A paid call's payment, taken by the handler once its own checks passed, settled by the router after the handler
 * succeeded, released when it failed. One per request.
 */
export class CallPayment {
  private payment?: PaymentRecord;

  constructor(
    private readonly services: GateServices,
    private readonly req: RequestFacts,
    private readonly rule: AccessRule,
    readonly caller: Caller,
    /** The payment header's value, as the client sent it. */
    private readonly paymentHeader: string | undefined,
  ) {}

  /**
   * Without a key: a 402 quote, or the verified payment reserved. `chainId` is the chain the call acts on (x402 may be
   * disabled for it); `owner`, for rules where the payer must own what is read.
   */
  async take(options: {
    operation: string;
    chainId: number;
    description: string;
    owner?: string;
    ownerLabel?: string;
  }): Promise<void> {
    if (this.caller.apiKey || this.rule.key !== "optional" || !this.rule.price) return;
    const x402 = assertX402Available(this.services, options.chainId);
    const amount = await this.services.prices.of(options.operation, this.rule.price);
    const charge: Charge = {
      subject: `call:${randomUUID()}`,
      routeKey: `${this.req.method} ${this.req.path}`,
      amount,
      resourceUrl: resourceUrl(this.services, this.req),
      description: options.description,
    };
    const owner = options.owner;
    const check: PayerCheck | undefined =
      this.rule.payerMustOwn && owner
        ? (payer) => {
            // The owner is never named: the refusal says only that the payer (proved by its signature) is not it.
            if (payer.toLowerCase() !== owner.toLowerCase()) {
              throw forbidden(
                `The paying wallet ${payer} is not the owner of ${options.ownerLabel ?? "this record"}; only the owner may pay to read it`,
                { payer },
              );
            }
          }
        : undefined;
    this.payment = await x402.reserve(this.paymentHeader, charge, check);
    this.charge = charge;
  }

  private charge?: Charge;

  /**
   * After the handler succeeded, before its answer leaves: the settlement (for PAYMENT-RESPONSE); a payment that could
   * not be settled withholds the answer (a 402 with the reason, or a 503 for a failure of the service's).
   */
  async settle(): Promise<SettleResponse | undefined> {
    if (!this.payment || !this.charge) return undefined;
    return this.services.x402!.settleBeforeAnswer(this.payment, this.charge);
  }

  async release(reason: string): Promise<void> {
    if (this.payment) await this.services.x402!.release(this.payment.id, reason);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Prepare

export interface PrepareAccess extends Caller {
  /** The payment preview and the prepare share, when x402 pays. */
  x402?: X402;
  price?: bigint;
}

/**
 * Who pays for a prepare, decided before the method plans: a present key skips x402 and
 * cannot be relayed; without a key, x402 must be available on the chain and the method's price applies. Nothing is
 * paid here.
 */
export async function admitPrepare(
  services: GateServices,
  caller: Caller,
  method: MethodDefinition,
  mode: ExecutionMode,
  chainId: number,
): Promise<PrepareAccess> {
  const relayed = mode === "service-relayed";
  if (method.access.key === "required") {
    if (relayed)
      throw badRequest(`${method.name} cannot be service-relayed: the token holder, investor or tokenizer signs it`, {
        field: "executionMode",
      });
    return caller;
  }
  // A method that is never relayed says so whatever the credential (a key would otherwise hear "pay with x402").
  if (relayed && !method.relayable)
    throw badRequest(`${method.name} cannot be service-relayed: its signer must be the wallet that holds the rights`, {
      field: "executionMode",
    });
  if (caller.apiKey) {
    if (relayed) throw badRequest(RELAYED_NEEDS_X402, { field: "executionMode" });
    return caller;
  }
  const x402 = assertX402Available(services, chainId);
  return { x402, price: await services.prices.of(method.name, method.access.price ?? "write") };
}

/**
 * Runs `store` (which persists the prepared batch) under the prepare's payment: free with a key or when relayed;
 * otherwise the prepare share is reserved first (402 without a payment header), settled once the batch is stored, and
 * released if storing fails. Returns the response additions: the send quote and the settlement (PAYMENT-RESPONSE).
 * `paymentHeader`: the payment header's value, as the client sent it.
 */
export async function chargePrepare<T extends { txId: string }>(
  services: GateServices,
  req: RequestFacts,
  paymentHeader: string | undefined,
  access: PrepareAccess,
  input: { method: MethodDefinition; mode: ExecutionMode; txId: string },
  store: () => Promise<T>,
): Promise<{ body: T & { x402Requirements?: PaymentRequirements }; settlement?: SettleResponse }> {
  const { x402, price } = access;
  if (!x402 || price === undefined) return { body: await store() };
  const { method, mode, txId } = input;
  const sendQuote = x402.requirements({
    subject: `send:${txId}`,
    routeKey: "POST /send-transactions",
    amount: shareOf(price, mode, "send"),
    resourceUrl: resourceUrl(services, req, "/send-transactions"),
    description: `${method.name}: send`,
    txId,
  });
  const prepareShare = shareOf(price, mode, "prepare");
  if (prepareShare === 0n) return { body: { ...(await store()), x402Requirements: sendQuote } };
  const charge: Charge = {
    subject: `prepare:${txId}`,
    routeKey: "POST /prepare-transactions",
    amount: prepareShare,
    resourceUrl: resourceUrl(services, req),
    description: `${method.name}: prepare`,
    txId,
  };
  const payment = await x402.reserve(paymentHeader, charge);
  let stored: T;
  try {
    stored = await store();
  } catch (error) {
    await x402.release(payment.id, `prepare failed: ${(error as Error).message}`);
    throw error;
  }
  // The prepared transactions are answered only once their share is paid (else a 402 or 503 withholds them).
  const settlement: SettleResponse = await x402.settleBeforeAnswer(payment, charge);
  return { body: { ...stored, x402Requirements: sendQuote }, settlement };
}

// ---------------------------------------------------------------------------------------------------------------
// Send

export interface SendAccess extends Caller {
  /** The key whose credit the send spends (metered methods). */
  creditKeyId?: string;
  /** x402 pays the send share. */
  x402?: X402;
}

/**
 * Credentials of a send: a relayed batch refuses keys (rule 2) and is paid with x402; a batch prepared under a key
 * needs that key; a batch prepared without one is paid with x402 unless a key is presented (rule 1).
 */
export function admitSend(
  services: GateServices,
  caller: Caller,
  batch: Batch,
  method: MethodDefinition | undefined,
): SendAccess {
  const presented = caller.apiKey;
  if (batch.executionMode === "service-relayed") {
    if (presented) throw badRequest(RELAYED_NEEDS_X402, { header: "x-api-key" });
    return { x402: assertX402Available(services, batch.chainId) };
  }
  if (batch.apiKeyId) {
    if (!presented) throw missingKeyError("method");
    if (presented.id !== batch.apiKeyId)
      throw forbidden("This txId was prepared under another API key", { txId: batch.txId });
    return { apiKey: presented, creditKeyId: method?.metered ? presented.id : undefined };
  }
  if (presented) return { apiKey: presented };
  if (!method || method.access.key !== "optional") return {};
  return { x402: assertX402Available(services, batch.chainId) };
}

/** The send share of an x402-paid batch, reserved (402 without a payment header); `checkPayer` refuses a wrong payer first. */
export async function chargeSend(
  services: GateServices,
  req: RequestFacts,
  paymentHeader: string | undefined,
  access: SendAccess,
  batch: Batch,
  method: MethodDefinition,
  checkPayer?: PayerCheck,
): Promise<PaymentRecord | undefined> {
  if (!access.x402) return undefined;
  const price = await services.prices.of(batch.method, method.access.price ?? "write");
  return access.x402.reserve(
    paymentHeader,
    {
      subject: `send:${batch.txId}`,
      routeKey: "POST /send-transactions",
      amount: shareOf(price, batch.executionMode, "send"),
      resourceUrl: resourceUrl(services, req),
      description: `${batch.method}: send`,
      txId: batch.txId,
    },
    checkPayer,
  );
}
