import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { Wallet, keccak256 } from "ethers";
import { concatHex, createPublicClient, encodeFunctionData, http, type Abi, type Hex } from "viem";
import { untilFound } from "../chains/blocks";
import { sendRaw } from "../chains/broadcast";
import { nonceOrderOf, type NonceTicket } from "../chains/nonce-order";
import type { Chain } from "../chains/registry";
import type { Services } from "../services";
import type { PaymentRecord } from "../store/payments";

/** Verifies and settles x402 payments: in-process with the service's settlement key, or an external facilitator. */
export interface PaymentFacilitator {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payment: PaymentRecord): Promise<SettleResponse>;
  /** Address that signs settlements (in-process only). */
  readonly settlementAddress?: string;
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
export class InProcessFacilitator implements PaymentFacilitator {
  private readonly wallet: Wallet;
  private readonly client;
  readonly settlementAddress: string;

  constructor(
    private readonly services: Services,
    private readonly chain: Chain,
    settlementKey: string,
  ) {
    this.wallet = new Wallet(settlementKey);
    this.settlementAddress = this.wallet.address;
    this.client = createPublicClient({ transport: http(chain.rpcUrl), pollingInterval: 200 });
  }

  verify(payload: PaymentPayload, requirements: PaymentRequirements) {
    return new ExactEvmScheme(this.signer()).verify(payload, requirements);
  }

  settle(payment: PaymentRecord) {
    return new ExactEvmScheme(this.signer(payment.id)).settle(payment.payload, payment.requirements);
  }

  private signer(paymentId?: string) {
    const c = this.client;
    return {
      getAddresses: () => [this.wallet.address as Hex],
      // Simulations run on the pending block: on "latest", an idle local chain (automine, no block for a minute)
      // reports that block's old timestamp, and an authorization valid from now-60 s (what the CLI signs) looks
      // not yet valid.
      readContract: (args: { address: Hex; abi: readonly unknown[]; functionName: string; args?: readonly unknown[] }) =>
        c.readContract({ ...args, abi: args.abi as Abi, blockTag: "pending" } as never),
      verifyTypedData: (args: Record<string, unknown>) => c.verifyTypedData(args as never),
      getCode: (args: { address: Hex }) => c.getCode(args),
      // Woken by the chain's shared block watcher, like the batch runner's receipt waits.
      waitForTransactionReceipt: (args: { hash: Hex }) =>
        untilFound(this.chain.blocks, () => c.getTransactionReceipt(args).catch(() => null), { timeoutMs: 120_000 }),
      writeContract: (args: { address: Hex; abi: readonly unknown[]; functionName: string; args: readonly unknown[]; gas?: bigint; dataSuffix?: Hex }) => {
        const data = encodeFunctionData({ abi: args.abi as Abi, functionName: args.functionName, args: args.args });
        return this.send(paymentId, args.address, args.dataSuffix ? concatHex([data, args.dataSuffix]) : data, args.gas);
      },
      sendTransaction: (args: { to: Hex; data: Hex }) => this.send(paymentId, args.to, args.data),
    };
  }

  private async send(paymentId: string | undefined, to: Hex, data: Hex, gas?: bigint, retried = false): Promise<Hex> {
    const { provider, chainId } = this.chain;
    const from = this.wallet.address;
    const [fees, estimate] = await Promise.all([provider.getFeeData(), gas ? Promise.resolve(gas) : provider.estimateGas({ from, to, data })]);
    let ticket: NonceTicket | undefined;
    let refusal: string | undefined;
    let signed: { raw: string; hash: string; nonce: number };
    const release = await this.services.walletLocks.hold(chainId, from);
    try {
      signed = await this.services.db.transaction(async (q) => {
        ticket?.drop(); // a retried transaction body takes its nonce again
        const nonce = await this.services.walletNonces.take(q, chainId, from, () => provider.getTransactionCount(from, "pending"));
        ticket = nonceOrderOf(this.services).register(chainId, from, nonce);
        const raw = await this.wallet.signTransaction({
          to,
          data,
          nonce,
          chainId,
          type: 2,
          gasLimit: (estimate * 12n) / 10n,
          maxFeePerGas: fees.maxFeePerGas ?? fees.gasPrice ?? 0n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? fees.gasPrice ?? 0n,
        });
        const hash = keccak256(raw);
        if (paymentId) await this.services.payments.markSettling(q, paymentId, raw, hash);
        return { raw, hash, nonce };
      });
      // Committed: broadcast in nonce order among this process's transactions of the settlement wallet (and, still
      // under the wallet's lock, ahead of any other instance's next nonce).
      const committed = ticket;
      ticket = undefined;
      refusal = await committed!.broadcast(() => sendRaw(provider, signed.raw, signed.hash));
    } finally {
      ticket?.drop();
      await release();
    }
    const { hash, nonce } = signed;
    if (refusal) {
      await this.services.walletNonces.giveBack(chainId, from, nonce);
      if (paymentId) await this.services.payments.unmarkSettling(paymentId);
      if (!retried && /nonce too low|already been used/i.test(refusal)) {
        // The settlement key was used elsewhere: catch up with the chain and sign again once.
        await this.services.walletNonces.syncFloor(chainId, from, await provider.getTransactionCount(from, "pending"));
        return this.send(paymentId, to, data, gas, true);
      }
      throw new Error(`settlement transaction refused: ${refusal}`);
    }
    return hash as Hex;
  }
}
