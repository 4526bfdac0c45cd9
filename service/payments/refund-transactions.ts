import { Interface, Transaction, getAddress, keccak256, type TransactionReceipt } from "ethers";
import { broadcast } from "../chains/broadcast";
import { untilConfirmed } from "../chains/confirmations";
import { feeCapWei, replacementFees } from "../chains/fee-bump";
import { marketFees } from "../chains/fees";
import type { Chain } from "../chains/registry";
import { isChainUnavailable } from "../chains/rpc-errors";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { ServiceSigner } from "../signers/signer";
import type { RefundRecord } from "../store/payment-refunds";
import type { Stores } from "../store/stores";

/** What the refund wallet's transactions use. */
export type RefundServices = Pick<Stores, "paymentRefunds" | "walletNonces" | "walletLocks"> & { config: Config };

const erc20 = new Interface([
  "function transfer(address to, uint256 value) returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);
const TRANSFER_TOPIC = erc20.getEvent("Transfer")!.topicHash;

/** An owed refund's transfer would not go through now (the wallet lacks the asset): nothing is signed. */
export class RefundNotPossible extends Error {}

/**
 * Whether `receipt` shows `asset` moved to `to`, at least `amount` (base units), from `from` when given: what proves a
 * refund paid (the refund wallet's own transfer, or an operator's transaction, which may pay from anywhere).
 */
export function transferredIn(
  receipt: Pick<TransactionReceipt, "status" | "logs">,
  refund: Pick<RefundRecord, "asset" | "payer" | "amount">,
  from?: string,
): boolean {
  if (receipt.status !== 1) return false;
  return receipt.logs.some((log) => {
    if (log.address.toLowerCase() !== refund.asset.toLowerCase() || log.topics[0] !== TRANSFER_TOPIC) return false;
    const parsed = erc20.parseLog(log);
    if (!parsed) return false;
    const [sender, to, value] = parsed.args as unknown as [string, string, bigint];
    return (
      to.toLowerCase() === refund.payer.toLowerCase() &&
      value >= BigInt(refund.amount) &&
      (!from || sender.toLowerCase() === from.toLowerCase())
    );
  });
}

/** How a sent refund's transaction stands after one look (RefundTransactions.follow). */
export type FollowOutcome =
  | { kind: "refunded"; refund: RefundRecord }
  /** It can never transfer (reverted when mined, or its nonce went elsewhere): owed again, tried later. */
  | { kind: "owed"; problem: string }
  | { kind: "waiting" };

/**
 * The refund wallet's transactions on one chain: an owed refund claimed, its transfer signed and stored before it is
 * broadcast (store/payment-refunds.ts claimAndStore, under the wallet's nonce and lock as the settlement wallet's are),
 * then followed until it is mined and confirmed with the transfer to the payer: sent again when the node lost it,
 * replaced with higher fees when it is stuck (any of its forms may be mined, each once: they share a nonce).
 */
export class RefundTransactions {
  /** Per sent hash: the chain's head when it was last sent (fee bumps count blocks from there). */
  private readonly sentAtHead = new Map<string, number>();
  /** Per refund: how many looks in a row found its nonce used and none of its hashes mined. */
  private readonly nonceGone = new Map<string, number>();

  constructor(
    private readonly services: RefundServices,
    readonly chain: Chain,
    readonly wallet: ServiceSigner,
    private readonly log: Logger,
  ) {}

  get network(): string {
    return `eip155:${this.chain.chainId}`;
  }

  /**
   * Claims the oldest refund due on this chain, signs its transfer (simulated first: a wallet without the asset signs
   * nothing, and the refund waits with the reason) and broadcasts it. Answers the refund as sent, undefined when none
   * was due, or the refund that could not be sent now, with why.
   */
  async sendNext(): Promise<RefundRecord | { notSent: string; paymentId: string } | undefined> {
    const { provider, chainId } = this.chain;
    const from = this.wallet.address;
    const fees = await marketFees(this.chain);
    const cap = feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI);
    let refused: { notSent: string; paymentId: string } | undefined;
    const release = await this.services.walletLocks.hold(chainId, from);
    try {
      // The wallet's counter catches up with the chain (a key also used elsewhere), under its lock: nothing of ours
      // is between a nonce and its broadcast now.
      await this.services.walletNonces.syncFloor(chainId, from, await provider.getTransactionCount(from, "pending"));
      const claimed = await this.services.paymentRefunds
        .claimAndStore(this.network, async (q, refund) => {
          const data = erc20.encodeFunctionData("transfer", [getAddress(refund.payer), BigInt(refund.amount)]);
          let gas: bigint;
          try {
            gas = await provider.estimateGas({ from, to: refund.asset, data });
          } catch (error) {
            if (isChainUnavailable(error)) throw error;
            refused = { paymentId: refund.paymentId, notSent: `its transfer would fail: ${(error as Error).message}` };
            throw new RefundNotPossible(refused.notSent);
          }
          const nonce = await this.services.walletNonces.take(q, chainId, from, () =>
            provider.getTransactionCount(from, "pending"),
          );
          const raw = await this.wallet.signTransaction({
            to: refund.asset,
            data,
            nonce,
            chainId,
            type: 2,
            gasLimit: (gas * 13n) / 10n,
            maxFeePerGas: fees.maxFeePerGas > cap ? cap : fees.maxFeePerGas,
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas > cap ? cap : fees.maxPriorityFeePerGas,
          });
          return { raw, hash: keccak256(raw), from, nonce };
        })
        .catch((error: unknown) => {
          if (error instanceof RefundNotPossible) return undefined;
          throw error;
        });
      if (!claimed) return refused;
      await this.send(claimed);
      return claimed;
    } finally {
      await release();
    }
  }

  /** The chain's head now (the block watcher's may not be known yet in a process that just started). */
  private async head(): Promise<number> {
    return Math.max(this.chain.blocks.head, await this.chain.provider.getBlockNumber());
  }

  /** Broadcasts a sent refund's current bytes; a refusal (the wallet without gas) is noted, and sent again later. */
  private async send(refund: RefundRecord): Promise<void> {
    const verdict = await broadcast(this.chain.provider, refund.txRaw!, refund.txHash!);
    this.sentAtHead.set(refund.txHash!, await this.head());
    if (verdict.kind !== "refused") return;
    this.log.error(
      {
        paymentId: refund.paymentId,
        wallet: this.wallet.address,
        chainId: this.chain.chainId,
        refusal: verdict.message,
      },
      "the node refused the refund wallet's transaction (fund it if it lacks gas); the same transaction is sent again",
    );
    await this.services.paymentRefunds.noteProblem(refund.paymentId, `the node refused it: ${verdict.message}`);
  }

  /**
   * One look at a sent refund: refunded once one of its forms is mined and confirmed with the transfer; owed again
   * when it can never transfer (mined without it, or its nonce went to another transaction, seen twice); otherwise
   * sent again when the node lost it and replaced with higher fees when stuck, and looked at again later.
   */
  async follow(refund: RefundRecord, stop: { stopped: () => boolean; signal: Promise<void> }): Promise<FollowOutcome> {
    const { provider } = this.chain;
    const hashes = [refund.txHash!, ...refund.txReplaced];
    const receipt = (await Promise.all(hashes.map((h) => provider.getTransactionReceipt(h)))).find((r) => r !== null);
    if (receipt) {
      this.chain.blocks.observe(receipt.blockNumber);
      const confirmed = await untilConfirmed(this.chain, receipt, this.chain.confirmations, stop);
      if (confirmed.kind !== "confirmed") return { kind: "waiting" };
      if (transferredIn(confirmed.receipt, refund, this.wallet.address)) {
        const done = await this.services.paymentRefunds.markRefunded(
          refund.paymentId,
          confirmed.receipt.hash,
          confirmed.receipt.blockNumber,
        );
        return done ? { kind: "refunded", refund: done } : { kind: "waiting" };
      }
      return this.owedAgain(refund, `its transaction ${receipt.hash} was mined without the transfer (reverted)`);
    }
    if (await provider.getTransaction(refund.txHash!)) {
      await this.bumpIfStuck(refund);
      return { kind: "waiting" };
    }
    // The node does not have it: its nonce may have gone to another transaction of the wallet (then it never can be
    // mined), or the node lost it (sent again).
    if ((await provider.getTransactionCount(this.wallet.address, "latest")) > refund.txNonce!) {
      const seen = (this.nonceGone.get(refund.paymentId) ?? 0) + 1;
      this.nonceGone.set(refund.paymentId, seen);
      if (seen >= 2)
        return this.owedAgain(refund, `its nonce ${refund.txNonce} was used by another transaction of the wallet`);
      return { kind: "waiting" };
    }
    this.nonceGone.delete(refund.paymentId);
    await this.send(refund);
    return { kind: "waiting" };
  }

  private async owedAgain(refund: RefundRecord, problem: string): Promise<FollowOutcome> {
    this.nonceGone.delete(refund.paymentId);
    const retryInMs = Math.min(15 * 60_000, 30_000 * 2 ** Math.max(0, refund.attempts - 1));
    if (await this.services.paymentRefunds.owedAgain(refund.paymentId, refund.txHash!, problem, retryInMs))
      this.log.error(
        { paymentId: refund.paymentId, wallet: this.wallet.address, problem, retryInMs },
        "a refund's transaction cannot transfer (does the refund wallet hold the asset?); the refund is owed again",
      );
    return { kind: "owed", problem };
  }

  /** Replaces a refund's transaction with higher fees (same nonce) when it waited RELAYER_BUMP_AFTER_BLOCKS or is priced out. */
  private async bumpIfStuck(refund: RefundRecord): Promise<void> {
    const current = Transaction.from(refund.txRaw!);
    const head = await this.head();
    // First seen here (another instance sent it, or this one before a restart): its blocks are counted from now.
    const sentAt = this.sentAtHead.get(refund.txHash!) ?? head;
    this.sentAtHead.set(refund.txHash!, sentAt);
    const market = await marketFees(this.chain);
    const fees = { maxFeePerGas: current.maxFeePerGas ?? 0n, maxPriorityFeePerGas: current.maxPriorityFeePerGas ?? 0n };
    if (head - sentAt < this.services.config.RELAYER_BUMP_AFTER_BLOCKS && fees.maxFeePerGas >= market.baseFeePerGas)
      return;
    const next = replacementFees(fees, market, feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI));
    if (!next) return;
    const raw = await this.wallet.signTransaction({
      to: current.to,
      data: current.data,
      nonce: current.nonce,
      chainId: this.chain.chainId,
      type: 2,
      gasLimit: current.gasLimit,
      ...next,
    });
    const hash = keccak256(raw).toLowerCase();
    if (!(await this.services.paymentRefunds.replaceTx(refund.paymentId, refund.txHash!, raw, hash))) return;
    await broadcast(this.chain.provider, raw, hash);
    this.sentAtHead.set(hash, head);
    this.log.info({ paymentId: refund.paymentId, replaced: refund.txHash, hash }, "refund replaced with higher fees");
  }
}
