import { Transaction, keccak256, type TransactionReceipt } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import { queuesAheadOf } from "../chains/nonce-queueing";
import type { Chain } from "../chains/registry";
import type { BroadcastVerdict } from "../chains/rpc-errors";
import { invalid, notNow } from "./errors";
import { errorFacts, type Logger } from "../logger";
import { feeCapWei, type Fees } from "../chains/fee-bump";
import { healWalletNonces } from "./nonce-healing";
import type { OperationSettlement } from "../payments/run-payments";
import { PaymentNotCarried, relayedCall, simulateRelayedCall } from "./relayed-call";
import { keyOf, RelayerDelegation } from "./relayer-delegation";
import { RelayerKeyRing } from "./relayer-keys";
import type { Batch, BatchTransaction } from "../model/batch";
import type { Queryable } from "../store/db";
import type { Stores } from "../store/stores";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { ServiceSigner } from "../signers/signer";

export { PaymentNotCarried, WouldRevert } from "./relayed-call";

/** What the relayer uses. */
export type RelayerServices = Pick<Stores, "batchTransactions" | "db" | "walletLocks" | "walletNonces"> & {
  chains: ChainRegistry;
  config: Config;
};

/** Nonce healing (fill gaps, rewind a drifted counter) runs at most this often per wallet. */
const HEAL_INTERVAL_MS = 3_000;
/**
 * The relayer signs with fees read up to this many blocks ago (within a second): a fee cap of twice the base fee
 * outlasts several blocks of the steepest rise EIP-1559 allows (12.5 % a block), and a chain that mines a block per
 * transaction would otherwise have every signature wait for a read of its own.
 */
const SIGNING_FEE_LAG_BLOCKS = 2;
/** A no-op (a zero-value call to itself) runs its delegate's receive() (EIP-7702): more than a plain transfer. */
const NO_OP_GAS = 60_000n;

/** What Relayer.sign did: the bytes to send and, when this call signed them, what it stored and whether the node took them. */
export interface RelayedSignature {
  signedRaw: string;
  txHash: string;
  /** The transaction as this call stored it (the store's answer); undefined when another runner had signed it (read it back). */
  stored?: BatchTransaction;
  /** When the node accepted this call's broadcast of the bytes (they need not be sent again right away). */
  acceptedAt?: number;
  /**
   * The transaction's receipt, asked for with the broadcast (one JSON-RPC batch, answered in order: a chain that mines
   * at once answers with it). Null when the node had not mined it then; a failed look-up is looked up again.
   */
  receipt?: Promise<TransactionReceipt | null>;
}

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
  /**
   * The relayer's keys per chain: the configuration's (its own key first, then RELAYER_EXTRA_PRIVATE_KEYS), with the
   * operator's additions, drains and removals applied while it runs (engine/relayer-key-rotation.ts).
   */
  readonly keys: RelayerKeyRing;
  /** Per chain, the position of the key the next batch that any key may send is prepared for. */
  private readonly turn = new Map<number, number>();
  /** Per key (keyOf), when its nonces were last healed. */
  private readonly lastHeal = new Map<string, number>();
  /** Which keys delegate to PaidRelayDelegate (EIP-7702): their payments settle inside their operations. */
  private readonly delegation: RelayerDelegation;

  constructor(
    private readonly services: RelayerServices,
    private readonly log: Logger,
    signers: Map<number, ServiceSigner[]>,
  ) {
    this.keys = new RelayerKeyRing(signers);
    this.delegation = new RelayerDelegation(services, log);
  }

  has(chainId: number): boolean {
    return this.keys.has(chainId);
  }

  /**
   * The relayer's own address on `chainId` (the one clients approve, and that holds agents for their payers): its first
   * key that takes new batches (after a rotation, the key added in place of a drained one).
   */
  address(chainId: number): string {
    return this.keysOf(chainId)[0].address;
  }

  /**
   * The address a new batch is prepared for when any of the relayer's keys may send it: each key in turn, so batches
   * spread over every key's nonces (a key's transactions reach the chain one nonce after the other).
   */
  nextKeyAddress(chainId: number): string {
    const keys = this.keysOf(chainId);
    const position = (this.turn.get(chainId) ?? 0) % keys.length;
    this.turn.set(chainId, position + 1);
    return keys[position].address;
  }

  /** Every relayer key's address on `chainId` (draining ones too), the configuration's first. */
  addresses(chainId: number): string[] {
    return this.keys.all(chainId).map((w) => w.address);
  }

  /**
   * The address of the code (PaidRelayDelegate) the relayer key `sender` (default: the relayer's own) of `chainId`
   * delegates to, when it does: payments on that chain can then be settled inside the relayed operation's transaction.
   */
  delegate(chainId: number, sender = this.keys.active(chainId)[0]?.address): string | undefined {
    return sender ? this.delegation.of(chainId, sender) : undefined;
  }

  /** The keys new batches of `chainId` are prepared for. */
  private keysOf(chainId: number): ServiceSigner[] {
    if (!this.keys.has(chainId))
      throw invalid(`Service-relayed execution is not configured for chain ${chainId}`, { field: "chainId" });
    const keys = this.keys.active(chainId);
    if (!keys.length)
      throw notNow(
        `No relayer key of chain ${chainId} takes new operations right now (each is draining or being set up): try again shortly`,
        { chainId },
      );
    return keys;
  }

  /** Whether `address` is one of the relayer's keys on `chainId`. */
  hasKey(chainId: number, address: string): boolean {
    return this.signerOf(chainId, address) !== undefined;
  }

  /** The relayer key of `chainId` whose address is `address`, if it is one. */
  private signerOf(chainId: number, address: string): ServiceSigner | undefined {
    return this.keys.find(chainId, address);
  }

  /**
   * Brings every relayer key's nonce counter in line with its chain (on start, and when someone else used a nonce): raised
   * to the chain's pending count, and rewound or its gaps filled by healNonces.
   */
  async syncNonces(): Promise<void> {
    for (const chain of this.services.chains.list()) {
      // A key added while the service runs is set up by the rotation before it takes batches.
      for (const signer of this.keys
        .all(chain.chainId)
        .filter((s) => this.keys.standing(chain.chainId, s.address) !== "starting")) {
        try {
          await this.setUpKey(chain, signer);
        } catch (error) {
          this.log.warn(
            { chainId: chain.chainId, relayer: signer.address, err: errorFacts(error) },
            "relayer nonce not synced; chain unreachable",
          );
        }
      }
    }
  }

  /**
   * Gets the relayer key `signer` of `chain` ready to send: its nonce counter raised to the chain's pending count, its
   * gaps healed, and its delegation to PaidRelayDelegate (EIP-7702) made when it has none. Throws when the chain
   * cannot be reached.
   */
  async setUpKey(chain: Chain, signer: ServiceSigner): Promise<void> {
    const pending = await chain.provider.getTransactionCount(signer.address, "pending");
    const next = await this.services.walletNonces.syncFloor(chain.chainId, signer.address, pending);
    this.log.info({ chainId: chain.chainId, relayer: signer.address, next }, "relayer nonce synced");
    await this.healKey(chain, signer, true);
    if (!this.delegation.of(chain.chainId, signer.address)) await this.delegation.ensure(chain, signer);
  }

  /**
   * Takes a nonce, re-prices and signs `tx` of a relayed batch, and persists it, all in one database transaction
   * that holds the transaction's row: when several runners (or instances) reach the same transaction, only the first
   * signs and the others get its bytes. `replacing` re-signs with a fresh nonce, only if the stored bytes are still
   * those (their nonce was taken by someone else).
   */
  async sign(
    batch: Batch,
    tx: BatchTransaction,
    options: { replacing?: string; data?: string; settle?: OperationSettlement } = {},
  ): Promise<RelayedSignature> {
    const { replacing } = options;
    const chain = this.services.chains.find(batch.chainId)!;
    const signer = this.signerOf(chain.chainId, tx.unsigned.from);
    if (!signer)
      throw new Error(
        `transaction ${tx.index} of ${batch.txId} was prepared for relayer ${tx.unsigned.from}, which is not a relayer key of this service on chain ${chain.chainId}`,
      );
    const call = await relayedCall(chain, signer, tx, options, () => this.delegation.stillDelegated(chain, signer));
    const { data, gasLimit, settle, wrapped, wrappedGas } = call;
    if (options.settle && !wrapped) throw new PaymentNotCarried("the relayer no longer delegates to PaidRelayDelegate");
    // Simulated right before it is signed, with the payment it carries and the gas it is signed with: one that would revert is
    // never signed, so the relayer spends nothing on it. The fees are read meanwhile (usually cached).
    const [fees] = await Promise.all([
      marketFees(chain, SIGNING_FEE_LAG_BLOCKS),
      simulateRelayedCall(chain, signer, tx, call),
    ]);
    const cap = feeCapWei(this.services.config.RELAYER_MAX_FEE_GWEI);
    let ticket: NonceTicket | undefined;
    // The lock rides with the signing transaction's first trip when this hold opens the wallet's turn.
    const hold = await this.services.walletLocks.take(chain.chainId, signer.address);
    try {
      const signed = await hold
        .transaction(async (q): Promise<RelayedSignature> => {
          ticket?.drop(); // a retried transaction body takes its nonce again
          ticket = undefined;
          const bind = wrapped && settle ? (within: Queryable) => settle.bindInSameTransaction(within) : undefined;
          const { current, nonce, boundHere } = await this.lockNonceAndBind(
            q,
            chain,
            signer,
            batch,
            tx,
            replacing,
            bind,
          );
          // The batch ended while this waited for the row (abandoned by another runner): nothing is signed for it.
          if (ENDED.has(current.status)) throw new TransactionEnded(`transaction ${tx.index} of ${batch.txId} ended`);
          // The payment is not reserved any more (another settler took it): signing without it would give the work away.
          if (bind && !boundHere) throw new PaymentNotCarried("the payment is no longer reserved for this transaction");
          ticket = nonceOrderOf(this.services).register(
            chain.chainId,
            signer.address,
            nonce,
            queuesAheadOf(chain.provider),
          );
          const bound = boundHere && wrapped;
          const unsigned = {
            ...tx.unsigned,
            data,
            gasLimit: bound ? wrappedGas! : gasLimit,
            from: signer.address,
            nonce,
            maxFeePerGas: (fees.maxFeePerGas > cap ? cap : fees.maxFeePerGas).toString(),
            maxPriorityFeePerGas: (fees.maxPriorityFeePerGas > cap ? cap : fees.maxPriorityFeePerGas).toString(),
          };
          // With a payment in it, the bytes carry the payer's authorisation: they are stored sealed only; the clear
          // `unsigned` keeps the operation's own target and calldata (what the client prepared).
          const signedRaw = await signer.signTransaction({
            ...unsigned,
            ...(bound ? { to: wrapped.to, data: wrapped.data } : {}),
            from: undefined,
          });
          const txHash = keccak256(signedRaw);
          if (bound && settle) await settle.recordHashInSameTransaction(q, txHash);
          const stored = await this.services.batchTransactions.setTxSigned(
            q,
            batch.txId,
            current,
            signedRaw,
            txHash,
            unsigned,
          );
          return { signedRaw, txHash, stored };
        })
        .catch((error: unknown) => {
          if (error instanceof SignedElsewhere) return error.signature;
          throw error;
        });
      // Committed: the bytes go to the node (in nonce order), unless another runner had signed them.
      const fresh = ticket;
      ticket = undefined;
      return fresh ? await broadcastSigned(chain, fresh, signed) : signed;
    } finally {
      ticket?.drop();
      await hold.release();
    }
  }

  /**
   * The transaction's row locked, the relayer's next nonce taken and, with a payment to settle in it, the payment bound,
   * asked together (one trip into the embedded database). When another runner signed the transaction first, throws
   * SignedElsewhere with its bytes: the signing transaction rolls the nonce and the binding back.
   */
  private async lockNonceAndBind(
    q: Queryable,
    chain: Chain,
    signer: ServiceSigner,
    batch: Batch,
    tx: BatchTransaction,
    replacing?: string,
    bind?: (q: Queryable) => Promise<boolean>,
  ) {
    const [current, nonce, boundHere] = await q.together(
      () =>
        [
          this.services.batchTransactions.lockTransaction(q, batch.txId, tx.index),
          this.services.walletNonces.take(q, chain.chainId, signer.address, () =>
            chain.provider.getTransactionCount(signer.address, "pending"),
          ),
          bind ? bind(q) : Promise.resolve(false),
        ] as const,
    );
    if (current.signedRaw && current.txHash && current.txHash !== replacing?.toLowerCase()) {
      throw new SignedElsewhere({ signedRaw: current.signedRaw, txHash: current.txHash });
    }
    return { current, nonce, boundHere };
  }

  /**
   * A relayed transaction of `batch` (with calldata completed at send time, `data`) as its relayer key would send it,
   * run on the chain (simulateRelayedCall): throws WouldRevert with the decoded reason when it would revert.
   */
  async simulate(batch: Batch, tx: BatchTransaction, data?: string): Promise<void> {
    const chain = this.services.chains.find(batch.chainId)!;
    const signer = this.signerOf(chain.chainId, tx.unsigned.from);
    if (!signer)
      throw new Error(
        `transaction ${tx.index} of ${batch.txId} was prepared for ${tx.unsigned.from}, which is not a relayer key of this service on chain ${chain.chainId}`,
      );
    await simulateRelayedCall(chain, signer, tx, { data: data ?? tx.unsigned.data });
  }

  /**
   * Replaces a relayed transaction that is not mined with the same nonce and higher `fees`, or with a no-op
   * (`noOp`: the operator's cancellation): signed, stored (the current form kept as replaced) and broadcast. Undefined when the stored transaction is no longer `tx` (another
   * runner or instance replaced it first, or it was mined).
   */
  async replace(
    batch: Batch,
    tx: BatchTransaction,
    fees: Fees,
    options: { noOp?: boolean } = {},
  ): Promise<{ tx: BatchTransaction; verdict: BroadcastVerdict } | undefined> {
    const chain = this.services.chains.find(batch.chainId)!;
    const signer = this.signerOf(chain.chainId, tx.unsigned.from);
    if (!signer) return undefined;
    const unsigned = {
      ...tx.unsigned,
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    };
    // Target, calldata, value and gas as signed before (a payment settled in the operation is only in the sealed bytes;
    // a cancellation's replacement stays a no-op). `noOp` cancels: a zero-value call to itself takes the nonce.
    const before = tx.signedRaw ? Transaction.from(tx.signedRaw) : undefined;
    const call = options.noOp
      ? { to: signer.address, data: "0x", value: 0n, gasLimit: NO_OP_GAS.toString() }
      : before
        ? { to: before.to!, data: before.data, value: before.value, gasLimit: before.gasLimit.toString() }
        : {};
    const signedRaw = await signer.signTransaction({ ...unsigned, ...call, from: undefined });
    const txHash = keccak256(signedRaw);
    const current = {
      maxFeePerGas: BigInt(tx.unsigned.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(tx.unsigned.maxPriorityFeePerGas),
    };
    if (
      !(await this.services.batchTransactions.replaceSigned(
        this.services.db,
        batch.txId,
        tx.index,
        tx.txHash!,
        { signedRaw, txHash, unsigned },
        current,
      ))
    )
      return undefined;
    const verdict = await broadcast(chain.provider, signedRaw, txHash);
    // As stored now, with the form it replaced listed (read back: replaceSigned answers only whether it moved).
    const stored = await this.services.batchTransactions.transaction(batch.txId, tx.index);
    return stored && { tx: stored, verdict };
  }

  /**
   * Keeps each relayer key's nonces in line with the chain (at most every HEAL_INTERVAL_MS): a counter that drifted above
   * every nonce still in use (transactions dropped for good, a chain that went back) is rewound to the chain's, and a
   * nonce below one in use that nothing of ours fills (its transaction ended without reaching the chain) is filled with
   * a zero-value transfer to self, so the later ones can be mined. Runs under the wallet's lock: no nonce is taken meanwhile.
   */
  async healNonces(chain: Chain, force = false): Promise<void> {
    for (const signer of this.keys.all(chain.chainId)) await this.healKey(chain, signer, force);
  }

  private async healKey(chain: Chain, signer: ServiceSigner, force: boolean): Promise<void> {
    const key = keyOf(chain.chainId, signer.address);
    if (!force && Date.now() - (this.lastHeal.get(key) ?? 0) < HEAL_INTERVAL_MS) return;
    this.lastHeal.set(key, Date.now());
    try {
      await healWalletNonces(this.services, chain, signer, this.log);
    } catch (error) {
      this.log.warn(
        { chainId: chain.chainId, err: errorFacts(error) },
        "relayer nonces not checked; trying again later",
      );
    }
  }

  /**
   * A relayed transaction the node refused never used its nonce. Give it back when it was the last one taken;
   * otherwise later transactions wait behind the gap, which healing fills.
   */
  async onRefused(chain: Chain, tx: BatchTransaction): Promise<void> {
    const signer = this.signerOf(chain.chainId, tx.unsigned.from);
    if (!signer) return;
    if (await this.services.walletNonces.giveBack(chain.chainId, signer.address, tx.unsigned.nonce)) return;
    await this.healKey(chain, signer, true);
  }
}

/**
 * Hands bytes this call signed to the node in nonce order (`ticket`), asking for their receipt in the same JSON-RPC
 * batch (the same turn of the event loop). A refusal is left to the runner, which sends the same bytes next and
 * decides (reject, give the nonce back, re-sign).
 */
async function broadcastSigned(chain: Chain, ticket: NonceTicket, signed: RelayedSignature): Promise<RelayedSignature> {
  let receipt: Promise<TransactionReceipt | null> | undefined;
  const verdict = await ticket.broadcast((refusedAhead) => {
    const sent = broadcast(chain.provider, signed.signedRaw, signed.txHash, refusedAhead);
    receipt = chain.provider.getTransactionReceipt(signed.txHash);
    receipt.catch(() => undefined); // awaited (or dropped) by the run's tracker
    return sent;
  });
  return verdict.kind === "accepted" ? { ...signed, acceptedAt: Date.now(), receipt } : signed;
}

/** The states of a transaction that has ended: it is never signed (again). */
const ENDED = new Set(["refused", "reverted", "unseen", "confirmed"]);

/** The transaction to sign ended meanwhile (its batch was abandoned by another runner): nothing was signed. */
export class TransactionEnded extends Error {}

/** Thrown out of the signing transaction (rolling back its nonce and binding) when another runner signed first. */
class SignedElsewhere extends Error {
  constructor(readonly signature: RelayedSignature) {
    super("the transaction was signed by another runner");
  }
}
