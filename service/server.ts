import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import { createServer, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Services } from "./composition";
import type { Config } from "./config";
import { settledWithin } from "./lifecycle/bounded";
import { startingResponder } from "./lifecycle/starting";
import type { Logger } from "./logger";
import { ensureAdminToken, removeRuntimeFile, writeRuntimeFile } from "./runtime-files";
import type { Db } from "./store/db";

/**
 * At a stop, how long open keep-alive connections stay up (unless the drain lasts longer): a request their clients sent
 * as the signal came is still on its way. Over the network, this covers a round trip or two.
 */
const KEEP_ALIVE_LINGER_MS = 250;

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
  /** Told the URL as soon as the port is open, before the service is composed (it answers "starting" until then). */
  onListening?: (url: string) => void;
}

/**
 * Opens the port, composes the service and starts its background work. Used by main.ts,
 * dev.ts and tests. While it composes, the port answers as lifecycle/starting.ts says (`/health` 200 "starting",
 * everything else 503 with Retry-After); then the API. The answer's stop() stops gracefully, within
 * SHUTDOWN_TIMEOUT_MS whatever the state.
 */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  let answer: RequestListener = startingResponder(config.ENVIRONMENT);
  const server = createServer((req, res) => answer(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.PORT, config.HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.HOST}:${port}`;
  options.onListening?.(url);
  const starting = async () => {
    // The API's modules load once the port is open: until then only /health's "starting" is there to answer.
    const [{ createApp }, composition] = await Promise.all([import("./app"), import("./composition")]);
    return {
      createApp,
      ...composition,
      composed: await composition.compose(config, { ...options, listeningUrl: url }),
    };
  };
  const { createApp, beginWork, endWork, composed } = await starting().catch(async (error: unknown) => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    throw error;
  });
  const { services } = composed;
  const dispose = () => composed.dispose();
  const { logger, chains, db } = services;
  answer = createApp(services, { adminToken: ensureAdminToken(config) });
  const { inFlight, openConnections, drain } = countRequests(server);
  writeRuntimeFile(config, { pid: process.pid, url });
  logger.info(
    { url, environment: config.ENVIRONMENT, chains: chains.list().map((c) => c.chainId), db: db.kind },
    "service listening",
  );
  await beginWork(services);

  let stopped = false;
  return {
    services,
    server,
    url,
    /**
     * No new connections; the background work ends (a send waiting on its batch then answers 202 pending; the batch
     * stays "sending" and is resumed by the next start; a run stuck on an unresponsive RPC is not waited for past the
     * bound); requests in flight get what is left of SHUTDOWN_TIMEOUT_MS before their connections are closed; then the
     * chains and the database close (bounded too). Open keep-alive connections are not cut at the signal: a request a
     * client sent on one just before it would be lost unanswered (its client sees a reset, not an answer). For at least
     * KEEP_ALIVE_LINGER_MS while any is open, and until the drain ends, what arrives on them is answered with
     * `Connection: close`, so each closes after its answer.
     */
    async stop() {
      if (stopped) return;
      stopped = true;
      const deadline = Date.now() + config.SHUTDOWN_TIMEOUT_MS;
      const lingerUntil = Math.min(deadline, Date.now() + KEEP_ALIVE_LINGER_MS);
      drain();
      // The listening socket only: http.Server's own close() would also cut the idle keep-alive connections now.
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      await endWork(services, config.SHUTDOWN_TIMEOUT_MS);
      const draining = () => inFlight() > 0 || (Date.now() < lingerUntil && openConnections() > 0);
      while (draining() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (inFlight() > 0)
        logger.warn(
          { inFlight: inFlight(), timeoutMs: config.SHUTDOWN_TIMEOUT_MS },
          "closing connections of requests still in flight",
        );
      server.closeAllConnections();
      server.close(); // http.Server's own housekeeping (its timer for header timeouts); nothing is left to close
      await settledWithin(closed, 1_000);
      removeRuntimeFile(config);
      await dispose();
    },
  };
}

/**
 * The number of requests in flight on `server`, so a stop can let them finish; once `drain()` was called, every
 * answer asks its client to close the connection.
 */
function countRequests(server: Server): { inFlight: () => number; openConnections: () => number; drain: () => void } {
  let inFlight = 0;
  let open = 0;
  let draining = false;
  server.on("connection", (socket: Socket) => {
    open++;
    socket.once("close", () => open--);
  });
  // Ahead of the app's listener, so the header is set before anything of the answer is written.
  server.prependListener("request", (_req, res: ServerResponse) => {
    inFlight++;
    if (draining) res.setHeader("connection", "close");
    res.once("close", () => inFlight--);
  });
  return { inFlight: () => inFlight, openConnections: () => open, drain: () => (draining = true) };
}
