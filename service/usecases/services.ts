import type { PrepareRateLimiter } from "../auth/rate-limits";
import type { RequestLimits } from "../auth/request-limits";
import type { ChainRegistry } from "../chains/registry";
import type { Config } from "../config";
import type { Relayer } from "../engine/relayer";
import type { RelayerKeyRotation } from "../engine/relayer-key-rotation";
import type { BatchRunner } from "../engine/runner";
import type { PreparedExpiry } from "../engine/prepared-expiry";
import type { WebhookDispatcher } from "../events/dispatcher";
import type { EventNotifier } from "../events/notifier";
import type { EventStreams } from "../events/stream";
import type { Logger } from "../logger";
import type { Mailer } from "../onboarding/mailer";
import type { KycProvider } from "../onboarding/provider";
import type { Prices } from "../payments/pricing";
import type { PaymentRefunder } from "../payments/refunds";
import type { PaymentSettler } from "../payments/settler";
import type { X402 } from "../payments/x402";
import type { ServiceWallets } from "../signers/service-wallets";
import type { Stores } from "../store/stores";
import type { PlannerStatistics } from "../store/planner-statistics";
import type { WalletBalanceWatch } from "../wallet-balances";

/**
 * Everything the service is made of, as the routes and the app receive it; built once per process by compose().
 * Only the top of the house holds it whole (the app, the routes, this module and server.ts); every part below is
 * handed the narrow view it declares it needs.
 */
export interface Services extends Stores {
  config: Config;
  /** Where clients reach this service: PUBLIC_BASE_URL, else the address it listens on (opened before compose). */
  baseUrl: string;
  logger: Logger;
  chains: ChainRegistry;
  rateLimiter: PrepareRateLimiter;
  /** Limits on uploads and on status reads that ask the chains. */
  requestLimits: RequestLimits;
  runner: BatchRunner;
  /** Deletes prepared batches nobody sent once they expire (PREPARED_BATCH_TTL_HOURS). */
  preparedExpiry: PreparedExpiry;
  prices: Prices;
  relayer: Relayer;
  /** Applies the operator's relayer key additions, drains and removals while the service runs. */
  relayerKeyRotation: RelayerKeyRotation;
  /** The wallets the service signs with (relayer keys, settlement key), wherever their keys are kept. */
  wallets: ServiceWallets;
  /** The x402 payment gate; undefined when x402 is disabled or not configured on this deployment. */
  x402?: X402;
  /** What happens to reserved payments (settled, released, recovered after a restart); undefined as x402 is. */
  paymentSettler?: PaymentSettler;
  /** Payments owed back after a failure of ours: sent by the refund wallet when there is one; undefined as x402 is. */
  paymentRefunder?: PaymentRefunder;
  /** Balances of the relayer, settlement and refund wallets, read in the background once the service listens. */
  walletBalances: WalletBalanceWatch;
  /** The embedded database's planner statistics, refreshed in the background once the service listens. */
  plannerStatistics: PlannerStatistics;
  /** Who decides a KYC review (the operator), and the mailer of invitations (undefined without SMTP_URL). */
  kycProvider: KycProvider;
  mailer?: Mailer;
  /** Events (service/events/): the commit wake-ups, the webhook dispatcher, the SSE streams. */
  eventNotifier: EventNotifier;
  webhookDispatcher: WebhookDispatcher;
  eventStreams: EventStreams;
}
