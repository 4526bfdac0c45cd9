import type { Config } from "../config";
import type { DestinationPolicy } from "./destination";

/**
 * Where this deployment's webhooks may go. Outside the local sandbox: https only, to public addresses unless the
 * operator explicitly allows private ones (WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true). The local sandbox also takes http
 * and local receivers. Which networks the deployment serves (ENVIRONMENT) plays no part.
 */
export function destinationPolicy(
  config: Pick<Config, "profile" | "WEBHOOK_ALLOW_PRIVATE_DESTINATIONS">,
): DestinationPolicy {
  const local = config.profile === "local";
  return {
    httpsOnly: !local,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS ?? local,
  };
}
