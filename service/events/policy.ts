import type { Config } from "../config";
import type { DestinationPolicy } from "./destination";

/** Where this deployment's webhooks may go: production https to public addresses; the sandbox also http and local receivers. */
export function destinationPolicy(config: Pick<Config, "ENVIRONMENT" | "WEBHOOK_ALLOW_PRIVATE_DESTINATIONS">): DestinationPolicy {
  return {
    httpsOnly: config.ENVIRONMENT === "production",
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS ?? config.ENVIRONMENT !== "production",
  };
}
