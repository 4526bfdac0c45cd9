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
import { BatchRunner } from "./engine/runner";
import { PreparedExpiry } from "./engine/prepared-expiry";
import { WebhookDispatcher } from "./events/dispatcher";
import { EventNotifier } from "./events/notifier";
import { EventStreams } from "./events/stream";
import { settledWithin } from "./lifecycle/bounded";
import { createLogger, type Logger } from "./logger";
import { methodHooks } from "./methods/hooks";
import { createMailer } from "./onboarding/mailer";
import { OperatorKycProvider } from "./onboarding/provider";
import { ExternalFacilitator, InProcessFacilitator } from "./payments/facilitator";
import { Prices } from "./payments/pricing";
import { X402, X402ConfigError } from "./payments/x402";
import { forgetFinalStatus } from "./reads/transaction-status";
import { ensureDataEncryptionKey } from "./runtime-files";
import { checkChainInstances } from "./store/chain-instances";
import { openDb, type Db } from "./store/db";
import { migrate } from "./store/migrate";
import { assertSchemaCurrent } from "./store/schema-version";
import { openStores } from "./store/stores";
import { openServiceWallets, type ServiceWallets } from "./signers/service-wallets";
import { PlannerStatistics } from "./store/planner-statistics";
import { WalletBalances } from "./wallet-balances";
import type { Services } from "./usecases/services";

export type { Services };

export interface ComposeOptions {
  /** Use this database instead of opening the configured one (tests share one); it is not closed by dispose. */
  db?: Db;
  logger?: Logger;
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
  if (!useNativeKeccak()) logger.warn("no native keccak build for this platform: hashing stays in JavaScript (slower, same results)");
  const db = options.db ?? (await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: path.join(config.environmentDir, "pglite") }));
  const chains = new ChainRegistry(config, logger);
  let wallets: ServiceWallets | undefined;
  let services: Services | undefined;
  const dispose = async () => {
    chains.destroy();
    await services?.relayer.keys.close();
    await wallets?.close();
    if (!options.db && !(await settledWithin(db.close(), DB_CLOSE_MS))) logger.warn({ timeoutMs: DB_CLOSE_MS }, "the database did not close in time");
  };
  try {
    wallets = openServiceWallets(config);
    services = await buildServices(config, db, chains, wallets, logger);
    return { services, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function buildServices(config: Config, db: Db, chains: ChainRegistry, wallets: ServiceWallets, logger: Logger): Promise<Services> {
  // The local sandbox migrates as it starts; a production start only checks: `npm run migrate` changes its schema.
  if (config.profile === "local") {
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, "database migrated");
  } else await assertSchemaCurrent(db, "this service");
  const sealer = new Sealer(ensureDataEncryptionKey(config));
  await assertDataKey(db, sealer);
  const stores = openStores(db, sealer, logger);
  const sealed = { payments: await stores.payments.sealClearSecrets(), transactions: await stores.batches.sealClearSigned(), kyc: await stores.kyc.sealClearDetails() };
  if (sealed.payments || sealed.transactions || sealed.kyc) logger.info(sealed, "sealed what this database held in clear before this version");
  const services = {
    ...stores,
    config,
    wallets,
    baseUrl: config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`,
    logger,
    chains,
    rateLimiter: new RateLimiter(db),
    requestLimits: new RequestLimits(db),
    prices: new Prices(db, config.ENVIRONMENT),
    kycProvider: new OperatorKycProvider(db, stores.kyc),
    mailer: createMailer(config),
    eventNotifier: new EventNotifier(db),
  } as Partial<Services> as Services; // the engine, payments and events are wired in just below
  services.webhookDispatcher = new WebhookDispatcher(services, logger.child({ component: "webhooks" }));
  services.eventStreams = new EventStreams(services, logger.child({ component: "event-stream" }));
  services.relayer = new Relayer(services, logger.child({ component: "relayer" }), wallets.relayer);
  services.runner = new BatchRunner(services, methodHooks(services), logger.child({ component: "runner" }));
  services.runner.relaySigner = (batch, tx, signOptions) => services.relayer.sign(batch, tx, signOptions);
  services.runner.onReorged = (txId) => forgetFinalStatus(services, txId);
  services.preparedExpiry = new PreparedExpiry(services, logger.child({ component: "batches" }));
  // Keys added on a running service (by an earlier run, or another instance) are held and set up before any batch is
  // resumed, as the configuration's are by syncNonces below.
  services.relayerKeyRotation = new RelayerKeyRotation(services, logger.child({ component: "relayer-keys" }));
  await services.relayerKeyRotation.refresh();
  await services.relayerKeyRotation.settled();
  await checkChainInstances(services);
  services.x402 = await X402.create(services, (chain) => facilitatorFor(services, chain));
  services.runner.settlement = services.x402;
  await services.relayer.syncNonces();
  return services;
}

/** Who verifies and settles x402 payments: an external facilitator, or the in-process one with the settlement key. */
function facilitatorFor(services: Services, chain: Chain) {
  const { config } = services;
  if (config.X402_FACILITATOR_URL) return new ExternalFacilitator(config.X402_FACILITATOR_URL);
  if (!services.wallets.settlement) throw new X402ConfigError("x402 needs a settlement key (X402_SETTLEMENT_PRIVATE_KEY, X402_SETTLEMENT_KEYSTORE or X402_SETTLEMENT_PKCS11_MODULE) or X402_FACILITATOR_URL (or X402_ENABLED=false)");
  return new InProcessFacilitator(services, chain, services.wallets.settlement);
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
  await services.x402?.recover();
  services.x402?.startRecovery();
  await services.runner.watchRecent().catch((error) => logger.warn({ err: (error as Error).message }, "recent confirmations not watched for reorgs"));
  services.runner.startSweeper();
  services.preparedExpiry.start();
  services.relayerKeyRotation.start();
  const watchBalances = () => {
    services.walletBalances?.stop();
    services.walletBalances = WalletBalances.forService(services);
    services.walletBalances.start();
  };
  watchBalances();
  services.relayerKeyRotation.onKeysChanged = watchBalances;
  services.plannerStatistics = new PlannerStatistics(services.db, logger.child({ component: "store" }));
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
  services.x402?.stop();
  services.preparedExpiry.stop();
  await services.relayerKeyRotation.stop();
  services.walletBalances?.stop();
  await services.plannerStatistics?.stop();
  services.eventStreams.stop();
  if (!(await settledWithin(services.runner.stop(), left()))) logger.warn({ timeoutMs: ms }, "batch runs still waiting on a chain; they resume at the next start");
  if (!(await settledWithin(Promise.all([services.webhookDispatcher.stop(), services.eventNotifier.stop()]), left()))) {
    logger.warn("webhook deliveries still in flight; they are retried at the next start");
  }
  services.mailer?.close();
}
