import { loadConfig } from "./config";
import { startService } from "./server";

/**
 * `node service/main.ts`: serve the API with the configuration from the environment until SIGTERM or SIGINT, then stop
 * gracefully (service/server.ts: no new connections, requests in flight finish within SHUTDOWN_TIMEOUT_MS, batches stay
 * resumable, the database closes) and exit 0. A second signal while stopping exits at once (1).
 */
async function main() {
  const config = loadConfig();
  const running = await startService(config);
  const { logger } = running.services;
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal while stopping: exiting now");
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "shutting down: finishing requests in flight");
    try {
      await running.stop();
      logger.info({ signal }, "stopped");
      process.exit(0);
    } catch (error) {
      logger.error({ signal, err: (error as Error).message }, "stop failed");
      process.exit(1);
    }
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
