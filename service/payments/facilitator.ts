import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { Abi, Hex, PublicClient } from "viem";
import { paidIn, settledBy, transferWithAuthorizationCalldata, verifyPlainTransferAuthorization } from "./eip3009";
import { SettlementBatches } from "./settlement-batches";
import { SettlementTransactions } from "./settlement-transactions";
import { SettlementError, type FacilitatorServices, type PaymentFacilitator } from "./payment-facilitator";
import { multicall3Interface } from "../chains/contracts";
import { MULTICALL3_ADDRESS } from "../chains/networks";
import { isChainUnavailable } from "../chains/rpc-errors";
import type { Chain } from "../chains/registry";
import type { PaymentRecord } from "../store/payments";
import type { ServiceSigner } from "../signers/signer";

/** Payments one settlement transaction carries at most (each transferWithAuthorization costs ~60-90k gas). */
const SETTLEMENT_BATCH_MAX = 50;
/** When a batch cannot be estimated (one of its payments would fail), each payment is given this much gas, plus the batch's own. */
const BATCH_GAS_PER_PAYMENT = 150_000n;
const BATCH_BASE_GAS = 60_000n;

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

/**
 * The official EVM `exact` facilitator (EIP-3009 transferWithAuthorization) run in-process against the payment
 * chain's RPC. Its signer's writes go through the service's nonce manager, and each settlement transaction is stored
 * on its payment before it is broadcast, so a crash mid-settlement is resumed, never repeated.
 */
export class InProcessFacilitator implements PaymentFacilitator {
  private client?: PublicClient;
  readonly settlementAddress: string;
  readonly settlesInOperation = true;
  /** The settlement wallet's transactions: sent write-ahead, watched until mined (payments/settlement-transactions.ts). */
  private readonly transactions: SettlementTransactions;

  constructor(
    private readonly services: FacilitatorServices,
    private readonly chain: Chain,
    private readonly wallet: ServiceSigner,
    /** Keeps the settlement wallet's nonces in line with its chain (the engine's nonce healing, handed in by the composition). */
    private readonly healWalletNonces: () => Promise<void>,
  ) {
    this.settlementAddress = wallet.address;
    this.transactions = new SettlementTransactions(services, chain, wallet);
    this.batches = new SettlementBatches((items) => this.settleBatch(items), {
      gatherMs: services.config.X402_SETTLEMENT_BATCH_MS,
      max: SETTLEMENT_BATCH_MAX,
    });
  }

  healNonces(): Promise<void> {
    return this.healWalletNonces();
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
    const hash = await this.transactions.send(
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
            ? (await this.transactions.untilMined(paymentId, args.hash)).hash
            : await this.transactions.untilReceipt(args.hash)) as Hex,
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
        return this.transactions.send(
          paymentId ? [paymentId] : [],
          args.address,
          args.dataSuffix ? viem.concatHex([data, args.dataSuffix]) : data,
          args.gas,
        );
      },
      sendTransaction: (args: { to: Hex; data: Hex }) =>
        this.transactions.send(paymentId ? [paymentId] : [], args.to, args.data),
    };
  }

  /**
   * A payment's settlement once its transaction is mined and confirmed: settled when the receipt shows the payer's
   * authorization used and the transfer paid (a batch settles each of its payments or not, whatever its status says);
   * a final SettlementError when it reverted or did not use the authorization.
   */
  async awaitSettlement(payment: PaymentRecord): Promise<SettleResponse> {
    const receipt = await this.transactions.untilMined(payment.id, payment.settleTxHash!);
    if (receipt.status !== 1) throw new SettlementError(`settlement ${receipt.hash} reverted`, true, true);
    if (!paidIn(receipt, payment))
      throw new SettlementError(`settlement ${receipt.hash} did not use the payment's authorization`, true, true);
    return settledBy(receipt, payment);
  }
}
