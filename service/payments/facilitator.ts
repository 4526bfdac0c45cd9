import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { Transaction, keccak256, type TransactionReceipt } from "ethers";
import type { Abi, Hex, PublicClient } from "viem";
import { broadcast } from "../chains/broadcast";
import { paidIn, settledBy, transferWithAuthorizationCalldata, verifyPlainTransferAuthorization } from "./eip3009";
import { SettlementBatches } from "./settlement-batches";
import { healWalletNonces } from "../engine/nonce-healing";
import { multicall3Interface } from "../chains/contracts";
import { MULTICALL3_ADDRESS } from "../chains/networks";
import { isChainUnavailable } from "../chains/rpc-errors";
import { marketFees } from "../chains/fees";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import type { Chain } from "../chains/registry";
import { untilConfirmed } from "../chains/confirmations";
import { feeCapWei, replacementFees } from "../chains/fee-bump";
import type { PaymentRecord } from "../store/payments";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { ServiceSigner } from "../signers/signer";

/** What the in-process facilitator uses. */
export type FacilitatorServices = Pick<Stores, "db" | "payments" | "walletLocks" | "walletNonces"> & {
  config: Config;
  logger: Logger;
};

/** Between blocks, a settlement waiting to be mined is looked at again at least this often. */
const RECHECK_MS = 2_000;
/** A settlement the node lost is sent again at most this often. */
const REBROADCAST_MIN_MS = 1_000;
/** After the authorization's validBefore (plus this margin for clocks), an unmined settlement can never succeed. */
const EXPIRY_MARGIN_S = 30;
/** Payments one settlement transaction carries at most (each transferWithAuthorization costs ~60-90k gas). */
const SETTLEMENT_BATCH_MAX = 50;
/** When a batch cannot be estimated (one of its payments would fail), each payment is given this much gas, plus the batch's own. */
const BATCH_GAS_PER_PAYMENT = 150_000n;
const BATCH_BASE_GAS = 60_000n;

/**
 * A settlement that failed: `final` when this settlement can no longer succeed (reverted, refused by the node, its
 * authorization expired or used elsewhere), else in passing (then it is tried again); `minedWithout` when its
 * transaction was mined without settling the payment. Whether the payment is released is decided by whether the
 * payer's authorization can still be used (payments/settler.ts): a refusal of ours (the settlement wallet without gas)
 * keeps it owed.
 */
export class SettlementError extends Error {
  constructor(
    message: string,
    readonly final: boolean,
    readonly minedWithout = false,
  ) {
    super(message);
  }
}

/** Verifies and settles x402 payments: in-process with the service's settlement key, or an external facilitator. */
export interface PaymentFacilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payment: PaymentRecord): Promise<SettleResponse>;
  /**
   * A settlement whose transaction was already sent: its fate on chain, once confirmed. Throws SettlementError (final
   * or not). In-process only: an external facilitator keeps its own transactions.
   */
  awaitSettlement?(payment: PaymentRecord): Promise<SettleResponse>;
  /** Address that signs settlements (in-process only). */
  readonly settlementAddress?: string;
  /**
   * Whether the service may settle a payment itself inside the relayed operation's transaction (the relayer's EIP-7702
   * delegate calls transferWithAuthorization): true for the in-process facilitator; an external facilitator settles
   * every payment itself.
   */
  readonly settlesInOperation?: boolean;
  /** Fills gaps in the settlement wallet's nonces and rewinds a counter that drifted (in-process only). */
  healNonces?(): Promise<void>;
}

export class ExternalFacilitator implements PaymentFacilitator {
  private readonly client: HTTPFacilitatorClient;
  constructor(url: string) {
    this.client = new HTTPFacilitatorClient({ url });
  }
  verify(payload: PaymentPayload, requirements: PaymentRequirements) {
    return this.client.verify(payload, requirements);
  }
  settle(payment: PaymentRecord) {
    return this.client.settle(payment.payload, payment.requirements);
  }
}

/**
 * The official EVM `exact` facilitator (EIP-3009 transferWithAuthorization) run in-process against the payment
 * chain's RPC. Its signer's writes go through the service's nonce manager, and each settlement transaction is stored
 * on its payment before it is broadcast, so a crash mid-settlement is resumed, never repeated.
 */
/**
 * viem and x402's EVM scheme take ~0.4 s to load: they are loaded with the first payment verified, not at start (a
 * start answers /health sooner).
 */
let evmModules:
  Promise<{ viem: typeof import("viem"); exact: typeof import("@x402/evm/exact/facilitator") }> | undefined;
const loadEvmModules = () =>
  (evmModules ??= Promise.all([import("viem"), import("@x402/evm/exact/facilitator")]).then(([viem, exact]) => ({
    viem,
    exact,
  })));

export class InProcessFacilitator implements PaymentFacilitator {
  private client?: PublicClient;
  readonly settlementAddress: string;
  readonly settlesInOperation = true;

  constructor(
    private readonly services: FacilitatorServices,
    private readonly chain: Chain,
    private readonly wallet: ServiceSigner,
  ) {
    this.settlementAddress = wallet.address;
    this.batches = new SettlementBatches((items) => this.settleBatch(items), {
      gatherMs: services.config.X402_SETTLEMENT_BATCH_MS,
      max: SETTLEMENT_BATCH_MAX,
    });
  }

  healNonces(): Promise<void> {
    return healWalletNonces(this.services, this.chain, this.wallet, this.services.logger.child({ component: "x402" }));
  }

  /** A plain account's EIP-3009 payment is checked natively (payments/eip3009.ts); any other by the library. */
  async verify(payload: PaymentPayload, requirements: PaymentRequirements) {
    return (
      (await verifyPlainTransferAuthorization(this.chain, payload, requirements)) ??
      this.verifyWithLibrary(payload, requirements)
    );
  }

  /** x402's own `exact` verification (@x402/evm): smart wallets, ERC-6492, Permit2; tests hold the native one to it. */
  async verifyWithLibrary(payload: PaymentPayload, requirements: PaymentRequirements) {
    const { exact } = await loadEvmModules();
    return new exact.ExactEvmScheme(await this.signer()).verify(payload, requirements);
  }

  /**
   * A plain EIP-3009 authorization is settled with the others that come close together, in one transaction of the
   * settlement wallet (settleBatch); any other (smart wallets, ERC-6492) by the library, in a transaction of its own.
   */
  async settle(payment: PaymentRecord): Promise<SettleResponse> {
    const calldata = transferWithAuthorizationCalldata(payment.payload);
    if (calldata && (await this.batchesCanBeSent())) {
      const hash = await this.batches.add({ payment, calldata });
      try {
        return await this.awaitSettlement({ ...payment, status: "settling", settleTxHash: hash });
      } finally {
        this.batches.batchEnded();
      }
    }
    const { exact } = await loadEvmModules();
    return new exact.ExactEvmScheme(await this.signer(payment.id)).settle(payment.payload, payment.requirements);
  }

  private readonly batches: SettlementBatches<{ payment: PaymentRecord; calldata: string }, string>;
  private multicall?: Promise<boolean>;

  /** Whether the payment chain has Multicall3, which runs a batch (every public chain has it; a bare node may not). */
  private batchesCanBeSent(): Promise<boolean> {
    if (!this.multicall) {
      this.multicall = this.chain.provider.getCode(MULTICALL3_ADDRESS).then((code) => code !== "0x");
      this.multicall.catch(() => (this.multicall = undefined)); // asked again next time
    }
    return this.multicall;
  }

  /**
   * One transaction of the settlement wallet settles a batch of payments: Multicall3's aggregate3 calls each payment's
   * transferWithAuthorization on its asset, each allowed to fail on its own (one authorization used elsewhere or a
   * payer's balance gone fails that payment alone, not the batch). Which payments it settled is read from its receipt
   * per payment (awaitSettlement: paidIn). Answers the transaction's hash for each.
   */
  private async settleBatch(items: { payment: PaymentRecord; calldata: string }[]): Promise<string[]> {
    const calls = (allowFailure: boolean) =>
      items.map(({ payment, calldata }) => ({ target: payment.asset, allowFailure, callData: calldata }));
    const data = multicall3Interface.encodeFunctionData("aggregate3", [calls(true)]);
    const hash = await this.send(
      items.map((i) => i.payment.id),
      MULTICALL3_ADDRESS,
      data,
      await this.batchGas(multicall3Interface.encodeFunctionData("aggregate3", [calls(false)]), items.length),
    );
    this.services.logger.info({ hash, payments: items.length }, "settlement batch sent");
    return items.map(() => hash);
  }

  /**
   * The gas of a batch, estimated with every call required to succeed: with failures allowed, the lowest gas at which
   * the batch does not revert may starve its calls (each fails out of gas, the batch still succeeds). When a call
   * would fail, each is given a fixed allowance instead.
   */
  private async batchGas(strictData: string, count: number): Promise<bigint> {
    try {
      return await this.chain.provider.estimateGas({
        from: this.wallet.address,
        to: MULTICALL3_ADDRESS,
        data: strictData,
      });
    } catch (error) {
      if (isChainUnavailable(error)) throw error;
      return BATCH_BASE_GAS + BATCH_GAS_PER_PAYMENT * BigInt(count);
    }
  }

  private async signer(paymentId?: string) {
    const { viem } = await loadEvmModules();
    // Through the chain's provider: its failover and retries cover the facilitator's reads too.
    const c = (this.client ??= viem.createPublicClient({
      transport: viem.custom(
        { request: ({ method, params }) => this.chain.provider.request(method, (params ?? []) as unknown[]) },
        { retryCount: 0 },
      ),
      pollingInterval: 200,
    }));
    const codes = new Map<string, ReturnType<typeof c.getCode>>();
    return {
      getAddresses: () => [this.wallet.address as Hex],
      // Simulations run on the pending block: on "latest", an idle local chain (automine, no block for a minute)
      // reports that block's old timestamp, and an authorization valid from now-60 s (what the CLI signs) looks
      // not yet valid.
      readContract: (args: {
        address: Hex;
        abi: readonly unknown[];
        functionName: string;
        args?: readonly unknown[];
      }) => c.readContract({ ...args, abi: args.abi as Abi, blockTag: "pending" } as never),
      verifyTypedData: (args: Record<string, unknown>) => c.verifyTypedData(args as never),
      // The library asks twice for the payer's code in one verification: one answer serves both.
      getCode: (args: { address: Hex }) => {
        const key = args.address.toLowerCase();
        let code = codes.get(key);
        if (!code) {
          code = c.getCode(args);
          codes.set(key, code);
          code.catch(() => codes.delete(key));
        }
        return code;
      },
      // Mined and confirmed on the canonical chain, sent again or replaced with higher fees on the way (untilMined).
      waitForTransactionReceipt: async (args: { hash: Hex }) =>
        c.getTransactionReceipt({
          hash: (paymentId
            ? (await this.untilMined(paymentId, args.hash)).hash
            : await this.untilReceipt(args.hash)) as Hex,
        }),
      writeContract: (args: {
        address: Hex;
        abi: readonly unknown[];
        functionName: string;
        args: readonly unknown[];
        gas?: bigint;
        dataSuffix?: Hex;
      }) => {
        const data = viem.encodeFunctionData({
          abi: args.abi as Abi,
          functionName: args.functionName,
          args: args.args,
        });
        return this.send(
          paymentId ? [paymentId] : [],
          args.address,
          args.dataSuffix ? viem.concatHex([data, args.dataSuffix]) : data,
          args.gas,
        );
      },
      sendTransaction: (args: { to: Hex; data: Hex }) => this.send(paymentId ? [paymentId] : [], args.to, args.data),
    };
  }

  /**
   * Signs and sends a transaction of the settlement wallet that settles `paymentIds` (none: a transaction of the
   * library's that pays nothing itself, e.g. a smart wallet's deployment). It is stored on each payment before it is
   * broadcast (write-ahead); refused by the node, the payments go back to reserved.
   */
  private async send(paymentIds: string[], to: string, data: string, gas?: bigint, retried = false): Promise<Hex> {
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
        ticket = nonceOrderOf(this.services).register(chainId, from, nonce);
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
      verdict = await committed!.broadcast(() => broadcast(provider, signed.raw, signed.hash));
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

  /**
   * A payment's settlement once its transaction is mined and confirmed: settled when the receipt shows the payer's
   * authorization used and the transfer paid (a batch settles each of its payments or not, whatever its status says);
   * a final SettlementError when it reverted or did not use the authorization.
   */
  async awaitSettlement(payment: PaymentRecord): Promise<SettleResponse> {
    const receipt = await this.untilMined(payment.id, payment.settleTxHash!);
    if (receipt.status !== 1) throw new SettlementError(`settlement ${receipt.hash} reverted`, true, true);
    if (!paidIn(receipt, payment))
      throw new SettlementError(`settlement ${receipt.hash} did not use the payment's authorization`, true, true);
    return settledBy(receipt, payment);
  }

  /** Waits on settlement transactions in progress, by every hash they had: the payments of one batch share one wait. */
  private readonly waits = new Map<string, Promise<TransactionReceipt>>();

  /**
   * Waits until one of the settlement transactions of `paymentId` is mined and confirmed on the canonical chain, and
   * answers its receipt (watchSettlement). Every payment a transaction settles shares one wait.
   */
  private untilMined(paymentId: string, hash: string): Promise<TransactionReceipt> {
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
  private async untilReceipt(hash: string): Promise<string> {
    for (;;) {
      const head = this.chain.blocks.head;
      if (await this.chain.provider.getTransactionReceipt(hash)) return hash;
      await this.chain.blocks.next(head, RECHECK_MS);
    }
  }
}
