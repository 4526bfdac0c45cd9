import path from "node:path";
import { PrepareRateLimiter as RateLimiter } from "./auth/rate-limits";
import { RequestLimits } from "./auth/request-limits";
import { ChainRegistry, type Chain } from "./chains/registry";
import type { Config } from "./config";
import { assertDataKey } from "./store/key-check";
import { useNativeKeccak } from "./crypto/keccak";
import { Sealer } from "./crypto/sealed";
import { Relayer } from "./engine/relayer";
import { RelayerKeyRotation } from "./engine/relayer-key-rotation";
import { healWalletNonces } from "./engine/nonce-healing";
import { BatchRunner } from "./engine/runner";
import { PreparedExpiry } from "./engine/prepared-expiry";
import { WebhookDispatcher } from "./events/dispatcher";
import { EventNotifier } from "./events/notifier";
import { EventStreams } from "./events/stream";
import { settledWithin } from "./lifecycle/bounded";
import { createLogger, type Logger } from "./logger";
import { methodHooks } from "./methods/hooks";
import { METERED_METHODS } from "./methods/metering";
import { createMailer } from "./onboarding/mailer";
import { OperatorKycProvider } from "./onboarding/provider";
import { InProcessFacilitator } from "./payments/facilitator";
import { ExternalFacilitator, type FacilitatorServices } from "./payments/payment-facilitator";
import { Prices } from "./payments/pricing";
import { BatchSettlement } from "./payments/batch-settlement";
import { NO_PAYMENTS } from "./payments/run-payments";
import { paymentTermsOf, X402ConfigError } from "./payments/payment-terms";
import { RefundTransactions } from "./payments/refund-transactions";
import { PaymentRefunder } from "./payments/refunds";
import { PaymentSettler } from "./payments/settler";
import { X402 } from "./payments/x402";
import { forgetFinalStatus } from "./reads/transaction-status";
import { ensureDataEncryptionKey } from "./runtime-files";
import { checkChainInstances } from "./store/chain-instances";
import { openDb, type Db } from "./store/db";
import { migrate } from "./store/migrate";
import { assertSchemaCurrent } from "./store/schema-version";
import { openStores, type Stores } from "./store/stores";
import { openServiceWallets, type ServiceWallets } from "./signers/service-wallets";
import { PlannerStatistics } from "./store/planner-statistics";
import { WalletBalanceWatch } from "./wallet-balances";
import type { Services } from "./usecases/services";

export type { Services };

export interface ComposeOptions {
  /** Use this database instead of opening the configured one (tests share one); it is not closed by dispose. */
  db?: Db;
  logger?: Logger;
  /** The address the service listens on (the port is opened before it is composed): its base URL without PUBLIC_BASE_URL. */
  listeningUrl?: string;
}

/** The composed service and how to close what compose opened. */
export interface Composed {
  services: Services;
  /** Closes the chains' providers and the database compose opened (bounded). */
  dispose(): Promise<void>;
}

/** How long a stop waits for the database to close (PGlite writes its files; a pool ends its connections). */
const DB_CLOSE_MS = 5_000;

/**
 * The composition root: opens the database (migrated in the local sandbox, checked against this version's schema in
 * production), builds the stores, the chains, the engine (runner and
 * relayer), the payments (x402 and its facilitator) and the events once, and wires each part to the others. A start
 * refused for its configuration (a payment chain not served, a key that cannot open the database's sealed values)
 * leaves nothing open behind it.
 */
export async function compose(config: Config, options: ComposeOptions = {}): Promise<Composed> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, config.LOG_FORMAT);
  if (!useNativeKeccak())
    logger.warn("no native keccak build for this platform: hashing stays in JavaScript (slower, same results)");
  const db =
    options.db ??
    (await openDb({
      databaseUrl: config.DATABASE_URL,
      schema: config.DATABASE_SCHEMA,
      dataDir: path.join(config.environmentDir, "pglite"),
    }));
  const chains = new ChainRegistry(config, logger);
  let wallets: ServiceWallets | undefined;
  let services: Services | undefined;
  const dispose = async () => {
    chains.destroy();
    await services?.relayer.keys.close();
    await wallets?.close();
    if (!options.db && !(await settledWithin(db.close(), DB_CLOSE_MS)))
      logger.warn({ timeoutMs: DB_CLOSE_MS }, "the database did not close in time");
  };
  try {
    wallets = openServiceWallets(config);
    services = await buildServices(
      config,
      db,
      chains,
      wallets,
      logger,
      options.listeningUrl ?? `http://${config.HOST}:${config.PORT}`,
    );
    return { services, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function buildServices(
  config: Config,
  db: Db,
  chains: ChainRegistry,
  wallets: ServiceWallets,
  logger: Logger,
  listeningUrl: string,
): Promise<Services> {
  // The local sandbox migrates as it starts; a production start only checks: `npm run migrate` changes its schema.
  if (config.profile === "local") {
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, "database migrated");
  } else await assertSchemaCurrent(db, "this service");
  const sealer = new Sealer(ensureDataEncryptionKey(config));
  await assertDataKey(db, sealer);
  const stores = openStores(db, sealer, logger, METERED_METHODS);
  const sealed = {
    payments: await stores.payments.sealClearSecrets(),
    transactions: await stores.batchTransactions.sealClearSigned(),
    kyc: await stores.kyc.sealClearDetails(),
  };
  if (sealed.payments || sealed.transactions || sealed.kyc)
    logger.info(sealed, "sealed what this database held in clear before this version");
  const baseUrl = config.PUBLIC_BASE_URL?.replace(/\/$/, "") ?? listeningUrl;
  const eventNotifier = new EventNotifier(db);
  const relayer = new Relayer({ ...stores, chains, config }, logger.child({ component: "relayer" }), wallets.relayer);
  const walletBalances = new WalletBalanceWatch({ chains, config, logger, relayer, wallets });
  // Keys added on a running service (by an earlier run, or another instance) are held and set up before any batch is
  // resumed, as the configuration's are by syncNonces below.
  const relayerKeyRotation = new RelayerKeyRotation(
    { ...stores, chains, relayer },
    logger.child({ component: "relayer-keys" }),
    () => walletBalances.keysChanged(),
  );
  await relayerKeyRotation.refresh();
  await relayerKeyRotation.settled();
  await checkChainInstances({ ...stores, chains, config, logger });
  const payments = await paymentsOf({ ...stores, chains, config, logger, wallets });
  const runner = new BatchRunner(
    { ...stores, chains, config, relayer },
    {
      methods: methodHooks({ ...stores, config, chains, baseUrl, relayer }),
      payments: payments?.runPayments ?? NO_PAYMENTS,
      relaySigner: (batch, tx, signOptions) => relayer.sign(batch, tx, signOptions),
      onReorged: (txId) => forgetFinalStatus(stores, txId),
    },
    logger.child({ component: "runner" }),
  );
  await relayer.syncNonces();
  return {
    ...stores,
    config,
    wallets,
    baseUrl,
    logger,
    chains,
    rateLimiter: new RateLimiter(db),
    requestLimits: new RequestLimits(db),
    prices: new Prices(db, config.ENVIRONMENT),
    kycProvider: new OperatorKycProvider(db, stores.kyc, stores.kycLinks),
    mailer: createMailer(config),
    eventNotifier,
    webhookDispatcher: new WebhookDispatcher(
      { ...stores, config, eventNotifier },
      logger.child({ component: "webhooks" }),
    ),
    eventStreams: new EventStreams({ ...stores, config, eventNotifier }, logger.child({ component: "event-stream" })),
    relayer,
    relayerKeyRotation,
    runner,
    preparedExpiry: new PreparedExpiry({ ...stores, config }, logger.child({ component: "batches" })),
    x402: payments?.gate,
    paymentSettler: payments?.settler,
    paymentRefunder: payments?.refunder,
    walletBalances,
    plannerStatistics: new PlannerStatistics(db, logger.child({ component: "store" })),
  };
}

/** The x402 parts, built once their terms are known (undefined when X402_ENABLED=false): the gate, the settler, the runner's port. */
async function paymentsOf(
  services: Stores & { chains: ChainRegistry; config: Config; logger: Logger; wallets: ServiceWallets },
) {
  const terms = await paymentTermsOf(services, (chain) => facilitatorFor(services, chain));
  if (!terms) return undefined;
  const log = services.logger.child({ component: "x402" });
  const settler = new PaymentSettler(services, terms, log);
  const refundWallet = services.wallets.refund;
  const refunder = new PaymentRefunder(
    services,
    refundWallet && new RefundTransactions(services, terms.chain, refundWallet, log.child({ wallet: "refund" })),
    log.child({ component: "refunds" }),
  );
  return {
    settler,
    refunder,
    gate: new X402(services, terms, settler, log),
    runPayments: new BatchSettlement(services, terms, settler, log, refunder),
  };
}

/** Who verifies and settles x402 payments: an external facilitator, or the in-process one with the settlement key. */
function facilitatorFor(services: FacilitatorServices & { wallets: ServiceWallets }, chain: Chain) {
  const { config } = services;
  if (config.X402_FACILITATOR_URL) return new ExternalFacilitator(config.X402_FACILITATOR_URL);
  if (!services.wallets.settlement)
    throw new X402ConfigError(
      "x402 needs a settlement key (X402_SETTLEMENT_PRIVATE_KEY, X402_SETTLEMENT_KEYSTORE or X402_SETTLEMENT_PKCS11_MODULE) or X402_FACILITATOR_URL (or X402_ENABLED=false)",
    );
  const wallet = services.wallets.settlement;
  return new InProcessFacilitator(services, chain, wallet, () =>
    healWalletNonces(services, chain, wallet, services.logger.child({ component: "x402" })),
  );
}

/**
 * The background work of a listening service: batches left mid-flight resumed, payments recovered, recent
 * confirmations watched for reorgs, the sweeper, the wallets' balances, the embedded database's planner statistics,
 * event wake-ups and webhook deliveries.
 */
export async function beginWork(services: Services): Promise<void> {
  const { logger } = services;
  const resumed = await services.runner.resumeAll();
  if (resumed) logger.info({ resumed }, "resuming batches left mid-flight");
  await services.paymentSettler?.recover();
  services.paymentSettler?.startRecovery();
  services.paymentRefunder?.start();
  await services.runner
    .watchRecent()
    .catch((error) => logger.warn({ err: (error as Error).message }, "recent confirmations not watched for reorgs"));
  services.runner.startSweeper();
  services.preparedExpiry.start();
  services.relayerKeyRotation.start();
  services.walletBalances.start();
  await services.plannerStatistics.start();
  await services.eventNotifier.start();
  await services.webhookDispatcher.start();
}

/**
 * Ends the background work within `ms`: runs waiting on a chain stay resumable (the next start resumes them), webhook
 * deliveries in flight are retried at the next start.
 */
export async function endWork(services: Services, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  const left = () => Math.max(0, deadline - Date.now());
  const { logger } = services;
  services.paymentSettler?.stop();
  const refunds = services.paymentRefunder?.stop();
  services.preparedExpiry.stop();
  await services.relayerKeyRotation.stop();
  services.walletBalances.stop();
  await services.plannerStatistics.stop();
  services.eventStreams.stop();
  if (!(await settledWithin(services.runner.stop(), left())))
    logger.warn({ timeoutMs: ms }, "batch runs still waiting on a chain; they resume at the next start");
  if (refunds && !(await settledWithin(refunds, left())))
    logger.warn("a refund pass still waiting on the chain; its refunds are followed at the next start");
  if (!(await settledWithin(Promise.all([services.webhookDispatcher.stop(), services.eventNotifier.stop()]), left()))) {
    logger.warn("webhook deliveries still in flight; they are retried at the next start");
  }
  services.mailer?.close();
}
