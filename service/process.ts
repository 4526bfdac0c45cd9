import { ConfigError, loadConfig, type Config, type Profile } from "./config";
import type { RunningService } from "./server";

/** Beyond SHUTDOWN_TIMEOUT_MS, what a stop may take to close the database and the connections before exiting anyway. */
const STOP_GRACE_MS = 7_000;

/**
 * The service as a process: serve the API with the configuration from `env` until SIGTERM or SIGINT, then stop
 * gracefully (no new connections, requests in flight finish within SHUTDOWN_TIMEOUT_MS, batches
 * stay resumable, the database closes) and exit 0. That holds in every state: a signal during start-up stops the
 * service as soon as it is up, and whatever a stop still waits on after SHUTDOWN_TIMEOUT_MS + 7 s (an RPC that never
 * answers, a database that does not close), the process exits 0 then. A second signal while stopping exits at once (1).
 * `profile` is the entry point's: main.ts (production) or the local sandbox's scripts/local-service.ts.
 */
export function serveUntilSignalled(env: NodeJS.ProcessEnv, profile: Profile): void {
  let config: Config;
  try {
    config = loadConfig(env, { profile });
  } catch (error) {
    return refuseToStart(error);
  }
  let running: RunningService | undefined;
  let stopping = false;

  const stop = async (signal: NodeJS.Signals) => {
    const logger = running?.services.logger;
    logger?.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "shutting down: finishing requests in flight");
    try {
      await running?.stop();
      logger?.info({ signal }, "stopped");
      process.exit(0);
    } catch (error) {
      logger?.error({ signal, err: (error as Error).message }, "stop failed");
      process.exit(1);
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      running?.services.logger.warn({ signal }, "second signal while stopping: exiting now");
      process.exit(1);
    }
    stopping = true;
    setTimeout(() => {
      running?.services.logger.warn(
        { signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS + STOP_GRACE_MS },
        "stop did not finish in time; exiting",
      );
      process.exit(0);
    }, config.SHUTDOWN_TIMEOUT_MS + STOP_GRACE_MS).unref();
    // A signal during start-up: the stop runs once the service is up (or the start failed and exited).
    if (running) void stop(signal);
    else
      starting.then(
        () => stop(signal),
        () => undefined,
      );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  // The service's modules load once the configuration is known to be valid: a refused start answers at once.
  const starting = import("./server").then(async ({ startService }) => {
    running = await startService(config);
  });
  starting.catch(refuseToStart);
}

/** Errors that are the configuration's (or the schema's): their message says what to do; no stack trace. */
const CONFIGURATION_ERRORS = new Set(["X402ConfigError", "SchemaVersionError", "WalletOpenError"]);

/**
 * A start refused for its configuration (or a database or chain it cannot reach) prints one line naming the variable
 * and the rule, exit code 1; a stack trace only with LOG_LEVEL=debug or trace, for an error that is not the
 * configuration's.
 */
export function refuseToStart(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  const configuration =
    error instanceof ConfigError || (error instanceof Error && CONFIGURATION_ERRORS.has(error.name));
  console.error(configuration ? message : `Could not start: ${message}`);
  if (!configuration && /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? "") && error instanceof Error && error.stack)
    console.error(error.stack);
  process.exit(1);
}
