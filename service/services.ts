import type { ChainRegistry } from "./chains/registry";
import type { Config } from "./config";
import type { Logger } from "./logger";
import type { PrepareRateLimiter } from "./auth/rate-limits";
import type { BatchRunner } from "./engine/runner";
import type { ApiKeys } from "./store/api-keys";
import type { Batches } from "./store/batches";
import type { Dividends } from "./store/dividends";
import type { Documents } from "./store/documents";
import type { Investors } from "./store/investors";
import type { Offerings } from "./store/offerings";
import type { Payments } from "./store/payments";
import type { WalletLocks } from "./store/wallet-locks";
import type { WalletNonces } from "./store/wallet-nonces";
import type { Prices } from "./payments/pricing";
import type { X402 } from "./payments/x402";
import type { Relayer } from "./engine/relayer";
import type { Tokens } from "./store/tokens";
import type { Agents } from "./store/agents";
import type { Credits } from "./store/credits";
import type { Db } from "./store/db";
import type { Signers } from "./store/signers";
import type { RamsExecutors } from "./store/rams";
import type { KycStore } from "./store/kyc";
import type { KycProvider } from "./onboarding/provider";
import type { Mailer } from "./onboarding/mailer";
import type { Sealer } from "./crypto/sealed";
import type { WalletBalances } from "./wallet-balances";
import type { Webhooks } from "./store/webhooks";
import type { EventNotifier } from "./events/notifier";
import type { WebhookDispatcher } from "./events/dispatcher";
import type { EventStreams } from "./events/stream";

/** Everything a route, a method or the engine may use; built once per process by main.ts (or by a test). */
export interface Services {
  config: Config;
  /** Where clients reach this service: PUBLIC_BASE_URL, else the address it listens on (set once listening). */
  baseUrl: string;
  logger: Logger;
  db: Db;
  /** Seals what the database may hold only encrypted (crypto/sealed.ts). */
  sealer: Sealer;
  chains: ChainRegistry;
  apiKeys: ApiKeys;
  credits: Credits;
  signers: Signers;
  tokens: Tokens;
  agents: Agents;
  /** RAMS executors the operator set up (default executor of a principal). */
  ramsExecutors: RamsExecutors;
  investors: Investors;
  dividends: Dividends;
  offerings: Offerings;
  documents: Documents;
  batches: Batches;
  rateLimiter: PrepareRateLimiter;
  runner: BatchRunner;
  walletNonces: WalletNonces;
  /** Held by whoever takes a service wallet's nonce, until its broadcast: keeps instances' broadcasts in nonce order. */
  walletLocks: WalletLocks;
  payments: Payments;
  prices: Prices;
  relayer: Relayer;
  /** The x402 payment gate; undefined when x402 is disabled or not configured on this deployment. */
  x402?: X402;
  /** Balances of the relayer and settlement wallets, read in the background (set once the service listens). */
  walletBalances?: WalletBalances;
  /** Investor onboarding: records and links, who decides (the operator), and the mailer (undefined without SMTP_URL). */
  kyc: KycStore;
  kycProvider: KycProvider;
  mailer?: Mailer;
  /** Events (service/events/): webhook endpoints and deliveries, the commit wake-ups, the dispatcher, the SSE streams. */
  webhooks: Webhooks;
  eventNotifier: EventNotifier;
  webhookDispatcher: WebhookDispatcher;
  eventStreams: EventStreams;
}
