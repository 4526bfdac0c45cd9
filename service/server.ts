import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Server, ServerResponse } from "node:http";
import { createApp } from "./app";
import { ChainRegistry } from "./chains/registry";
import type { Config } from "./config";
import { createLogger, type Logger } from "./logger";
import type { Services } from "./services";
import { checkChainInstances } from "./store/chain-instances";
import { ApiKeys } from "./store/api-keys";
import { Credits } from "./store/credits";
import { openDb, type Db } from "./store/db";
import { Signers } from "./store/signers";
import { Tokens } from "./store/tokens";
import { Agents } from "./store/agents";
import { RamsExecutors } from "./store/rams";
import { Investors } from "./store/investors";
import { Offerings } from "./store/offerings";
import { Dividends } from "./store/dividends";
import { Documents } from "./store/documents";
import { Batches } from "./store/batches";
import { PrepareRateLimiter } from "./auth/rate-limits";
import { BatchRunner } from "./engine/runner";
import { forgetFinalStatus } from "./reads/transaction-status";
import { findMethod } from "./methods";
import { Relayer } from "./engine/relayer";
import { ExternalFacilitator, InProcessFacilitator } from "./payments/facilitator";
import { Prices } from "./payments/pricing";
import { X402, X402ConfigError } from "./payments/x402";
import { Payments } from "./store/payments";
import { WalletLocks } from "./store/wallet-locks";
import { WalletNonces } from "./store/wallet-nonces";
import { ensureAdminToken, ensureDataEncryptionKey, removeRuntimeFile, writeRuntimeFile } from "./runtime-files";
import { Sealer } from "./crypto/sealed";
import { assertDataKey } from "./crypto/key-check";
import { migrate } from "./store/migrate";
import { KycStore } from "./store/kyc";
import { OperatorKycProvider } from "./onboarding/provider";
import { createMailer } from "./onboarding/mailer";
import { WalletBalances } from "./wallet-balances";
import { Webhooks } from "./store/webhooks";
import { EventNotifier } from "./events/notifier";
import { WebhookDispatcher } from "./events/dispatcher";
import { EventStreams } from "./events/stream";
import { settledWithin } from "./lifecycle/bounded";

export interface RunningService {
  services: Services;
  server: Server;
  /** http://host:port the service listens on. */
  url: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Use this database instead of opening the configured one (tests share one). */
  db?: Db;
  logger?: Logger;
}

/** Opens the store, migrates, checks the chains, builds the app and listens. Used by main.ts, dev.ts and tests. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, config.LOG_FORMAT);
  const db =
    options.db ??
    (await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: path.join(config.environmentDir, "pglite") }));
  const applied = await migrate(db);
  if (applied.length) logger.info({ applied }, "database migrated");
  const sealer = new Sealer(ensureDataEncryptionKey(config));
  try {
    await assertDataKey(db, sealer);
  } catch (error) {
    if (!options.db) await db.close();
    throw error;
  }
  const chains = new ChainRegistry(config, logger);
  const services = {
    config,
    baseUrl: config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`,
    logger,
    db,
    sealer,
    chains,
    apiKeys: new ApiKeys(db),
    credits: new Credits(db),
    signers: new Signers(db),
    tokens: new Tokens(db),
    agents: new Agents(db),
    ramsExecutors: new RamsExecutors(db),
    investors: new Investors(db),
    dividends: new Dividends(db),
    offerings: new Offerings(db),
    documents: new Documents(db),
    batches: new Batches(db, sealer),
    rateLimiter: new PrepareRateLimiter(db),
    walletNonces: new WalletNonces(db),
    walletLocks: new WalletLocks(db, logger.child({ component: "wallet-locks" })),
    payments: new Payments(db, sealer),
    prices: new Prices(db, config.ENVIRONMENT),
    kyc: new KycStore(db),
    mailer: createMailer(config),
  } as Services;
  services.kycProvider = new OperatorKycProvider(db, services.kyc);
  const sealed = { payments: await services.payments.sealClearSecrets(), transactions: await services.batches.sealClearSigned() };
  if (sealed.payments || sealed.transactions) logger.info(sealed, "sealed what this database held in clear before this version");
  services.webhooks = new Webhooks(db, services.sealer);
  services.eventNotifier = new EventNotifier(db);
  services.webhookDispatcher = new WebhookDispatcher(services, logger.child({ component: "webhooks" }));
  services.eventStreams = new EventStreams(services, logger.child({ component: "event-stream" }));
  services.runner = new BatchRunner(services, findMethod, logger.child({ component: "runner" }));
  services.relayer = new Relayer(services, logger.child({ component: "relayer" }));
  services.runner.relaySigner = (batch, tx, options) => services.relayer.sign(batch, tx, options);
  services.runner.onReorged = (txId) => forgetFinalStatus(services, txId);
  try {
    await checkChainInstances(services);
    services.x402 = await X402.create(services, (chain) => {
      if (config.X402_FACILITATOR_URL) return new ExternalFacilitator(config.X402_FACILITATOR_URL);
      if (!config.X402_SETTLEMENT_PRIVATE_KEY) throw new X402ConfigError("x402 needs X402_SETTLEMENT_PRIVATE_KEY or X402_FACILITATOR_URL (or X402_ENABLED=false)");
      return new InProcessFacilitator(services, chain, config.X402_SETTLEMENT_PRIVATE_KEY);
    });
    await services.relayer.syncNonces();
  } catch (error) {
    // A start refused for its configuration leaves nothing open behind it.
    chains.destroy();
    if (!options.db) await db.close();
    throw error;
  }

  const app = createApp(services, { adminToken: ensureAdminToken(config) });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.PORT, config.HOST, () => resolve(s));
    s.once("error", reject);
  });
  // Requests in flight, so a stop can let them finish.
  let inFlight = 0;
  server.on("request", (_req, res: ServerResponse) => {
    inFlight++;
    res.once("close", () => inFlight--);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST}:${port}`;
  services.baseUrl = config.PUBLIC_BASE_URL?.replace(/\/$/, "") ?? url;
  writeRuntimeFile(config, { pid: process.pid, url });
  logger.info({ url, environment: config.ENVIRONMENT, chains: chains.list().map((c) => c.chainId), db: db.kind }, "service listening");
  const resumed = await services.runner.resumeAll();
  if (resumed) logger.info({ resumed }, "resuming batches left mid-flight");
  await services.x402?.recover();
  await services.runner.watchRecent().catch((error) => logger.warn({ err: (error as Error).message }, "recent confirmations not watched for reorgs"));
  services.runner.startSweeper();
  services.walletBalances = WalletBalances.forService(services);
  services.walletBalances.start();
  await services.eventNotifier.start();
  await services.webhookDispatcher.start();

  let stopped = false;
  return {
    services,
    server,
    url,
    /**
     * Stops gracefully, within SHUTDOWN_TIMEOUT_MS whatever the state: no new connections; the batch runner stops at
     * its next step (a send waiting on its batch then answers 202 pending; the batch stays "sending" in the database and
     * is resumed by the next start), and a run stuck in a call to an unresponsive RPC is not waited for past the bound;
     * requests in flight get what is left of it before their connections are closed; then the database closes (its
     * close bounded too).
     */
    async stop() {
      if (stopped) return;
      stopped = true;
      const deadline = Date.now() + config.SHUTDOWN_TIMEOUT_MS;
      const left = () => Math.max(0, deadline - Date.now());
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      services.x402?.stop();
      services.walletBalances?.stop();
      services.eventStreams.stop();
      if (!(await settledWithin(services.runner.stop(), left()))) logger.warn({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "batch runs still waiting on a chain; they resume at the next start");
      if (!(await settledWithin(Promise.all([services.webhookDispatcher.stop(), services.eventNotifier.stop()]), left()))) logger.warn("webhook deliveries still in flight; they are retried at the next start");
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (inFlight > 0) logger.warn({ inFlight, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "closing connections of requests still in flight");
      server.closeAllConnections();
      await settledWithin(closed, 1_000);
      services.mailer?.close();
      chains.destroy();
      removeRuntimeFile(config);
      if (!options.db && !(await settledWithin(db.close(), DB_CLOSE_MS))) logger.warn({ timeoutMs: DB_CLOSE_MS }, "the database did not close in time");
    },
  };
}

/** How long a stop waits for the database to close (PGlite writes its files; a pool ends its connections). */
const DB_CLOSE_MS = 5_000;
