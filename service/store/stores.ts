import { FaucetClaims } from "./faucet-claims";
import type { Sealer } from "../crypto/sealed";
import type { Logger } from "../logger";
import { Agents } from "./agents";
import { AuditLog } from "./audit-log";
import { ApiKeys } from "./api-keys";
import { Batches } from "./batches";
import { BatchTransactions } from "./batch-transactions";
import { BatchSearch } from "./batch-search";
import { Credits } from "./credits";
import type { Db } from "./db";
import { Dividends } from "./dividends";
import { Documents } from "./documents";
import { IdempotentRequests } from "./idempotent-requests";
import { Investors } from "./investors";
import { KycStore } from "./kyc";
import { KycLinks } from "./kyc-links";
import { Offerings } from "./offerings";
import { OperatorSessions } from "./operator-sessions";
import { Operators } from "./operators";
import { Payments } from "./payments";
import { PaymentRefunds } from "./payment-refunds";
import { PaymentSearch } from "./payment-search";
import { RamsExecutors } from "./rams";
import { RelayerKeys } from "./relayer-keys";
import { Signers } from "./signers";
import { TokenControls } from "./token-controls";
import { Tokens } from "./tokens";
import { WalletLocks } from "./wallet-locks";
import { WalletNonces } from "./wallet-nonces";
import { WebhookAdmin } from "./webhook-admin";
import { Webhooks } from "./webhooks";
import { WebhookDeliveries } from "./webhook-deliveries";

/**
 * Every aggregate of the store over one database. A part of the service that needs some of them says which, e.g.
 * `Pick<Stores, "batches" | "payments">`, and is handed the composition root's object (service/composition.ts).
 */
export interface Stores {
  db: Db;
  /** Seals what the database may hold only encrypted (crypto/sealed.ts). */
  sealer: Sealer;
  apiKeys: ApiKeys;
  credits: Credits;
  signers: Signers;
  tokens: Tokens;
  agents: Agents;
  /** RAMS executors the operator set up (default executor of a principal). */
  ramsExecutors: RamsExecutors;
  investors: Investors;
  dividends: Dividends;
  /** Issuer controls confirmed on each token (freezes, forced transfers, recoveries, pauses, roles). */
  tokenControls: TokenControls;
  offerings: Offerings;
  documents: Documents;
  batches: Batches;
  /** One transaction of a batch at a time: signed, broadcast, confirmed, replaced, reorged (the engine's runs). */
  batchTransactions: BatchTransactions;
  walletNonces: WalletNonces;
  /** Relayer keys the operator added, drained or removed on a running service (key rotation). */
  relayerKeys: RelayerKeys;
  /** Held by whoever takes a service wallet's nonce, until its broadcast: keeps instances' broadcasts in nonce order. */
  walletLocks: WalletLocks;
  payments: Payments;
  /** Payments owed back after a failure of the service's, and their refunds. */
  paymentRefunds: PaymentRefunds;
  kyc: KycStore;
  /** Investors' single-use onboarding links and their invitations (onboarding/). */
  kycLinks: KycLinks;
  /** Webhook endpoints (events/). */
  webhooks: Webhooks;
  /** Webhook deliveries: claimed with a lease, attempted, listed, redelivered (events/dispatcher.ts). */
  webhookDeliveries: WebhookDeliveries;
  faucetClaims: FaucetClaims;
  /** Answers kept for retries under an Idempotency-Key (the paid write routes). */
  idempotentRequests: IdempotentRequests;
  /** The operator console's accounts and sign-in links, its sessions, and the audit log of operators' changes. */
  operators: Operators;
  operatorSessions: OperatorSessions;
  auditLog: AuditLog;
  /** What the console lists and counts, read from the tables the aggregates above write. */
  batchSearch: BatchSearch;
  paymentSearch: PaymentSearch;
  webhookAdmin: WebhookAdmin;
}

/**
 * The aggregates over `db`, built once per process. `meteredMethods`: the balances each plan grants credits of
 * (methods/metering.ts, derived from the methods' declarations).
 */
export function openStores(db: Db, sealer: Sealer, logger: Logger, meteredMethods: readonly string[]): Stores {
  return {
    db,
    sealer,
    apiKeys: new ApiKeys(db),
    credits: new Credits(db, meteredMethods),
    signers: new Signers(db),
    tokens: new Tokens(db),
    agents: new Agents(db),
    ramsExecutors: new RamsExecutors(db),
    investors: new Investors(db),
    dividends: new Dividends(db),
    tokenControls: new TokenControls(db),
    offerings: new Offerings(db),
    documents: new Documents(db),
    batches: new Batches(db, sealer),
    batchTransactions: new BatchTransactions(db, sealer),
    walletNonces: new WalletNonces(db),
    relayerKeys: new RelayerKeys(db),
    walletLocks: new WalletLocks(db, logger.child({ component: "wallet-locks" })),
    payments: new Payments(db, sealer),
    paymentRefunds: new PaymentRefunds(db, sealer),
    kyc: new KycStore(db, sealer),
    kycLinks: new KycLinks(db),
    webhooks: new Webhooks(db, sealer),
    webhookDeliveries: new WebhookDeliveries(db),
    faucetClaims: new FaucetClaims(db),
    idempotentRequests: new IdempotentRequests(db),
    operators: new Operators(db),
    operatorSessions: new OperatorSessions(db),
    auditLog: new AuditLog(db),
    batchSearch: new BatchSearch(db),
    paymentSearch: new PaymentSearch(db),
    webhookAdmin: new WebhookAdmin(db),
  };
}
