import { Wallet, keccak256, toBeHex } from "ethers";
import { sendRaw } from "../chains/broadcast";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import type { Chain } from "../chains/registry";
import { badRequest } from "../errors";
import { errorFacts, type Logger } from "../logger";
import type { Services } from "../services";
import type { Batch, BatchTransaction } from "./types";

/**
 * The service's own wallet per chain for service-relayed execution: it signs, pays gas and broadcasts. A relayed
 * transaction gets its nonce and its signature right before its broadcast (never ahead: a failed predecessor must not
 * strand later nonces), and both are persisted before the bytes leave the process. The first broadcast follows at once,
 * in nonce order among this process's relayed transactions (chains/nonce-order.ts) and, on a PostgreSQL server,
 * under the wallet's lock from nonce to broadcast (store/wallet-locks.ts), so concurrent sends of one or several
 * instances never reach the node out of order; the runner then finds the transaction known (or mined) and only waits
 * for its receipt.
 */
export class Relayer {
  private readonly wallets = new Map<number, Wallet>();

  constructor(
    private readonly services: Services,
    private readonly log: Logger,
  ) {
    for (const [chainId, key] of services.config.relayerKeys) this.wallets.set(chainId, new Wallet(key));
  }

  has(chainId: number): boolean {
    return this.wallets.has(chainId);
  }

  address(chainId: number): string {
    const wallet = this.wallets.get(chainId);
    if (!wallet) throw badRequest(`Service-relayed execution is not configured for chain ${chainId}`, { field: "chainId" });
    return wallet.address;
  }

  /** Raises every relayer's nonce counter to its chain's pending count (on start). */
  async syncNonces(): Promise<void> {
    for (const chain of this.services.chains.list()) {
      const wallet = this.wallets.get(chain.chainId);
      if (!wallet) continue;
      try {
        const pending = await chain.provider.getTransactionCount(wallet.address, "pending");
        const next = await this.services.walletNonces.syncFloor(chain.chainId, wallet.address, pending);
        this.log.info({ chainId: chain.chainId, relayer: wallet.address, next }, "relayer nonce synced");
      } catch (error) {
        this.log.warn({ chainId: chain.chainId, err: errorFacts(error) }, "relayer nonce not synced; chain unreachable");
      }
    }
  }

  /**
   * Takes a nonce, re-prices and signs `tx` of a relayed batch, and persists it, all in one database transaction
   * that holds the transaction's row: when several runners (or instances) reach the same transaction, only the first
   * signs and the others get its bytes. `replacing` re-signs with a fresh nonce, only if the stored bytes are still
   * those (their nonce was taken by someone else).
   */
  async sign(batch: Batch, tx: BatchTransaction, options: { replacing?: string; data?: string } = {}): Promise<{ signedRaw: string; txHash: string }> {
    const { replacing } = options;
    const chain = this.services.chains.find(batch.chainId)!;
    const wallet = this.wallets.get(chain.chainId);
    if (!wallet) throw new Error(`no relayer key for chain ${chain.chainId}`);
    const fees = await chain.provider.getFeeData();
    // Calldata bound at send time (it names the payer) gets its own gas estimate; the prepared limit is the fallback.
    const data = options.data ?? tx.unsigned.data;
    const gasLimit =
      options.data && options.data !== tx.unsigned.data
        ? await chain.provider
            .estimateGas({ from: wallet.address, to: tx.unsigned.to, data, value: BigInt(tx.unsigned.value) })
            .then((g) => toBeHex((g * 125n + 99n) / 100n))
            .catch(() => tx.unsigned.gasLimit)
        : tx.unsigned.gasLimit;
    let ticket: NonceTicket | undefined;
    const release = await this.services.walletLocks.hold(chain.chainId, wallet.address);
    try {
      const signed = await this.services.db.transaction(async (q) => {
        ticket?.drop(); // a retried transaction body takes its nonce again
        ticket = undefined;
        const current = await this.services.batches.lockTransaction(q, batch.txId, tx.index);
        if (current.signedRaw && current.txHash && current.txHash !== replacing?.toLowerCase()) {
          return { signedRaw: current.signedRaw, txHash: current.txHash };
        }
        const nonce = await this.services.walletNonces.take(q, chain.chainId, wallet.address, () =>
          chain.provider.getTransactionCount(wallet.address, "pending"),
        );
        ticket = nonceOrderOf(this.services).register(chain.chainId, wallet.address, nonce);
        const unsigned = {
          ...tx.unsigned,
          data,
          gasLimit,
          from: wallet.address,
          nonce,
          maxFeePerGas: (fees.maxFeePerGas ?? fees.gasPrice ?? 0n).toString(),
          maxPriorityFeePerGas: (fees.maxPriorityFeePerGas ?? fees.gasPrice ?? 0n).toString(),
        };
        const signedRaw = await wallet.signTransaction({ ...unsigned, from: undefined });
        const txHash = keccak256(signedRaw);
        await this.services.batches.setTxSigned(batch.txId, tx.index, signedRaw, txHash, q, unsigned);
        return { signedRaw, txHash };
      });
      // Committed: hand the bytes to the node in nonce order. A refusal is left to the runner, which sends the same
      // bytes next and decides (reject, give the nonce back, re-sign).
      const fresh = ticket;
      ticket = undefined;
      if (fresh) await fresh.broadcast(() => sendRaw(chain.provider, signed.signedRaw, signed.txHash));
      return signed;
    } finally {
      ticket?.drop();
      await release();
    }
  }

  /**
   * A relayed transaction the node refused never used its nonce. Give it back when it was the last one taken;
   * otherwise later transactions wait behind the gap, so fill it with a zero-value transfer to self.
   */
  async onRefused(chain: Chain, tx: BatchTransaction): Promise<void> {
    const wallet = this.wallets.get(chain.chainId);
    if (!wallet || tx.unsigned.from.toLowerCase() !== wallet.address.toLowerCase()) return;
    const nonce = tx.unsigned.nonce;
    if (await this.services.walletNonces.giveBack(chain.chainId, wallet.address, nonce)) return;
    const onChain = await chain.provider.getTransactionCount(wallet.address, "latest");
    if (onChain > nonce) return; // something already used it
    const fees = await chain.provider.getFeeData();
    const filler = await wallet.signTransaction({
      to: wallet.address,
      value: 0n,
      nonce,
      chainId: chain.chainId,
      type: 2,
      gasLimit: 21_000n,
      maxFeePerGas: (fees.maxFeePerGas ?? fees.gasPrice ?? 0n) * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? fees.gasPrice ?? 0n,
    });
    try {
      await chain.provider.send("eth_sendRawTransaction", [filler]);
      this.log.warn({ chainId: chain.chainId, nonce }, "filled a relayer nonce gap with a no-op transfer");
    } catch (error) {
      this.log.error({ chainId: chain.chainId, nonce, err: errorFacts(error) }, "could not fill a relayer nonce gap");
    }
  }
}
