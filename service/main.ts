import { loadConfig } from "./config";
import { startService } from "./server";

/** `node service/main.ts`: serve the API with the configuration from the environment until SIGINT/SIGTERM. */
async function main() {
  const config = loadConfig();
  const running = await startService(config);
  const shutdown = async (signal: string) => {
    running.services.logger.info({ signal }, "shutting down");
    await running.stop();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
