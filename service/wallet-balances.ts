import { formatEther, type Provider } from "ethers";
import type { Logger } from "./logger";
import type { ChainRegistry } from "./chains/registry";
import type { Config } from "./config";
import type { Relayer } from "./engine/relayer";
import type { ServiceWallets } from "./signers/service-wallets";

/** What the wallet-balance reader uses. */
export type BalanceServices = {
  chains: ChainRegistry;
  config: Config;
  logger: Logger;
  relayer: Pick<Relayer, "addresses">;
  wallets: Pick<ServiceWallets, "settlement" | "refund">;
};

/** A wallet the service signs with and pays gas from, on one chain. */
export interface ServiceWallet {
  role: "relayer" | "settlement" | "refund";
  chainId: number;
  address: string;
  provider: Provider;
}

export interface WalletBalance {
  role: ServiceWallet["role"];
  chainId: number;
  address: string;
  /** Native balance in wei at the last reading (undefined until one succeeded). */
  wei?: bigint;
  /** What {@link LOW_BALANCE} transactions cost at the chain's max fee at that reading. */
  lowBelowWei?: bigint;
  low?: boolean;
  readAt?: number;
}

/** A wallet is low when it could pay for fewer than `transactions` transactions of `gas` at the chain's current max fee. */
export const LOW_BALANCE = { transactions: 100n, gas: 200_000n } as const;

export interface WalletBalancesOptions {
  /** Background refresh period (default 60 s). */
  refreshMs?: number;
  /** Each read's timeout (default 5 s): a stalled chain leaves that wallet's last reading in place. */
  readTimeoutMs?: number;
}

/**
 * The native balances of the service's relayer (on every chain it relays on) and x402 settlement wallet (on the
 * payment chain), read in the background: at start (a low wallet is logged as a warning, naming what to send), every
 * minute (a wallet that becomes low is logged again), and on a /metrics scrape when the last reading is older than
 * 15 s, which waits for it only briefly. Nothing here ever blocks on a chain that does not answer.
 */
export class WalletBalances {
  private readonly balances: WalletBalance[];
  private refreshing?: Promise<void>;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly wallets: ServiceWallet[],
    private readonly logger: Logger,
    private readonly options: WalletBalancesOptions = {},
  ) {
    this.balances = wallets.map((w) => ({ role: w.role, chainId: w.chainId, address: w.address }));
  }

  /**
   * The wallets of a running service: its relayer keys on each served chain, its settlement key and its refund key on
   * the x402 payment chain.
   */
  static forService(services: BalanceServices): WalletBalances {
    const { config } = services;
    const wallets: ServiceWallet[] = [];
    for (const chain of services.chains.list()) {
      for (const address of services.relayer.addresses(chain.chainId))
        wallets.push({ role: "relayer", chainId: chain.chainId, address, provider: chain.provider });
    }
    const paymentChain = services.chains.find(config.x402PaymentChainId);
    const settlement = services.wallets.settlement;
    // X402_ENABLED: a service that starts with it takes payments (compose refuses a start that could not).
    if (config.X402_ENABLED && settlement && !config.X402_FACILITATOR_URL && paymentChain) {
      wallets.push({
        role: "settlement",
        chainId: paymentChain.chainId,
        address: settlement.address,
        provider: paymentChain.provider,
      });
    }
    // The refund wallet pays gas (and USDC) on the payment chain when a payment is owed back.
    const refund = services.wallets.refund;
    if (config.X402_ENABLED && refund && paymentChain)
      wallets.push({
        role: "refund",
        chainId: paymentChain.chainId,
        address: refund.address,
        provider: paymentChain.provider,
      });
    return new WalletBalances(wallets, services.logger.child({ component: "wallet-balances" }));
  }

  /** Reads once now (warning about low wallets), then every refresh period. */
  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs ?? 60_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The last readings; when they are older than `maxAgeMs`, a refresh is started and awaited for at most `waitMs`. */
  async current(maxAgeMs = 15_000, waitMs = 1000): Promise<WalletBalance[]> {
    const oldest = Math.min(...this.balances.map((b) => b.readAt ?? 0));
    if (this.balances.length && Date.now() - oldest > maxAgeMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.refresh(), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
    }
    return this.balances.map((b) => ({ ...b }));
  }

  /** Reads every wallet (one refresh at a time); resolves when all have answered or timed out. */
  refresh(): Promise<void> {
    this.refreshing ??= Promise.all(this.wallets.map((wallet, i) => this.read(wallet, this.balances[i]))).then(
      () => void (this.refreshing = undefined),
      () => void (this.refreshing = undefined),
    );
    return this.refreshing;
  }

  private async read(wallet: ServiceWallet, balance: WalletBalance): Promise<void> {
    const ms = this.options.readTimeoutMs ?? 5000;
    try {
      const [wei, fees] = await Promise.all([
        withTimeout(wallet.provider.getBalance(wallet.address), ms),
        withTimeout(wallet.provider.getFeeData(), ms),
      ]);
      const perGas = fees.maxFeePerGas ?? fees.gasPrice ?? 0n;
      const lowBelowWei = LOW_BALANCE.transactions * LOW_BALANCE.gas * perGas;
      const wasLow = balance.low;
      Object.assign(balance, { wei, lowBelowWei, low: wei < lowBelowWei, readAt: Date.now() });
      if (balance.low && !wasLow) {
        this.logger.warn(
          {
            chainId: wallet.chainId,
            wallet: wallet.role,
            address: wallet.address,
            balance: formatEther(wei),
            lowBelow: formatEther(lowBelowWei),
          },
          `the ${wallet.role} wallet ${wallet.address} is low on chain ${wallet.chainId}: ${formatEther(wei)} left, less than ${LOW_BALANCE.transactions} transactions at the current fees (${formatEther(lowBelowWei)}); fund it`,
        );
      }
    } catch (error) {
      this.logger.debug(
        { chainId: wallet.chainId, wallet: wallet.role, err: (error as Error).message },
        "wallet balance not read",
      );
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The balances of a running service's wallets, following its relayer keys: once started, a change of keys (a key
 * added or let go by the rotation) reads the wallets again from scratch. Before start (and after stop) it has none.
 */
export class WalletBalanceWatch {
  private balances?: WalletBalances;
  private stopped = false;

  constructor(private readonly services: BalanceServices) {}

  start(): void {
    if (this.stopped) return;
    this.balances?.stop();
    this.balances = WalletBalances.forService(this.services);
    this.balances.start();
  }

  /** The relayer keys changed: watched again when the watch runs. */
  keysChanged(): void {
    if (this.balances) this.start();
  }

  stop(): void {
    this.stopped = true;
    this.balances?.stop();
  }

  /** Reads every wallet now (see WalletBalances.refresh). */
  async refresh(): Promise<void> {
    await this.balances?.refresh();
  }

  /** The last readings (see WalletBalances.current); none before start. */
  async current(maxAgeMs?: number, waitMs?: number): Promise<WalletBalance[]> {
    return (await this.balances?.current(maxAgeMs, waitMs)) ?? [];
  }
}
