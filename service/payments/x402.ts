import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { isChainUnavailable } from "../chains/rpc-errors";
import { checksumAddress } from "../crypto/checksum-address";
import type { Logger } from "../logger";
import {
  PaymentConflict,
  PaymentShortfall,
  type NewPayment,
  type PaymentRecord,
  type PaymentStore,
} from "../store/payments";
import { acceptedMismatch } from "./accepted";
import { encodeCall } from "../chains/abi-words";
import { usdcInterface } from "../chains/contracts";
import { displayPrice } from "./pricing";
import type { Config } from "../config";
import { AlreadyPaid, PaymentNotSettled, PaymentRequired, X402Unavailable } from "./payment-errors";
import { x402Http } from "./x402-modules";
import type { PaymentTerms } from "./payment-terms";
import { SETTLE_MARGIN_S, type PaymentSettler } from "./settler";

/** What the x402 gate uses: the payments it reserves, the configuration. */
export type X402Deps = { payments: PaymentStore; config: Config };

/** What callers of the gate hold: the configuration, and the gate when x402 is on. */
export type X402Services = { config: Config; x402?: X402 };

/**
 * An authorization must stay valid at least this long when it is accepted, and longer where its settlement needs it:
 * the settlement must be sent, mined and confirmed before validBefore (validityNeeded).
 */
const MIN_VALIDITY_S = 30;
/** Until the payment chain's block interval has been seen, a block is taken to last this long. */
const ASSUMED_BLOCK_S = 2;

export const X402_DISABLED = "API key is required. x402 payment is not enabled.";
export const X402_DISABLED_ON_CHAIN = "API key is required for this endpoint on the requested chain.";
/** Word for word as clients already match on it. */
export const RELAYED_NEEDS_X402 = "relayed execution requires x402 payment; API keys are not accepted";

/** A check of the paying wallet, run after the payment header is decoded and before it is verified or reserved. */
export type PayerCheck = (payer: string) => void | Promise<void>;

export interface Charge {
  /** What is being paid for; one payment per subject (e.g. "send:<txId>"). */
  subject: string;
  /** "POST /send-transactions" … (extra.routeKey). */
  routeKey: string;
  amount: bigint;
  resourceUrl: string;
  description: string;
  txId?: string;
}

/**
 * The x402 gate, free of HTTP: quotes (PaymentRequirements), payments verified by the facilitator and reserved from
 * the payment header's value, settled before a paid answer leaves, released. What happens to a reserved payment
 * afterwards is the settler's (payments/settler.ts) and, for a batch's payments, the runner's settlement port
 * (payments/batch-settlement.ts). The http layer reads and writes the x402 headers (http/x402-headers.ts) and turns
 * the refusals (payments/payment-errors.ts) into answers (http/error-mapping.ts).
 */
export class X402 {
  constructor(
    private readonly services: X402Deps,
    private readonly terms: PaymentTerms,
    private readonly settler: PaymentSettler,
    private readonly log: Logger,
  ) {}

  get asset(): string {
    return this.terms.asset;
  }

  get payTo(): string {
    return this.terms.payTo;
  }

  /** Settlements this process failed, by whose failure (metrics). */
  get failures(): { ours: number; payer: number } {
    return this.settler.failures;
  }

  /** The payment as this process just settled it (once), else as stored. */
  settledOrStored(paymentId: string): Promise<PaymentRecord | undefined> {
    return this.settler.settledOrStored(paymentId);
  }

  /** Releases a reserved payment: nothing is charged. */
  release(paymentId: string, reason: string): Promise<void> {
    return this.settler.release(paymentId, reason);
  }

  get network(): string {
    return `eip155:${this.terms.chain.chainId}`;
  }

  requirements(charge: Charge): PaymentRequirements {
    return {
      scheme: "exact",
      network: this.network as PaymentRequirements["network"],
      asset: this.asset,
      amount: charge.amount.toString(),
      payTo: this.payTo,
      maxTimeoutSeconds: this.services.config.X402_MAX_TIMEOUT_SECONDS,
      extra: {
        name: this.terms.domain.name,
        version: this.terms.domain.version,
        tokenSymbol: "USDC",
        displayPrice: displayPrice(charge.amount),
        assetTransferMethod: "eip3009",
        routeKey: charge.routeKey,
        paymentChainId: String(this.terms.chain.chainId),
      },
    };
  }

  /** The refusal of an unpaid or wrongly paid call: the quote to pay (PAYMENT-REQUIRED), a readable reason. */
  paymentRequired(
    charge: Charge,
    reason?: string,
    details: Record<string, unknown> = {},
    verbatim = false,
  ): PaymentRequired {
    const quote = {
      x402Version: 2,
      ...(reason ? { error: reason } : {}),
      resource: { url: charge.resourceUrl, description: charge.description, mimeType: "application/json" },
      accepts: [this.requirements(charge)],
    };
    const message = reason ? (verbatim ? reason : `Payment Required: ${reason}`) : "Payment Required";
    return new PaymentRequired(message, quote, {
      price: displayPrice(charge.amount),
      network: this.network,
      ...details,
    });
  }

  /**
   * Verifies a payment for `charge` (`paymentHeader`: the X-PAYMENT or PAYMENT-SIGNATURE value, as sent) and reserves it. Throws a 402 (with a fresh quote) when there is no
   * payment or it does not pay exactly this charge: wrong chain, asset, recipient or amount, bad signature, expired,
   * insufficient balance, or an authorization already used.
   */
  async reserve(paymentHeader: string | undefined, charge: Charge, checkPayer?: PayerCheck): Promise<PaymentRecord> {
    const header = paymentHeader?.trim();
    if (!header) throw this.paymentRequired(charge);
    let payload: PaymentPayload;
    try {
      payload = x402Http().decodePaymentSignatureHeader(header);
    } catch {
      throw this.paymentRequired(charge, "invalid payment header: not base64-encoded x402 JSON");
    }
    const required = this.requirements(charge);
    const mismatch = acceptedMismatch(payload, required);
    if (mismatch) throw this.paymentRequired(charge, mismatch);
    const authorization = (payload.payload as { authorization?: Record<string, string> })?.authorization;
    if (!authorization?.from || !authorization.nonce)
      throw this.paymentRequired(charge, "payment payload has no EIP-3009 authorization");
    if (!/^0x[0-9a-fA-F]{40}$/.test(String(authorization.from)))
      throw this.paymentRequired(charge, "authorization.from is not an address");
    // A chain that could not be asked is a 503 (nothing held, try again), never a refused payment.
    const verification = await this.terms.facilitator.verify(payload, required).catch((error: Error) => {
      if (isChainUnavailable(error)) throw error;
      return { isValid: false, invalidReason: error.message };
    });
    if (!verification.isValid) {
      throw this.paymentRequired(
        charge,
        `Payment verification failed: ${verification.invalidReason ?? "invalid"}`,
        {
          invalidReason: verification.invalidReason,
        },
        true,
      );
    }
    const validBefore = Number(authorization.validBefore ?? 0);
    this.assertLastsLongEnough(charge, validBefore);
    // Refusals that depend on who pays (a getter of someone else's agent, …) come once the signature proved the payer,
    // before anything is held: a payload naming any `from` learns nothing of whom a record belongs to.
    await checkPayer?.(checksumAddress(String(authorization.from).toLowerCase()));
    return this.hold(charge, {
      subject: charge.subject,
      route: charge.routeKey,
      txId: charge.txId ?? null,
      network: required.network,
      asset: required.asset,
      payTo: required.payTo,
      amount: required.amount,
      payer: checksumAddress(authorization.from),
      authorizationNonce: authorization.nonce,
      validBefore,
      payload,
      requirements: required,
    });
  }

  /**
   * Records a verified payment as reserved, if the payer's balance covers it with the payer's other open payments (the
   * verification proved it covers this one alone: the balance is read only when the payer owes others, which the first
   * reservation, made without it, finds out).
   */
  private async hold(charge: Charge, record: NewPayment): Promise<PaymentRecord> {
    const { payments } = this.services;
    try {
      const payment = await payments.reserve(record).catch(async (error: unknown) => {
        // The payer owes other payments: its balance decides.
        if (error instanceof PaymentShortfall && error.balance === undefined)
          return payments.reserve(record, await this.balanceOf(record.payer));
        throw error;
      });
      this.log.info({ paymentId: payment.id, subject: charge.subject, amount: record.amount }, "payment reserved");
      return payment;
    } catch (error) {
      if (error instanceof PaymentConflict) {
        throw error.reason === "subject_paid"
          ? new AlreadyPaid(charge.subject)
          : this.paymentRequired(charge, "payment authorization was already used");
      }
      if (error instanceof PaymentShortfall) throw this.shortfall(charge, record.payer, error);
      throw error;
    }
  }

  /**
   * How long an authorization must stay valid when it is accepted: its settlement is gathered, sent, mined and
   * confirmed before validBefore (blocks of the payment chain as observed, ASSUMED_BLOCK_S until one was seen).
   */
  validityNeeded(): number {
    const chain = this.terms.chain;
    const blockSeconds = Math.max(1, (chain.blocks.intervalMs ?? ASSUMED_BLOCK_S * 1000) / 1000);
    const settlement =
      SETTLE_MARGIN_S + this.services.config.X402_SETTLEMENT_BATCH_MS / 1000 + (chain.confirmations + 2) * blockSeconds;
    return Math.max(MIN_VALIDITY_S, Math.ceil(settlement));
  }

  /** A 402 for an authorization that expires before its settlement could be confirmed, naming the validBefore it needs. */
  private assertLastsLongEnough(charge: Charge, validBefore: number): void {
    const needed = this.validityNeeded();
    const now = Math.floor(Date.now() / 1000);
    if (validBefore >= now + needed) return;
    const requiredValidBefore = now + needed;
    throw this.paymentRequired(
      charge,
      `the authorization expires too soon: validBefore ${validBefore} leaves ${Math.max(0, validBefore - now)} s, and this payment needs ${needed} s to be settled and confirmed: sign it with validBefore ≥ ${requiredValidBefore}`,
      { validBefore, requiredValidBefore },
    );
  }

  /** The payer's balance of the payment asset, on the pending block. */
  private async balanceOf(payer: string): Promise<bigint> {
    const data = encodeCall(BALANCE_OF, [{ address: payer }]);
    return BigInt(
      await this.terms.chain.provider.send("eth_call", [{ to: this.asset.toLowerCase(), data }, "pending"]),
    );
  }

  /** The 402 of a payment the payer's balance does not cover with its other open payments. */
  private shortfall(charge: Charge, payer: string, error: PaymentShortfall): PaymentRequired {
    const balance = error.balance ?? 0n;
    const short = error.open + charge.amount - balance;
    return this.paymentRequired(
      charge,
      `the payer's balance (${displayPrice(balance)}) does not cover this payment (${displayPrice(charge.amount)}) and its other payments not settled yet (${displayPrice(error.open)}): ${displayPrice(short)} short`,
      { payer, balance: balance.toString(), unsettled: error.open.toString(), shortfall: short.toString() },
    );
  }

  /**
   * Settles the payment of an answer that is held back until it is paid (a paid read, a prepare's share), as the x402
   * reference middleware does: the settlement, or a 402 with the reason when the payer's authorization could not be
   * used. A failure of ours is tried again until SEND_WAIT_MS; then the answer is a 503 and nothing is delivered (the
   * payment is released unless its settlement transaction is already on its way, which then decides).
   */
  async settleBeforeAnswer(reserved: PaymentRecord, charge: Charge): Promise<SettleResponse> {
    const deadline = Date.now() + this.services.config.SEND_WAIT_MS;
    let payment = reserved;
    for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
      const outcome = await this.settler.settleOutcome(payment);
      if (outcome.kind === "settled") return outcome.settlement;
      if (outcome.kind === "released") throw this.paymentRequired(charge, outcome.reason);
      if (Date.now() + pause >= deadline || this.settler.stopping) {
        await this.settler.release(payment.id, `not settled in time: ${outcome.reason}`);
        const inFlight = (await this.services.payments.get(payment.id))?.status === "settling";
        if (inFlight)
          this.log.error(
            { paymentId: payment.id, reason: outcome.reason },
            "a paid answer was withheld while its settlement is on its way; it settles or is released by its fate on chain",
          );
        throw new PaymentNotSettled(
          `the payment could not be settled now (${outcome.reason}); nothing was delivered${inFlight ? "; its settlement transaction is on its way and decides whether it is charged" : " and nothing was charged"}: try again`,
          payment.id,
          inFlight,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      payment = (await this.services.payments.get(payment.id)) ?? payment;
    }
  }
}

/** balanceOf(address) of the payment asset. */
const BALANCE_OF = usdcInterface.getFunction("balanceOf").selector;

/** The gate, unless x402 cannot be used for `chainId` (disabled on the deployment, or for that chain): a 401 naming what to use instead. */
export function assertX402Available(services: X402Services, chainId: number): X402 {
  if (!services.x402) throw new X402Unavailable(X402_DISABLED);
  if (services.config.x402DisabledChains.has(chainId)) throw new X402Unavailable(X402_DISABLED_ON_CHAIN, chainId);
  return services.x402;
}
