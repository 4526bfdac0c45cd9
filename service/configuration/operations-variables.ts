import { z } from "zod";
import { variable } from "./variable-docs";
import { privateKey } from "./value-rules";

/**
 * The variables of running the service (logs, timeouts, shutdown) and those only the deploy script and the admin tool
 * read (the service accepts and ignores them, so one .env serves all three). service/configuration/variables.ts joins
 * them with the others into the one schema.
 */
export const operationsVariables = {
  LOG_LEVEL: variable(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), {
    group: "operations",
    about: "Log level.",
  }),
  LOG_FORMAT: variable(z.enum(["json", "pretty"]).default("json"), {
    group: "operations",
    about: "`json` (one JSON object a line, for log shippers) or `pretty` (readable lines).",
    local: "pretty in npm start and npm run service",
  }),
  PREPARED_BATCH_TTL_HOURS: variable(
    z.coerce
      .number()
      .positive()
      .max(24 * 366)
      .default(24),
    {
      group: "operations",
      about:
        "A prepared batch nobody sent expires after this many hours (fractions allowed): its send is refused with 410 (prepare again), and it is deleted unless a payment names it.",
    },
  ),
  SEND_WAIT_MS: variable(z.coerce.number().int().min(0).default(25_000), {
    group: "operations",
    about: "How long POST /send-transactions waits for a batch to finish before answering with status pending.",
  }),
  RECEIPT_TIMEOUT_MS: variable(
    z.coerce
      .number()
      .int()
      .min(1000)
      .default(10 * 60_000),
    {
      group: "operations",
      about: "Give up waiting for a receipt after this long; the batch stays pending and is resumed on the next start.",
    },
  ),
  CHAIN_UNREACHABLE_GIVE_UP_MS: variable(
    z.coerce
      .number()
      .int()
      .min(1000)
      .default(15 * 60_000),
    {
      group: "operations",
      about:
        "A relayed batch nothing of which was signed yet ends rejected once its chain has not answered for this long (a failure of the service's: a payment it settled is owed back); anything signed waits for its chain.",
    },
  ),
  SHUTDOWN_TIMEOUT_MS: variable(z.coerce.number().int().min(0).default(10_000), {
    group: "operations",
    about: "On SIGTERM/SIGINT: how long requests in flight may take to finish before their connections are closed.",
  }),

  DEPLOYER_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "tools",
    about: "scripts/deploy.ts: the key that deploys the contracts (and stays the RAMS registry admin on Sepolia).",
    secret: true,
  }),
  RAMS_ENFORCER_ADDRESS: variable(z.string().optional(), {
    group: "tools",
    about: "scripts/deploy.ts: the address given the RAMS registry's ENFORCER_ROLE (freezes agents).",
  }),
  RAMS_COMPLIANCE_OWNER_ADDRESS: variable(z.string().optional(), {
    group: "tools",
    about: "scripts/deploy.ts: the owner of the RAMS compliance provider (grants principals).",
  }),
  BKN_ADDRESS: variable(z.string().optional(), {
    group: "tools",
    about:
      "scripts/deploy.ts: the governance token's address on a production network (testnets get the project's BKN with its faucet).",
  }),
  DEPLOY_PAYMENT_ASSETS: variable(z.string().optional(), {
    group: "tools",
    about: "scripts/deploy.ts: `local` deploys the project's own USDC/USDT (local chains only).",
  }),
  ETHERSCAN_API_KEY: variable(z.string().optional(), {
    group: "tools",
    about: "scripts/verify.ts: the explorers' API key (Etherscan's v2 API serves Sepolia and Base Sepolia).",
    secret: true,
  }),
  RAMS_ADMIN_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "tools",
    about:
      "`npm run admin -- rams setup-executor`: the RAMS registry admin (deploys the executor, grants it RECORDER_ROLE).",
    secret: true,
  }),
  RAMS_EXECUTOR_OWNER_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "tools",
    about:
      "`rams setup-executor`: the executor's owner (optional: without it, its step is printed as a prepared transaction).",
    secret: true,
  }),
  RAMS_PRINCIPAL_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "tools",
    about: "`rams setup-executor`: the principal (optional, as above).",
    secret: true,
  }),
  RAMS_COMPLIANCE_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "tools",
    about: "`rams setup-executor`: the compliance owner (optional, as above).",
    secret: true,
  }),
};
