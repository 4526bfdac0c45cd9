import { Transaction, keccak256, type TransactionReceipt } from "ethers";
import type { Hex } from "viem";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import { queuesAheadOf } from "../chains/nonce-queueing";
import type { Chain } from "../chains/registry";
import { untilConfirmed } from "../chains/confirmations";
import { feeCapWei, replacementFees } from "../chains/fee-bump";
import type { PaymentRecord } from "../store/payments";
import type { ServiceSigner } from "../signers/signer";
import { SettlementError, type FacilitatorServices } from "./payment-facilitator";

/** Between blocks, a settlement waiting to be mined is looked at again at least this often. */
const RECHECK_MS = 2_000;
/** A settlement the node lost is sent again at most this often. */
const REBROADCAST_MIN_MS = 1_000;
/** After the authorization's validBefore (plus this margin for clocks), an unmined settlement can never succeed. */
const EXPIRY_MARGIN_S = 30;

/**
 * The settlement wallet's transactions, for the in-process facilitator (payments/facilitator.ts): each is signed and
 * stored on the payments it settles before it is broadcast (write-ahead), then watched until it is mined and confirmed
 * on the canonical chain, sent again when the node lost it and replaced with higher fees when it is stuck.
 */
export class SettlementTransactions {
  constructor(
    private readonly services: FacilitatorServices,
    private readonly chain: Chain,
    private readonly wallet: ServiceSigner,
  ) {}

  /**
   * Signs and sends a transaction of the settlement wallet that settles `paymentIds` (none: a transaction of the
   * library's that pays nothing itself, e.g. a smart wallet's deployment). It is stored on each payment before it is
   * broadcast (write-ahead); refused by the node, the payments go back to reserved.
   */
  async send(paymentIds: string[], to: string, data: string, gas?: bigint, retried = false): Promise<Hex> {
    const { provider, chainId } = this.chain;
    const from = this.wallet.address;
    const [fees, estimate] = await Promise.all([
      marketFees(this.chain),
      gas ? Promise.resolve(gas) : provider.estimateGas({ from, to, data }),
    ]);
    const cap = feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI);
    let ticket: NonceTicket | undefined;
    let verdict: Awaited<ReturnType<typeof broadcast>>;
    let signed: { raw: string; hash: string; nonce: number };
    const release = await this.services.walletLocks.hold(chainId, from);
    try {
      signed = await this.services.db.transaction(async (q) => {
        ticket?.drop(); // a retried transaction body takes its nonce again
        const nonce = await this.services.walletNonces.take(q, chainId, from, () =>
          provider.getTransactionCount(from, "pending"),
        );
        ticket = nonceOrderOf(this.services).register(chainId, from, nonce, queuesAheadOf(provider));
        const raw = await this.wallet.signTransaction({
          to,
          data,
          nonce,
          chainId,
          type: 2,
          gasLimit: (estimate * 12n) / 10n,
          maxFeePerGas: fees.maxFeePerGas > cap ? cap : fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas > cap ? cap : fees.maxPriorityFeePerGas,
        });
        const hash = keccak256(raw);
        for (const id of paymentIds) await this.services.payments.markSettling(q, id, raw, hash, { from, nonce });
        return { raw, hash, nonce };
      });
      // Committed: broadcast in nonce order among this process's transactions of the settlement wallet (and, still
      // under the wallet's lock, ahead of any other instance's next nonce).
      const committed = ticket;
      ticket = undefined;
      verdict = await committed!.broadcast((refusedAhead) =>
        broadcast(provider, signed.raw, signed.hash, refusedAhead),
      );
    } finally {
      ticket?.drop();
      await release();
    }
    const { hash, nonce } = signed;
    // Taken, or not taken in passing (an RPC failure, fees below the base fee): the wait sends it again or replaces it.
    if (verdict.kind !== "refused" && verdict.kind !== "nonce-used") return hash as Hex;
    await this.services.walletNonces.giveBack(chainId, from, nonce);
    for (const id of paymentIds) await this.services.payments.unmarkSettling(id);
    if (!retried && verdict.kind === "nonce-used") {
      // The settlement key was used elsewhere: catch up with the chain and sign again once.
      await this.services.walletNonces.syncFloor(chainId, from, await provider.getTransactionCount(from, "pending"));
      return this.send(paymentIds, to, data, gas, true);
    }
    throw new SettlementError(`settlement transaction refused: ${verdict.message}`, true);
  }

  /** Waits on settlement transactions in progress, by every hash they had: the payments of one batch share one wait. */
  private readonly waits = new Map<string, Promise<TransactionReceipt>>();

  /**
   * Waits until one of the settlement transactions of `paymentId` is mined and confirmed on the canonical chain, and
   * answers its receipt (watchSettlement). Every payment a transaction settles shares one wait.
   */
  untilMined(paymentId: string, hash: string): Promise<TransactionReceipt> {
    const existing = this.waits.get(hash.toLowerCase());
    if (existing) return existing;
    const keys: string[] = [];
    const alias = (h: string) => {
      keys.push(h.toLowerCase());
      this.waits.set(h.toLowerCase(), wait);
    };
    const wait: Promise<TransactionReceipt> = this.watchSettlement(paymentId, hash.toLowerCase(), alias).finally(() => {
      for (const key of keys) if (this.waits.get(key) === wait) this.waits.delete(key);
    });
    alias(hash);
    return wait;
  }

  /**
   * The bytes are sent again when the node lost them, and replaced with higher fees (same nonce) when they are not mined
   * after RELAYER_BUMP_AFTER_BLOCKS or their fee cap fell below the base fee: on every payment they carry at once.
   * Throws a final SettlementError once every authorization they carry expired unmined; an RPC failure is waited out.
   */
  private async watchSettlement(
    paymentId: string,
    hash: string,
    alias: (hash: string) => void,
  ): Promise<TransactionReceipt> {
    let current = hash;
    let sentAt = Date.now();
    let sentAtHead = this.chain.blocks.head;
    for (;;) {
      const head = this.chain.blocks.head;
      let carried = await this.services.payments.carriedBy(current);
      if (carried.length === 0) {
        // Replaced by another instance: follow the payment to its current transaction.
        const payment = await this.services.payments.get(paymentId);
        if (!payment?.settleTxHash)
          throw new SettlementError(`payment ${paymentId} has no settlement transaction`, false);
        current = payment.settleTxHash;
        alias(current);
        carried = [payment];
      }
      const mined = await this.minedSettlement(current, carried);
      if (mined) return mined;
      if (Date.now() / 1000 > Math.max(...carried.map((p) => p.validBefore)) + EXPIRY_MARGIN_S) {
        throw new SettlementError(`the authorization expired before the settlement was mined`, true);
      }
      // Without its bytes (a settlement that had ended, then a deep reorg took it away) it is only looked for: the
      // nodes put a reorged transaction back in their pools.
      const raw = carried.find((p) => p.settleTxRaw)?.settleTxRaw;
      if (!raw) {
        await this.chain.blocks.next(head, RECHECK_MS);
        continue;
      }
      if (Date.now() - sentAt >= REBROADCAST_MIN_MS && !(await this.chain.provider.getTransaction(current))) {
        const verdict = await broadcast(this.chain.provider, raw, current);
        sentAt = Date.now();
        if (verdict.kind === "refused")
          throw new SettlementError(`settlement transaction refused: ${verdict.message}`, true);
      }
      const replacement = await this.bumpIfStuck(current, raw, head - sentAtHead);
      if (replacement) {
        [current, sentAt, sentAtHead] = [replacement, Date.now(), head];
        alias(current);
      }
      await this.chain.blocks.next(head, RECHECK_MS);
    }
  }

  /**
   * The receipt of whichever of the settlement's transactions (`current` or one it replaced) is mined and confirmed, if
   * any. The payments it carries (`carried`) are watched for a reorg deeper than their confirmations.
   */
  private async minedSettlement(current: string, carried: PaymentRecord[]): Promise<TransactionReceipt | undefined> {
    const hashes = [current, ...new Set(carried.flatMap((p) => p.settleTxReplaced.map((r) => r.hash)))];
    const receipts = await Promise.all(hashes.map((h) => this.chain.provider.getTransactionReceipt(h)));
    const receipt = receipts.find((r) => r !== null);
    if (!receipt) return undefined;
    this.chain.blocks.observe(receipt.blockNumber);
    const confirmed = await untilConfirmed(this.chain, receipt, this.chain.confirmations, {
      stopped: () => false,
      signal: new Promise(() => undefined),
    });
    if (confirmed.kind !== "confirmed") return undefined; // taken off the chain: looked for again
    if (receipt.hash.toLowerCase() !== current) await this.services.payments.promoteSettlement(current, receipt.hash);
    for (const p of carried)
      this.chain.reorgWatch.add({
        key: `payment:${p.id}`,
        blockNumber: confirmed.receipt.blockNumber,
        blockHash: confirmed.receipt.blockHash,
      });
    return confirmed.receipt;
  }

  /** Replaces a stuck settlement transaction with higher fees (same nonce). Answers the replacement's hash when one was sent. */
  private async bumpIfStuck(hash: string, raw: string, blocksWaited: number): Promise<string | undefined> {
    const current = Transaction.from(raw);
    const market = await marketFees(this.chain);
    const fees = { maxFeePerGas: current.maxFeePerGas ?? 0n, maxPriorityFeePerGas: current.maxPriorityFeePerGas ?? 0n };
    if (blocksWaited < this.services.config.RELAYER_BUMP_AFTER_BLOCKS && fees.maxFeePerGas >= market.baseFeePerGas)
      return undefined;
    const next = replacementFees(fees, market, feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI));
    if (!next) return undefined;
    const replacement = await this.wallet.signTransaction({
      to: current.to,
      data: current.data,
      nonce: current.nonce,
      chainId: this.chain.chainId,
      type: 2,
      gasLimit: current.gasLimit,
      ...next,
    });
    const replacementHash = keccak256(replacement).toLowerCase();
    if (!(await this.services.payments.replaceSettlement(hash, replacement, replacementHash))) return undefined;
    await broadcast(this.chain.provider, replacement, replacementHash);
    this.services.logger.info(
      { replaced: hash, hash: replacementHash, maxFeePerGas: next.maxFeePerGas.toString() },
      "settlement replaced with higher fees",
    );
    return replacementHash;
  }

  /** A transaction of the facilitator that belongs to no payment (a smart-wallet deployment): its receipt. */
  async untilReceipt(hash: string): Promise<string> {
    for (;;) {
      const head = this.chain.blocks.head;
      if (await this.chain.provider.getTransactionReceipt(hash)) return hash;
      await this.chain.blocks.next(head, RECHECK_MS);
    }
  }
}
