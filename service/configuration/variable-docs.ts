import { z } from "zod";

/**
 * What an operator needs to know of each configuration variable, beside its zod schema: the groups docs/configuration.md
 * and .env.example list them under, and the registry (`docs`) that ties a schema to its documentation.
 */

export type Group =
  | "deployment"
  | "secrets"
  | "chains"
  | "relayer"
  | "x402"
  | "webhooks"
  | "kyc"
  | "console"
  | "mcp"
  | "operations"
  | "tools";

export const GROUP_TITLES: Record<Group, string> = {
  deployment: "Deployment: where it listens, which networks, where its data is",
  secrets: "Secrets the service keeps",
  chains: "Chains: RPC providers, confirmations, reorgs",
  relayer: "The relayer (service-relayed operations)",
  x402: "x402 payments",
  webhooks: "Webhooks and event streams",
  kyc: "Investor onboarding (KYC) and mail",
  console: "The operator console (/console)",
  mcp: "MCP: the /mcp endpoint, and the stdio server (`npm run mcp` reads the TAK_ variables; the service does not)",
  operations: "Operations: logs, timeouts, shutdown",
  tools: "The deploy script and the admin tool (the service accepts and ignores them, so one .env serves all three)",
};

export interface VariableDoc {
  group: Group;
  /** What it does, in a sentence or two. */
  about: string;
  /** How a value is written, when the schema's rule does not say it (durations, lists). */
  rule?: string;
  /** A secret: may be given as <NAME>_FILE (a file holding it, as container platforms mount secrets); never logged. */
  secret?: boolean;
  /** What the local sandbox (npm start, npm run service, the test helpers) does with it, when that differs. */
  local?: string;
  /** What a production start (every other start: the built service, whatever ENVIRONMENT) requires or does. */
  production?: string;
  /** The line .env.example gives it (a placeholder); absent: the variable is listed commented out with its default. */
  example?: string;
}

export const docs = z.registry<VariableDoc>();

export function variable<T extends z.ZodType>(schema: T, doc: VariableDoc): T {
  docs.add(schema, doc);
  return schema;
}
