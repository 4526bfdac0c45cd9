import type { Request } from "express";
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { getAddress, ZeroAddress, ZeroHash, type TransactionReceipt } from "ethers";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import type { Chain } from "../chains/registry";
import { isChainUnavailable } from "../chains/rpc-errors";
import { checksumAddress } from "../crypto/checksum-address";
import { ApiError, unauthorized } from "../errors";
import type { Logger } from "../logger";
import { PaymentConflict, PaymentShortfall, type PaymentRecord, type Payments } from "../store/payments";
import { TtlCache } from "../cache/ttl-cache";
import { acceptedMismatch } from "./accepted";
import { paidIn, settledBy, transferWithAuthorizationCalldata } from "./eip3009";
import { encodeCall } from "../chains/abi-words";
import { usdcInterface } from "../chains/contracts";
import { displayPrice } from "./pricing";
import { SettlementError, type PaymentFacilitator } from "./facilitator";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { OperationSettlement } from "../engine/relayer";
import type { Batch } from "../model/batch";
import type { Queryable } from "../store/db";

/** What the x402 gate uses. */
export type X402Services = Pick<Stores, "batches" | "payments" | "walletNonces"> & { chains: ChainRegistry; config: Config; logger: Logger; x402?: X402 };

/** A settlement is not started this close to its authorization's expiry (the facilitator needs validBefore ≥ now + 6 s). */
const SETTLE_MARGIN_S = 10;
/**
 * A payment is settled inside its operation's transaction only when its authorization stays valid at least this long:
 * that transaction must be mined before validBefore (else it reverts, operation included). Closer to its expiry, the
 * operation is sent alone and the payment settled after it (or released), as before.
 */
const IN_OPERATION_MARGIN_S = 60;
/**
 * An authorization must stay valid at least this long when it is accepted, and longer where its settlement needs it:
 * the settlement must be sent, mined and confirmed before validBefore (validityNeeded).
 */
const MIN_VALIDITY_S = 30;
/** Until the payment chain's block interval has been seen, a block is taken to last this long. */
const ASSUMED_BLOCK_S = 2;
/** Payments left unfinished are looked for this often, and taken up when unchanged for RECOVERY_QUIET_MS. */
const RECOVERY_MS = 30_000;
const RECOVERY_QUIET_MS = 120_000;
/** How long a payment settled here is kept for the send waiting on it (a send waits SEND_WAIT_MS at most, then reads). */
const JUST_SETTLED_MS = 30_000;

export const X402_DISABLED = "API key is required. x402 payment is not enabled.";
export const X402_DISABLED_ON_CHAIN = "API key is required for this endpoint on the requested chain.";
/** Word for word as clients already match on it. */
export const RELAYED_NEEDS_X402 = "relayed execution requires x402 payment; API keys are not accepted";

/** Headers a client may carry its payment in (docs/wire-conventions.md, Transport); Express lower-cases names. */
const PAYMENT_HEADERS = ["x-payment", "payment-signature"];

export function paymentHeaderOf(req: Request): string | undefined {
  for (const name of PAYMENT_HEADERS) {
    const value = req.header(name);
    if (value && value.trim()) return value.trim();
  }
  return undefined;
}

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
 * x402 v2 on the official packages: quotes in PAYMENT-REQUIRED, payments read from X-PAYMENT (or PAYMENT-SIGNATURE),
 * verification and settlement by a facilitator, settlement returned in PAYMENT-RESPONSE. Payments follow one
 * state machine: reserved while the operation runs, settled once it is confirmed, released (nothing charged) on a
 * revert, an error or an expired authorization.
 */
export class X402 {
  private constructor(
    private readonly services: X402Services,
    readonly paymentChain: Chain,
    private readonly facilitator: PaymentFacilitator,
    readonly asset: string,
    readonly payTo: string,
    private readonly domain: { name: string; version: string },
    private readonly log: Logger,
  ) {}

  /**
   * The x402 gate of this deployment, or undefined when X402_ENABLED=false. Refuses to start (throws) with a
   * configuration that cannot take the payments it would advertise: the payment chain not served, no settlement key
   * and no facilitator, no payee, or a payment asset without EIP-3009 or without its EIP-712 name and version.
   */
  static async create(services: X402Services, facilitator: (chain: Chain) => PaymentFacilitator): Promise<X402 | undefined> {
    const { config } = services;
    if (!config.X402_ENABLED) return undefined;
    const chainId = config.x402PaymentChainId;
    const chain = services.chains.find(chainId);
    if (!chain) {
      throw new X402ConfigError(
        `x402 takes payments on chain ${chainId}, which this ${config.ENVIRONMENT} deployment does not serve: set RPC_URL_${chainId} (and its deployment file), choose another X402_PAYMENT_CHAIN_ID, or X402_ENABLED=false`,
      );
    }
    const f = facilitator(chain);
    const payTo = config.X402_PAY_TO ?? f.settlementAddress;
    if (!payTo) throw new X402ConfigError("x402 needs a payee: set X402_PAY_TO or X402_SETTLEMENT_PRIVATE_KEY (or X402_ENABLED=false)");
    const asset = chain.deployment.contracts.USDC;
    if (!asset) throw new X402ConfigError(`x402 takes payments in USDC, and chain ${chainId}'s deployment names none`);
    const domain = await eip3009Domain(chain, asset);
    if (f.settlementAddress) {
      const pending = await chain.provider.getTransactionCount(f.settlementAddress, "pending");
      await services.walletNonces.syncFloor(chain.chainId, f.settlementAddress, pending);
    }
    return new X402(services, chain, f, getAddress(asset), getAddress(payTo), domain, services.logger.child({ component: "x402" }));
  }

  get network(): string {
    return `eip155:${this.paymentChain.chainId}`;
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
        name: this.domain.name,
        version: this.domain.version,
        tokenSymbol: "USDC",
        displayPrice: displayPrice(charge.amount),
        assetTransferMethod: "eip3009",
        routeKey: charge.routeKey,
        paymentChainId: String(this.paymentChain.chainId),
      },
    };
  }

  /** The 402 answer: the quote in PAYMENT-REQUIRED (base64 JSON), a readable reason in the body. */
  paymentRequired(charge: Charge, reason?: string, details: Record<string, unknown> = {}, verbatim = false): ApiError {
    const header = encodePaymentRequiredHeader({
      x402Version: 2,
      ...(reason ? { error: reason } : {}),
      resource: { url: charge.resourceUrl, description: charge.description, mimeType: "application/json" },
      accepts: [this.requirements(charge)],
    });
    return new ApiError(
      "PAYMENT_REQUIRED",
      reason ? (verbatim ? reason : `Payment Required: ${reason}`) : "Payment Required",
      { price: displayPrice(charge.amount), network: this.network, ...details },
      { "PAYMENT-REQUIRED": header },
    );
  }

  /**
   * Verifies the request's payment for `charge` and reserves it. Throws a 402 (with a fresh quote) when there is no
   * payment or it does not pay exactly this charge: wrong chain, asset, recipient or amount, bad signature, expired,
   * insufficient balance, or an authorization already used.
   */
  async reserve(req: Request, charge: Charge, checkPayer?: PayerCheck): Promise<PaymentRecord> {
    const header = paymentHeaderOf(req);
    if (!header) throw this.paymentRequired(charge);
    let payload: PaymentPayload;
    try {
      payload = decodePaymentSignatureHeader(header);
    } catch {
      throw this.paymentRequired(charge, "invalid payment header: not base64-encoded x402 JSON");
    }
    const required = this.requirements(charge);
    const mismatch = acceptedMismatch(payload, required);
    if (mismatch) throw this.paymentRequired(charge, mismatch);
    const authorization = (payload.payload as { authorization?: Record<string, string> })?.authorization;
    if (!authorization?.from || !authorization.nonce) throw this.paymentRequired(charge, "payment payload has no EIP-3009 authorization");
    if (!/^0x[0-9a-fA-F]{40}$/.test(String(authorization.from))) throw this.paymentRequired(charge, "authorization.from is not an address");
    // A chain that could not be asked is a 503 (nothing held, try again), never a refused payment.
    const verification = await this.facilitator.verify(payload, required).catch((error: Error) => {
      if (isChainUnavailable(error)) throw error;
      return { isValid: false, invalidReason: error.message };
    });
    if (!verification.isValid) {
      throw this.paymentRequired(charge, `Payment verification failed: ${verification.invalidReason ?? "invalid"}`, {
        invalidReason: verification.invalidReason,
      }, true);
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
   * verification proved it covers this one alone: the balance is read only when the payer owes others).
   */
  private async hold(charge: Charge, record: Parameters<Payments["reserve"]>[0]): Promise<PaymentRecord> {
    const { payments } = this.services;
    try {
      const owes = (await payments.openAmount(record.payer, record.asset)) > 0n;
      const payment = await payments.reserve(record, owes ? await this.balanceOf(record.payer) : undefined).catch(async (error: unknown) => {
        // Another of the payer's payments was taken meanwhile: its balance decides.
        if (error instanceof PaymentShortfall && error.balance === undefined) return payments.reserve(record, await this.balanceOf(record.payer));
        throw error;
      });
      this.log.info({ paymentId: payment.id, subject: charge.subject, amount: record.amount }, "payment reserved");
      return payment;
    } catch (error) {
      if (error instanceof PaymentConflict) {
        throw error.reason === "subject_paid"
          ? new ApiError("ALREADY_PAID", `${charge.subject} is already paid for`, { subject: charge.subject })
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
    const chain = this.paymentChain;
    const blockSeconds = Math.max(1, (chain.blocks.intervalMs ?? ASSUMED_BLOCK_S * 1000) / 1000);
    const settlement = SETTLE_MARGIN_S + this.services.config.X402_SETTLEMENT_BATCH_MS / 1000 + (chain.confirmations + 2) * blockSeconds;
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
    return BigInt(await this.paymentChain.provider.send("eth_call", [{ to: this.asset.toLowerCase(), data }, "pending"]));
  }

  /** The 402 of a payment the payer's balance does not cover with its other open payments. */
  private shortfall(charge: Charge, payer: string, error: PaymentShortfall): ApiError {
    const balance = error.balance ?? 0n;
    const short = error.open + charge.amount - balance;
    return this.paymentRequired(
      charge,
      `the payer's balance (${displayPrice(balance)}) does not cover this payment (${displayPrice(charge.amount)}) and its other payments not settled yet (${displayPrice(error.open)}): ${displayPrice(short)} short`,
      { payer, balance: balance.toString(), unsettled: error.open.toString(), shortfall: short.toString() },
    );
  }

  /**
   * Settles a payment in the background: settled once its settlement transaction is confirmed on the canonical chain
   * (a payment carried by its operation's transaction, once that one is: settleWithOperation). A failure of ours (the
   * settlement wallet without gas, a chain that could not be asked) keeps it owed and tries again shortly; only a
   * payment the payer made unusable (expired, moved, cancelled, spent by a sibling) is released.
   */
  async settle(paymentId: string, operationReceipt?: TransactionReceipt, known?: { payment: PaymentRecord; batch?: Batch }): Promise<SettleResponse | undefined> {
    const payment = known?.payment.id === paymentId ? known.payment : await this.services.payments.get(paymentId);
    if (!payment || payment.status === "released") return undefined;
    if (payment.status === "settled") return payment.settlement;
    if (payment.settleInOperation) {
      try {
        return await this.settleWithOperation(payment, operationReceipt, known?.batch);
      } catch (error) {
        // The chain could not be asked (or answered late): looked at again shortly, never released for it.
        this.log.warn({ paymentId, reason: (error as Error).message }, "payment settled with its operation not checked yet; trying again");
        this.retryLater(paymentId);
        return undefined;
      }
    }
    const outcome = await this.settleOutcome(payment);
    if (outcome.kind === "pending") this.retryLater(paymentId);
    return outcome.kind === "settled" ? outcome.settlement : undefined;
  }

  /**
   * One attempt to settle a payment that has a settlement of its own (not carried by its operation's transaction):
   * settled; released (the payer's authorization can no longer be used: nothing charged); or pending (a failure of
   * ours, or another settler has it: the payment stays owed and is tried again).
   */
  async settleOutcome(known: PaymentRecord): Promise<SettleOutcome> {
    const paymentId = known.id;
    const payment = known.status === "reserved" ? known : await this.services.payments.get(paymentId);
    if (!payment) return { kind: "released", reason: "no such payment" };
    if (payment.status === "released") return { kind: "released", reason: payment.releaseReason ?? "released" };
    if (payment.status === "settled") return { kind: "settled", settlement: payment.settlement };
    if (payment.settleInOperation) return { kind: "pending", reason: "settled with its operation's transaction" };
    if (payment.status === "reserved" && payment.validBefore - Math.floor(Date.now() / 1000) <= SETTLE_MARGIN_S) {
      const reason = "the authorization expired before it could be settled";
      await this.release(payment.id, reason);
      return { kind: "released", reason };
    }
    const sent = payment.status === "settling" && payment.settleTxHash;
    if (!sent && !(await this.services.payments.claimForSettlement(paymentId))) return { kind: "pending", reason: "another settler has it" };
    this.settling.add(paymentId);
    try {
      let result: SettleResponse;
      try {
        result = sent ? await this.awaitSettlement(payment) : await this.facilitator.settle(payment);
        // The library's own wait may give up in passing: a transaction on its way decides by its fate on chain.
        if (!result.success && !sent) {
          const stored = await this.services.payments.get(paymentId);
          if (stored?.settleTxHash) result = await this.awaitSettlement(stored);
        }
      } catch (error) {
        return await this.settlementFailed(paymentId, error);
      }
      if (!result.success) return await this.settlementFailed(paymentId, new SettlementError(`settlement refused: ${result.errorReason ?? "unknown"}`, true));
      // The library answers the hash it first sent; a re-priced replacement (same nonce) may be the one mined, and the
      // payment row names whichever was (promoteSettlement): that is the settlement's transaction.
      const mined = (await this.services.payments.get(paymentId))?.settleTxHash;
      if (mined && result.transaction && mined !== result.transaction.toLowerCase()) result = { ...result, transaction: mined };
      const settled = await this.services.payments.markSettled(paymentId, result);
      this.keepSettled(settled);
      this.log.info({ paymentId, transaction: result.transaction }, "payment settled");
      return { kind: "settled", settlement: settled?.settlement ?? result };
    } finally {
      this.settling.delete(paymentId);
    }
  }

  /**
   * After a failed settlement: released when the payer's authorization can no longer be used (expired, cancelled,
   * used elsewhere, a balance that moved); otherwise the failure is ours or passing (the settlement wallet without gas,
   * a refusal, a chain that could not be asked): the payment stays owed and is settled again.
   */
  private async settlementFailed(paymentId: string, error: unknown): Promise<SettleOutcome> {
    const reason = (error as Error).message;
    const usable = await this.stillUsable(paymentId, error);
    if (!usable.usable) {
      this.failures.payer++;
      this.log.warn({ paymentId, reason, why: usable.why }, "settlement failed for good: the payer's authorization can no longer be used");
      const released = `settlement failed: ${usable.why ?? reason}`;
      await this.release(paymentId, released, true);
      return { kind: "released", reason: released };
    }
    this.failures.ours++;
    if (error instanceof SettlementError && error.minedWithout) await this.services.payments.unmarkSettling(paymentId).catch(() => undefined);
    else await this.services.payments.unclaim(paymentId).catch(() => undefined);
    const noGas = /insufficient funds/i.test(reason);
    if (noGas) {
      this.log.error(
        { paymentId, wallet: this.facilitator.settlementAddress, chainId: this.paymentChain.chainId, reason },
        "the x402 settlement wallet cannot pay the settlement's gas: fund it; the payment stays owed and is settled once it can",
      );
    } else {
      this.log.warn({ paymentId, reason }, "settlement failed for a reason of ours or in passing; the payment stays owed and is tried again");
    }
    return { kind: "pending", reason };
  }

  /**
   * Whether a payment's authorization can still be settled: a settlement on its way decides by its fate on chain;
   * otherwise it must not be (nearly) expired, and its transfer must go through on the pending block.
   */
  private async stillUsable(paymentId: string, error: unknown): Promise<{ usable: boolean; why?: string }> {
    const payment = await this.services.payments.get(paymentId);
    if (!payment || payment.status === "released" || payment.status === "settled") return { usable: false };
    const minedWithout = error instanceof SettlementError && error.minedWithout;
    if (payment.settleTxHash && !minedWithout && !(error instanceof SettlementError)) return { usable: true }; // on its way
    if (payment.validBefore - Math.floor(Date.now() / 1000) <= SETTLE_MARGIN_S) return { usable: false, why: "the authorization expired before it was settled" };
    let calldata: string | undefined;
    try {
      calldata = transferWithAuthorizationCalldata(payment.payload);
    } catch {
      return { usable: false, why: "the payment's authorization cannot be opened" };
    }
    // A payment the library settles (ERC-6492): its own verdict stands.
    if (!calldata) return { usable: !(error instanceof SettlementError && error.final) };
    try {
      await this.paymentChain.provider.send("eth_call", [{ to: payment.asset, data: calldata }, "pending"]);
      return { usable: true };
    } catch (simulated) {
      if (isChainUnavailable(simulated)) return { usable: true }; // not known now: kept, asked again
      return { usable: false, why: "the payer's authorization can no longer be used (expired, cancelled, used, or the balance moved)" };
    }
  }

  /** Settlements this process failed, by whose failure (metrics). */
  readonly failures = { ours: 0, payer: 0 };
  /** Payments this process is settling now (the periodic recovery leaves them alone). */
  private readonly settling = new Set<string>();

  /** Payments this process just settled, as stored: the send that paid for one answers with it without reading it back. */
  private readonly justSettled = new TtlCache<string, PaymentRecord>(JUST_SETTLED_MS, 1_000);

  private keepSettled(payment: PaymentRecord | undefined): void {
    if (payment) this.justSettled.set(payment.id, payment);
  }

  /** The payment as this process just settled it (once), else as stored. */
  async settledOrStored(paymentId: string): Promise<PaymentRecord | undefined> {
    const kept = this.justSettled.get(paymentId);
    if (!kept) return this.services.payments.get(paymentId);
    this.justSettled.delete(paymentId);
    return kept;
  }

  /**
   * settle() for work nobody awaits (retries, recovery, a reorg): a failure (a chain or the database gone, a stop under
   * way) is logged, and the payment is taken up again by the next recovery; it never becomes an unhandled rejection.
   */
  private settleInBackground(paymentId: string): Promise<void> {
    return this.settle(paymentId).then(
      () => undefined,
      (error: Error) => this.log.warn({ paymentId, reason: error.message }, "payment not settled this time; the recovery takes it up again"),
    );
  }

  private readonly retries = new Map<string, { timer: NodeJS.Timeout; attempt: number }>();

  /** Settles again after a backoff (1 s doubling to 30 s) while this process runs; recover() covers restarts. */
  private retryLater(paymentId: string): void {
    if (this.stopped) return;
    const attempt = (this.retries.get(paymentId)?.attempt ?? 0) + 1;
    clearTimeout(this.retries.get(paymentId)?.timer);
    const timer: NodeJS.Timeout = setTimeout(() => {
      // A pending outcome schedules the next attempt (another timer); otherwise the payment ended here.
      void this.settleInBackground(paymentId).finally(() => {
        if (this.retries.get(paymentId)?.timer === timer) this.retries.delete(paymentId);
      });
    }, Math.min(30_000, 1000 * 2 ** (attempt - 1)));
    timer.unref();
    this.retries.set(paymentId, { timer, attempt });
  }

  private stopped = false;

  /** No more retries from this process (a stop); unfinished payments are recovered by the next start. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.recovery);
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * A reorg deeper than its confirmations took a settlement off the chain: the payment is settling again (the
   * transaction is sent again while its bytes are kept) until it is back on chain.
   */
  async afterDeepReorg(paymentId: string): Promise<void> {
    this.log.error({ paymentId }, "reorg deeper than the confirmations took a settlement off the chain; settling it again");
    await this.services.payments.unsettle(paymentId);
    void this.settleInBackground(paymentId);
  }

  async release(paymentId: string, reason: string, settlementFailed = false): Promise<void> {
    if (await this.services.payments.markReleased(paymentId, reason, settlementFailed)) this.log.info({ paymentId, reason }, "payment released");
  }

  /**
   * What a batch's payments need before its first broadcast (PaymentPlan). One payment may ride in the batch's only
   * transaction (`canCarry`: relayed by a key that delegates to PaidRelayDelegate): the relayer's EIP-7702 delegate
   * runs the EIP-3009 transfer and the operation atomically, so neither happens without the other. Every other payment
   * is settled first: an external facilitator (it sends its own transactions), a payment on another chain than the
   * operation, an authorization close to its expiry, a signature only the facilitator can use (ERC-6492), a batch of
   * several transactions or one the client signed. `known`: all of the batch's payments, when the caller has them.
   */
  async paymentPlan(txId: string, chainId: number, canCarry: boolean, known?: PaymentRecord[]): Promise<PaymentPlan> {
    const open = (known ?? (await this.services.payments.forBatch(txId))).filter((p) => p.status === "reserved" || (p.status === "settling" && !p.settleInOperation));
    const carried = canCarry ? this.carrierOf(open, chainId) : undefined;
    return { carried, first: open.filter((p) => p !== carried?.payment) };
  }

  /** The one reserved payment of `open` that can ride in the operation's transaction on `chainId`, if any. */
  private carrierOf(open: PaymentRecord[], chainId: number): (OperationSettlement & { payment: PaymentRecord }) | undefined {
    if (!this.facilitator.settlesInOperation || chainId !== this.paymentChain.chainId || open.length !== 1) return undefined;
    const [payment] = open;
    if (payment.status !== "reserved" || payment.validBefore - Math.floor(Date.now() / 1000) <= IN_OPERATION_MARGIN_S) return undefined;
    const calldata = transferWithAuthorizationCalldata(payment.payload);
    if (!calldata) return undefined;
    const { payments } = this.services;
    return {
      payment,
      payer: payment.payer,
      asset: payment.asset,
      calldata,
      bind: (q) => payments.bindToOperation(q, payment.id),
      setHash: (q, hash) => payments.setOperationHash(q, payment.id, hash),
    };
  }

  /**
   * The payment already bound to a relayed batch's transaction, for signing that transaction again with a fresh nonce
   * (its first nonce was used by someone else): the new bytes carry the payment as the first did.
   */
  async boundSettlement(txId: string): Promise<OperationSettlement | undefined> {
    const bound = (await this.services.payments.forBatch(txId)).find((p) => p.status === "settling" && p.settleInOperation);
    const calldata = bound && transferWithAuthorizationCalldata(bound.payload);
    if (!bound || !calldata) return undefined;
    const { payments } = this.services;
    return {
      payer: bound.payer,
      asset: bound.asset,
      calldata,
      bind: (q) => payments.stillBoundToOperation(q, bound.id),
      setHash: (q, hash) => payments.setOperationHash(q, bound.id, hash),
    };
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
      const outcome = await this.settleOutcome(payment);
      if (outcome.kind === "settled") return outcome.settlement;
      if (outcome.kind === "released") throw this.paymentRequired(charge, outcome.reason);
      if (Date.now() + pause >= deadline || this.stopped) {
        await this.release(payment.id, `not settled in time: ${outcome.reason}`);
        const inFlight = (await this.services.payments.get(payment.id))?.status === "settling";
        if (inFlight) this.log.error({ paymentId: payment.id, reason: outcome.reason }, "a paid answer was withheld while its settlement is on its way; it settles or is released by its fate on chain");
        throw new ApiError(
          "PAYMENT_NOT_SETTLED",
          `the payment could not be settled now (${outcome.reason}); nothing was delivered${inFlight ? "; its settlement transaction is on its way and decides whether it is charged" : " and nothing was charged"}: try again`,
          { paymentId: payment.id, settlementInFlight: inFlight },
          { "Retry-After": "5" },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      payment = (await this.services.payments.get(payment.id)) ?? payment;
    }
  }

  /**
   * Settles `payments` before their operation is broadcast, one after the other: paid when every one is settled;
   * refused when one was released (its authorization can no longer be used: nothing charged, nothing done); waiting
   * when one is still owed after a failure of ours (the caller tries again shortly).
   */
  async settleFirst(payments: PaymentRecord[]): Promise<PaidFirst> {
    for (const payment of payments) {
      const outcome = await this.settleOutcome(payment);
      if (outcome.kind === "released") return { kind: "refused", reason: `the payment could not be settled: ${outcome.reason}` };
      if (outcome.kind === "pending") return { kind: "waiting", reason: outcome.reason };
    }
    return { kind: "paid" };
  }

  /**
   * A payment settled inside its operation's transaction: settled once that transaction (the batch's last, whatever
   * hash its replacements gave it) is confirmed and its receipt shows the payer's authorization used; released when
   * it reverted (the payment reverted with it). Undefined while the operation is still on its way.
   */
  private async settleWithOperation(payment: PaymentRecord, known?: TransactionReceipt, ended?: Batch): Promise<SettleResponse | undefined> {
    const batch = !payment.txId ? undefined : ended?.txId === payment.txId ? ended : await this.services.batches.get(payment.txId);
    const last = batch?.transactions[batch.transactions.length - 1];
    if (!batch || !last) {
      await this.release(payment.id, "the operation never ran", true);
      return undefined;
    }
    if (batch.status === "rejected") {
      await this.release(payment.id, `the operation failed: ${batch.error ?? last.error ?? "rejected"}`, true);
      return undefined;
    }
    if (batch.status !== "success" || last.status !== "confirmed" || !last.txHash) return undefined; // the runner settles it at the end
    // The runner hands over the receipt it confirmed; after a restart or a reorg it is asked for.
    const receipt = known?.hash.toLowerCase() === last.txHash.toLowerCase() ? known : await this.paymentChain.provider.getTransactionReceipt(last.txHash);
    if (!receipt) {
      // A node behind the one that confirmed it, or a reorg (then the runner brings it back and settles again).
      this.retryLater(payment.id);
      return undefined;
    }
    if (receipt.status !== 1) {
      await this.release(payment.id, "the operation reverted (its payment with it)", true);
      return undefined;
    }
    if (!paidIn(receipt, payment)) {
      // Signed with the payment but mined without it: cannot happen with PaidRelayDelegate's code; never claim it.
      this.log.error({ paymentId: payment.id, transaction: receipt.hash }, "the operation's transaction does not show the payment's authorization used");
      await this.release(payment.id, "the operation's transaction did not settle the payment", true);
      return undefined;
    }
    const result = settledBy(receipt, payment);
    this.keepSettled(await this.services.payments.markSettled(payment.id, result, { payment, apiKeyId: batch.apiKeyId }));
    this.log.info({ paymentId: payment.id, transaction: receipt.hash }, "payment settled with its operation");
    return result;
  }

  /**
   * Inside the database transaction that ends a relayed batch successfully (`q`): settles the payments its last
   * transaction carried (`receipt`, mined with status 1 and showing each one's authorization used), so the batch's
   * success and its payment's settlement are one commit and cost no trip of their own. Answers the payments it
   * settled, to be kept for the send's answer once that transaction committed (keepSettledAfterCommit); the rest are
   * left to settleForBatch.
   */
  async settleWithinFinish(q: Queryable, batch: Batch, receipt: TransactionReceipt | undefined, payments: PaymentRecord[]): Promise<PaymentRecord[]> {
    const last = batch.transactions[batch.transactions.length - 1];
    if (!receipt || receipt.status !== 1 || !last?.txHash || receipt.hash.toLowerCase() !== last.txHash.toLowerCase()) return [];
    const settled: PaymentRecord[] = [];
    for (const payment of payments) {
      if (!payment.settleInOperation || payment.status !== "settling" || !paidIn(receipt, payment)) continue;
      settled.push(await this.services.payments.settleWithin(q, payment, settledBy(receipt, payment), batch.apiKeyId));
    }
    return settled;
  }

  /** What settleWithinFinish settled, once its transaction committed: logged, and kept for the send's answer. */
  keepSettledAfterCommit(settled: PaymentRecord[]): void {
    for (const payment of settled) {
      this.keepSettled(payment);
      this.log.info({ paymentId: payment.id, transaction: payment.settlement?.transaction }, "payment settled with its operation");
    }
  }

  /**
   * A reorg deeper than its confirmations took a batch's transaction off the chain: a payment settled in it is
   * settling again, and settled (or released) once the runner has it back on chain (settleForBatch).
   */
  async afterOperationReorg(txId: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.settleInOperation && p.status === "settled") await this.services.payments.unsettle(p.id);
    }
  }

  /**
   * Settles a confirmed batch's payments. The runner hands over what it has: its `receipts` (in order) spare a payment
   * settled in the last one a lookup, `ended` (the batch as its run just stored it) a read of the batch, and
   * `payments` (read in the transaction that ended it) a read of its payments.
   */
  async settleForBatch(txId: string, receipts?: TransactionReceipt[], ended?: Batch, payments?: PaymentRecord[]): Promise<void> {
    for (const p of payments ?? (await this.services.payments.forBatch(txId))) {
      if (p.status === "reserved" || p.status === "settling") await this.settle(p.id, receipts?.[receipts.length - 1], { payment: p, batch: ended });
    }
  }

  async releaseForBatch(txId: string, reason: string): Promise<void> {
    for (const p of await this.services.payments.forBatch(txId)) {
      if (p.status === "reserved") await this.release(p.id, reason);
      // Settled in the operation's transaction, which reverted or never reached the chain: the payment went with it.
      else if (p.status === "settling" && p.settleInOperation) await this.release(p.id, reason, true);
    }
  }

  /** The PAYMENT-RESPONSE header of a settled payment. */
  responseHeader(settlement: SettleResponse | undefined): Record<string, string> {
    return settlement ? { "PAYMENT-RESPONSE": encodePaymentResponseHeader(settlement) } : {};
  }

  /**
   * Payments nobody in this process is finishing (after a restart; and every RECOVERY_MS, for those left behind by an
   * instance that stopped, or stuck in settling): a settlement already broadcast is awaited (re-sent if the node lost
   * it), a claim never sent is settled, a payment whose operation confirmed is settled, one whose operation failed or
   * never ran is released. `quietForMs`: only payments unchanged for that long (a send in progress has just written).
   */
  async recover(quietForMs = 0): Promise<void> {
    // A settlement nonce whose transaction never reached the chain would hold every later settlement back.
    await this.facilitator.healNonces?.().catch((error: Error) => this.log.warn({ reason: error.message }, "settlement wallet nonces not checked; trying again later"));
    for (const payment of await this.services.payments.unfinished(quietForMs)) {
      if (this.stopped) return;
      if (this.settling.has(payment.id) || this.retries.has(payment.id)) continue;
      if (payment.status === "settling") {
        void this.settleInBackground(payment.id);
        continue;
      }
      const batch = payment.txId ? await this.services.batches.get(payment.txId) : undefined;
      if (!batch) await this.release(payment.id, "the operation never ran");
      else if (batch.status === "success") void this.settleInBackground(payment.id);
      else if (batch.status === "rejected") await this.release(payment.id, "the operation failed");
      else if (batch.status === "prepared" && payment.subject.startsWith("prepare:")) void this.settleInBackground(payment.id);
      else if (batch.status === "prepared") await this.release(payment.id, "the operation never ran");
    }
  }

  private recovery?: NodeJS.Timeout;

  /** Recovers payments left behind every RECOVERY_MS while the service runs (a stop ends it). */
  startRecovery(intervalMs = RECOVERY_MS): void {
    this.recovery = setInterval(() => {
      void this.recover(RECOVERY_QUIET_MS).catch((error: Error) => this.log.warn({ reason: error.message }, "payments not recovered this time; trying again"));
    }, intervalMs);
    this.recovery.unref();
  }

  /** A settlement transaction already sent (before a crash, or by the library's flow): its fate on chain. */
  private async awaitSettlement(payment: PaymentRecord): Promise<SettleResponse> {
    if (!this.facilitator.awaitSettlement) throw new SettlementError("the external facilitator keeps its own settlement transactions", false);
    return this.facilitator.awaitSettlement(payment);
  }
}

/** One attempt to settle a payment (X402.settleOutcome). */
export type SettleOutcome = { kind: "settled"; settlement: SettleResponse } | { kind: "released"; reason: string } | { kind: "pending"; reason: string };

/** A batch's payments before its first broadcast: the one its transaction carries, and those settled first. */
export interface PaymentPlan {
  carried?: OperationSettlement & { payment: PaymentRecord };
  first: PaymentRecord[];
}

/** Payments settled before their operation (X402.settleFirst). */
export type PaidFirst = { kind: "paid" } | { kind: "refused"; reason: string } | { kind: "waiting"; reason: string };

/** balanceOf(address) of the payment asset. */
const BALANCE_OF = usdcInterface.getFunction("balanceOf").selector;

export class X402ConfigError extends Error {
  override name = "X402ConfigError";
}

/**
 * The EIP-712 domain clients sign payments with is the token's own (name() and version(), e.g. Circle's "USDC" / "2").
 * A token without EIP-3009 (authorizationState) or without them cannot take x402 payments.
 */
async function eip3009Domain(chain: Chain, asset: string): Promise<{ name: string; version: string }> {
  const usdc = USDC__factory.connect(asset, chain.provider);
  const code = await chain.provider.getCode(asset);
  if (code === "0x") throw new X402ConfigError(`The payment asset ${asset} on chain ${chain.chainId} has no code`);
  try {
    await usdc.authorizationState(ZeroAddress, ZeroHash);
  } catch {
    throw new X402ConfigError(`The payment asset ${asset} on chain ${chain.chainId} does not implement EIP-3009 (authorizationState): x402 cannot take payments in it`);
  }
  try {
    const [name, version] = await Promise.all([usdc.name(), usdc.version()]);
    return { name, version };
  } catch {
    throw new X402ConfigError(`The payment asset ${asset} on chain ${chain.chainId} does not expose the EIP-712 name() and version() payments are signed with`);
  }
}

/** Throws the 401 clients expect when x402 cannot be used for `chainId` (off on the deployment, or for that chain). */
export function assertX402Available(services: X402Services, chainId: number): X402 {
  if (!services.x402) throw unauthorized(X402_DISABLED);
  if (services.config.x402DisabledChains.has(chainId)) throw unauthorized(X402_DISABLED_ON_CHAIN, { chainId });
  return services.x402;
}
