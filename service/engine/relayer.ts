import { Wallet, keccak256, toBeHex } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import type { Chain } from "../chains/registry";
import type { BroadcastVerdict } from "../chains/rpc-errors";
import { badRequest } from "../errors";
import { errorFacts, type Logger } from "../logger";
import { feeCapWei, type Fees } from "../chains/fee-bump";
import type { Batch, BatchTransaction } from "../model/batch";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";

/** What the relayer uses. */
export type RelayerServices = Pick<Stores, "batches" | "db" | "walletLocks" | "walletNonces"> & { chains: ChainRegistry; config: Config };

/** Nonce healing (fill gaps, rewind a drifted counter) runs at most this often per wallet. */
const HEAL_INTERVAL_MS = 3_000;

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
  private readonly lastHeal = new Map<number, number>();

  constructor(
    private readonly services: RelayerServices,
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

  /**
   * Brings every relayer's nonce counter in line with its chain (on start, and when someone else used a nonce): raised
   * to the chain's pending count, and rewound or its gaps filled by healNonces.
   */
  async syncNonces(): Promise<void> {
    for (const chain of this.services.chains.list()) {
      const wallet = this.wallets.get(chain.chainId);
      if (!wallet) continue;
      try {
        const pending = await chain.provider.getTransactionCount(wallet.address, "pending");
        const next = await this.services.walletNonces.syncFloor(chain.chainId, wallet.address, pending);
        this.log.info({ chainId: chain.chainId, relayer: wallet.address, next }, "relayer nonce synced");
        await this.healNonces(chain, true);
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
    const fees = await marketFees(chain);
    const cap = feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI);
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
          maxFeePerGas: (fees.maxFeePerGas > cap ? cap : fees.maxFeePerGas).toString(),
          maxPriorityFeePerGas: (fees.maxPriorityFeePerGas > cap ? cap : fees.maxPriorityFeePerGas).toString(),
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
      if (fresh) await fresh.broadcast(() => broadcast(chain.provider, signed.signedRaw, signed.txHash));
      return signed;
    } finally {
      ticket?.drop();
      await release();
    }
  }

  /**
   * Replaces a relayed transaction that is not mined with the same nonce and higher `fees`: signed, stored (the
   * current form kept as replaced) and broadcast. Undefined when the stored transaction is no longer `tx` (another
   * runner or instance replaced it first, or it was mined).
   */
  async replace(batch: Batch, tx: BatchTransaction, fees: Fees): Promise<{ tx: BatchTransaction; verdict: BroadcastVerdict } | undefined> {
    const chain = this.services.chains.find(batch.chainId)!;
    const wallet = this.wallets.get(chain.chainId);
    if (!wallet || tx.unsigned.from.toLowerCase() !== wallet.address.toLowerCase()) return undefined;
    const unsigned = { ...tx.unsigned, maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() };
    const signedRaw = await wallet.signTransaction({ ...unsigned, from: undefined });
    const txHash = keccak256(signedRaw);
    const current = { maxFeePerGas: BigInt(tx.unsigned.maxFeePerGas), maxPriorityFeePerGas: BigInt(tx.unsigned.maxPriorityFeePerGas) };
    if (!(await this.services.batches.replaceSigned(this.services.db, batch.txId, tx.index, tx.txHash!, { signedRaw, txHash, unsigned }, current))) return undefined;
    const verdict = await broadcast(chain.provider, signedRaw, txHash);
    const stored = await this.services.batches.transaction(batch.txId, tx.index);
    return { tx: stored ?? { ...tx, signedRaw, txHash, unsigned }, verdict };
  }

  /**
   * Keeps the wallet's nonces in line with the chain (at most every HEAL_INTERVAL_MS): a counter that drifted above
   * every nonce still in use (transactions dropped for good, a chain that went back) is rewound to the chain's, and a
   * nonce below one in use that nothing of ours fills (its transaction ended without reaching the chain) is filled with
   * a zero-value transfer to self, so the later ones can be mined. Runs under the wallet's lock: no nonce is taken meanwhile.
   */
  async healNonces(chain: Chain, force = false): Promise<void> {
    const wallet = this.wallets.get(chain.chainId);
    if (!wallet) return;
    const last = this.lastHeal.get(chain.chainId) ?? 0;
    if (!force && Date.now() - last < HEAL_INTERVAL_MS) return;
    this.lastHeal.set(chain.chainId, Date.now());
    const release = await this.services.walletLocks.hold(chain.chainId, wallet.address);
    try {
      const onChain = await chain.provider.getTransactionCount(wallet.address, "latest");
      const held = await this.services.walletNonces.held(chain.chainId, wallet.address, onChain);
      const rewound = await this.services.walletNonces.rewind(chain.chainId, wallet.address, held.length ? Math.max(onChain, held[held.length - 1] + 1) : onChain);
      if (rewound) this.log.warn({ chainId: chain.chainId, relayer: wallet.address, next: rewound.next, was: rewound.was }, "relayer nonce counter was ahead of the chain; rewound");
      const highest = held.length ? held[held.length - 1] : onChain - 1;
      const inUse = new Set(held);
      for (let nonce = onChain; nonce < highest; nonce++) if (!inUse.has(nonce)) await this.fillNonce(chain, wallet, nonce);
    } catch (error) {
      this.log.warn({ chainId: chain.chainId, err: errorFacts(error) }, "relayer nonces not checked; trying again later");
    } finally {
      await release();
    }
  }

  /** A nonce nothing of ours will use, below one that is in use: a zero-value transfer to self takes it. */
  private async fillNonce(chain: Chain, wallet: Wallet, nonce: number): Promise<void> {
    const fees = await marketFees(chain);
    const filler = await wallet.signTransaction({
      to: wallet.address,
      value: 0n,
      nonce,
      chainId: chain.chainId,
      type: 2,
      gasLimit: 21_000n,
      maxFeePerGas: fees.maxFeePerGas * 2n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const verdict = await broadcast(chain.provider, filler, keccak256(filler));
    if (verdict.kind === "accepted") this.log.warn({ chainId: chain.chainId, nonce }, "filled a relayer nonce gap with a no-op transfer");
    else this.log.error({ chainId: chain.chainId, nonce, verdict }, "could not fill a relayer nonce gap");
  }

  /**
   * A relayed transaction the node refused never used its nonce. Give it back when it was the last one taken;
   * otherwise later transactions wait behind the gap, which healing fills.
   */
  async onRefused(chain: Chain, tx: BatchTransaction): Promise<void> {
    const wallet = this.wallets.get(chain.chainId);
    if (!wallet || tx.unsigned.from.toLowerCase() !== wallet.address.toLowerCase()) return;
    if (await this.services.walletNonces.giveBack(chain.chainId, wallet.address, tx.unsigned.nonce)) return;
    await this.healNonces(chain, true);
  }
}
