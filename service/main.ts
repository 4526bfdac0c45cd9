import { withEnvFile } from "./configuration/env-file";
import { refuseToStart, serveUntilSignalled } from "./process";

/**
 * `node dist/service/main.js` (`npm run serve`): the service with the production posture, whatever its ENVIRONMENT
 * (docs/configuration.md): its configuration from the environment and the env file (ENV_FILE, else ./.env when
 * present; the environment wins). The local sandbox starts through scripts/local-service.ts instead.
 */
function main() {
  let env: NodeJS.ProcessEnv;
  try {
    env = withEnvFile(process.env).env;
  } catch (error) {
    return refuseToStart(error);
  }
  serveUntilSignalled(env, "production");
}

main();
