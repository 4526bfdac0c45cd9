import { isIP } from "node:net";
import { z } from "zod";

/**
 * Every environment variable the service, its admin tool and its deploy script read: one zod schema (what a value may
 * be, its default) with what an operator needs to know beside it (what it does, whether it is a secret, what the local
 * sandbox and a production start do with it). config.ts parses with it; scripts/generate-config-docs.ts writes
 * docs/configuration.md and .env.example from it (a test fails when they are stale).
 */

/** The two sets of networks a deployment serves. They use separate databases; credentials of one never work on the other. */
export const environments = ["sandbox", "production"] as const;
export type Environment = (typeof environments)[number];

export type Group =
  "deployment" | "secrets" | "chains" | "relayer" | "x402" | "webhooks" | "kyc" | "console" | "operations" | "tools";

export const GROUP_TITLES: Record<Group, string> = {
  deployment: "Deployment: where it listens, which networks, where its data is",
  secrets: "Secrets the service keeps",
  chains: "Chains: RPC providers, confirmations, reorgs",
  relayer: "The relayer (service-relayed operations)",
  x402: "x402 payments",
  webhooks: "Webhooks and event streams",
  kyc: "Investor onboarding (KYC) and mail",
  console: "The operator console (/console)",
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

function variable<T extends z.ZodType>(schema: T, doc: VariableDoc): T {
  docs.add(schema, doc);
  return schema;
}

const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex private key");
export const privateKeySchema = privateKey;

const booleanFromEnv = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

/** "500ms", "5s", "30m", "2h", "1d" (or a bare number of milliseconds) as milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration (e.g. 500ms, 5s, 30m, 2h, 1d)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? "ms") as "ms"];
  return Math.round(Number(match[1]) * unit);
}

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/** A comma-separated list, each element checked by `element` (its position and value named when one fails). */
function list<T>(element: (item: string) => T, what: string) {
  return z.string().transform((text, ctx) => {
    const items = text
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const out: T[] = [];
    items.forEach((item, i) => {
      try {
        out.push(element(item));
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: `element ${i + 1} (${JSON.stringify(item)}): ${(error as Error).message}; expected ${what}`,
        });
      }
    });
    return out;
  });
}

const durations = list((d) => {
  const ms = parseDuration(d);
  if (ms <= 0) throw new Error("a delay must be positive");
  return ms;
}, "comma-separated durations (5s,5m,30m)").refine((l) => l.length > 0, "needs at least one delay");

/** An element of an address list, lower-case. */
const addressElement = (text: string): string => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new Error("not a 0x-prefixed 20-byte hex address");
  return text.toLowerCase();
};

export const chainIdElement = (text: string): number => {
  if (!/^\d+$/.test(text) || Number(text) <= 0 || !Number.isSafeInteger(Number(text)))
    throw new Error("not a decimal chain id");
  return Number(text);
};

/**
 * TRUST_PROXY in the forms Express's `trust proxy` takes: `false`, `true`, a hop count, or a comma-separated list of
 * addresses, CIDR ranges and the names loopback, linklocal, uniquelocal.
 */
export type TrustProxy = boolean | number | string[];
const PROXY_NAMES = ["loopback", "linklocal", "uniquelocal"];
const trustProxy = z.string().transform((text, ctx): TrustProxy => {
  const value = text.trim();
  if (value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    if (PROXY_NAMES.includes(entry)) return;
    const [address, prefix, extra] = entry.split("/");
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits);
    if (!version || !prefixOk || extra !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `element ${i + 1} (${JSON.stringify(entry)}) is not an IP address, a CIDR range or one of ${PROXY_NAMES.join(", ")}; expected false, a hop count or such a list`,
      });
    }
  });
  return entries;
});

export const variables = {
  ENVIRONMENT: variable(z.enum(environments).default("sandbox"), {
    group: "deployment",
    about:
      "Which networks this deployment serves: `sandbox` the test networks (Sepolia, Base Sepolia), `production` the main networks (Base, Ethereum, …; RAMS on Sepolia in both). It says nothing about how safely the service behaves: every start but the local sandbox has the production posture.",
    example: "sandbox",
  }),
  HOST: variable(z.string().default("127.0.0.1"), {
    group: "deployment",
    about: "Address to listen on (`0.0.0.0` to listen beyond this machine, behind a TLS proxy).",
    example: "0.0.0.0",
  }),
  PORT: variable(z.coerce.number().int().min(0).max(65535).default(3000), {
    group: "deployment",
    about: "Port to listen on (0: any free port).",
    example: "3000",
  }),
  PUBLIC_BASE_URL: variable(z.string().url().optional(), {
    group: "deployment",
    about:
      "The URL clients reach the service at (x402 resource URLs, KYC links, agent registration URIs). Default: http://HOST:PORT.",
    example: "https://api.example.com",
  }),
  TRUST_PROXY: variable(trustProxy.prefault("loopback"), {
    group: "deployment",
    about:
      "Which proxies in front of the service are trusted to name the client (X-Forwarded-For): the client address per-IP rate limits count. Behind a load balancer, its hop count (`1`) or its addresses; `false` when nothing is in front.",
    rule: "`false`, `true`, a hop count, or a comma-separated list of IP addresses, CIDR ranges and `loopback`, `linklocal`, `uniquelocal` (the forms Express's `trust proxy` takes)",
    example: "loopback",
  }),
  DATA_DIR: variable(z.string().default(".data"), {
    group: "deployment",
    about:
      "Directory of the embedded database (`<DATA_DIR>/<ENVIRONMENT>/pglite`) and of the files operator tools read.",
  }),
  DATABASE_URL: variable(
    z
      .string()
      .regex(/^postgres(ql)?:\/\/.+/, "must be a postgres:// URL")
      .optional(),
    {
      group: "deployment",
      about:
        "A PostgreSQL server (several instances may share it); without it, the embedded PGlite database under DATA_DIR.",
      secret: true,
      example: "postgres://tak:password@db.internal:5432/tak",
    },
  ),
  DATABASE_SCHEMA: variable(
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]*$/, "must be a lower-case SQL identifier")
      .optional(),
    {
      group: "deployment",
      about: "PostgreSQL schema to use (created if missing): lets several deployments or test runs share one database.",
    },
  ),
  DEPLOYMENTS_DIR: variable(z.string().default("deployments"), {
    group: "deployment",
    about: "Where the deployment files (`<chainId>.json`, written by scripts/deploy.ts) are.",
  }),
  ENV_FILE: variable(z.string().optional(), {
    group: "deployment",
    about:
      "A file of NAME=value lines read at start by the service and the admin tool (not by the local sandbox); variables already set in the environment win. Default: `.env` in the working directory, when there is one.",
  }),

  ADMIN_TOKEN: variable(z.string().min(24, "must be at least 24 characters").optional(), {
    group: "secrets",
    about:
      "Shared secret of the operator endpoint (/admin/command, what `npm run admin` uses against a running service on the embedded database).",
    secret: true,
    local: "generated into `<DATA_DIR>/sandbox/admin-token` (mode 0600) when not set",
    production: "required: the start is refused without it",
    example: "<openssl rand -base64 32>",
  }),
  DATA_ENCRYPTION_KEY: variable(
    z.string().min(32, "must be at least 32 characters (e.g. 32 random bytes, hex)").optional(),
    {
      group: "secrets",
      about:
        "Seals what the database may hold only encrypted (pending x402 authorizations and settlement transactions, signed transactions of batches, open KYC links' tokens, webhook secrets). Every instance on one database needs the same value; keep it apart from the database's backups (a start with another key than the database's is refused).",
      secret: true,
      local: "generated into `<DATA_DIR>/sandbox/data-encryption-key` (mode 0600) when not set",
      production: "required: the start is refused without it",
      example: "<openssl rand -hex 32>",
    },
  ),
  METRICS_TOKEN: variable(z.string().min(16, "must be at least 16 characters").optional(), {
    group: "secrets",
    about: "GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.",
    secret: true,
    local: "unset: /metrics is public",
    production: "unset: /metrics is off (404)",
    example: "<openssl rand -base64 24>",
  }),

  CONFIRMATIONS: variable(z.coerce.number().int().min(1).max(64).optional(), {
    group: "chains",
    about:
      "Blocks on the canonical chain (counting its own) a transaction needs before it counts as confirmed, for every chain; unset, each chain's default (service/chains/networks.ts). CONFIRMATIONS_<chainId> sets one chain.",
    local: "1 (local chains never reorg)",
  }),
  REORG_WATCH_BLOCKS: variable(z.coerce.number().int().min(1).max(10_000).default(64), {
    group: "chains",
    about:
      "After its confirmations, a transaction's block is still watched for a deeper reorg until this many blocks are on top of it.",
  }),
  RPC_TIMEOUT_MS: variable(z.coerce.number().int().min(100).default(5_000), {
    group: "chains",
    about:
      "Per RPC attempt: no answer by then and the call is tried again (on the next URL of RPC_URL_<chainId> when there is one).",
  }),
  RPC_RETRY_BUDGET_MS: variable(z.coerce.number().int().min(100).default(15_000), {
    group: "chains",
    about:
      "Per RPC call: retried with backoff for this long at most, then the chain counts as unavailable (a 503 for a read).",
  }),

  RELAYER_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "relayer",
    about:
      "The key the service signs and pays gas with for relayed operations, on every chain it serves (RELAYER_PRIVATE_KEY_<chainId> for one chain).",
    secret: true,
    local: "the sandbox's funded test account",
    example: "<0x… 32-byte hex key>",
  }),
  RELAYER_KEYSTORE: variable(z.string().optional(), {
    group: "relayer",
    about:
      "The relayer's key as an encrypted JSON keystore (Web3 Secret Storage v3, as geth, Foundry's `cast wallet`, ethers and OpenZeppelin Relayer write it), decrypted at start with RELAYER_KEYSTORE_PASSWORD: instead of RELAYER_PRIVATE_KEY.",
    rule: "a file path",
  }),
  RELAYER_KEYSTORE_PASSWORD: variable(z.string().optional(), {
    group: "relayer",
    about: "The password of RELAYER_KEYSTORE (give it as RELAYER_KEYSTORE_PASSWORD_FILE).",
    secret: true,
  }),
  RELAYER_PKCS11_MODULE: variable(z.string().optional(), {
    group: "relayer",
    about:
      "The relayer's key on a PKCS#11 token (an HSM, or SoftHSM 2): the token's PKCS#11 library. The key never leaves the token, which signs each transaction's digest; instead of RELAYER_PRIVATE_KEY and RELAYER_KEYSTORE. Needs RELAYER_PKCS11_TOKEN_LABEL, RELAYER_PKCS11_KEY_LABEL and RELAYER_PKCS11_PIN too.",
    rule: "a readable file path (e.g. /usr/lib/softhsm/libsofthsm2.so)",
  }),
  RELAYER_PKCS11_TOKEN_LABEL: variable(z.string().optional(), {
    group: "relayer",
    about:
      "The label of the token that holds the relayer's key (as `softhsm2-util --show-slots` or `pkcs11-tool --list-slots` shows it).",
  }),
  RELAYER_PKCS11_KEY_LABEL: variable(z.string().optional(), {
    group: "relayer",
    about:
      "The label (CKA_LABEL) of the relayer's secp256k1 key pair on the token: the private key signs, the public key beside it (same label) gives the address.",
  }),
  RELAYER_PKCS11_PIN: variable(z.string().optional(), {
    group: "relayer",
    about: "The token's user PIN (give it as RELAYER_PKCS11_PIN_FILE).",
    secret: true,
  }),
  RELAYER_EXTRA_PRIVATE_KEYS: variable(z.string().optional(), {
    group: "relayer",
    about:
      "Further relayer keys, each with its own nonces, on every chain the relayer serves (RELAYER_EXTRA_PRIVATE_KEYS_<chainId> for one chain): operations whose outcome does not depend on the key (agentCreateToken) are spread over all keys.",
    rule: "comma-separated private keys, none twice, none the relayer's own or the settlement key",
    secret: true,
  }),
  RELAYER_BUMP_AFTER_BLOCKS: variable(z.coerce.number().int().min(1).max(1_000).default(3), {
    group: "relayer",
    about:
      "A relayed transaction not mined after this many blocks is replaced with higher fees (also when its fee cap falls below the base fee).",
  }),
  RELAYER_MAX_FEE_GWEI: variable(z.coerce.number().positive().default(1_000), {
    group: "relayer",
    about:
      "The highest fee cap (maxFeePerGas) the relayer and the settlement wallet ever sign, in gwei (fractions allowed).",
  }),

  X402_ENABLED: variable(booleanFromEnv.default(true), {
    group: "x402",
    about: "Take x402 payments (`false` turns paid calls off).",
  }),
  X402_SETTLEMENT_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "x402",
    about:
      "Key the in-process facilitator settles EIP-3009 payments with (pays the settlement gas); payments go to it unless X402_PAY_TO.",
    secret: true,
    local: "the sandbox's funded test account",
    example: "<0x… 32-byte hex key>",
  }),
  X402_SETTLEMENT_KEYSTORE: variable(z.string().optional(), {
    group: "x402",
    about:
      "The settlement key as an encrypted JSON keystore, decrypted at start with X402_SETTLEMENT_KEYSTORE_PASSWORD: instead of X402_SETTLEMENT_PRIVATE_KEY.",
    rule: "a file path",
  }),
  X402_SETTLEMENT_KEYSTORE_PASSWORD: variable(z.string().optional(), {
    group: "x402",
    about: "The password of X402_SETTLEMENT_KEYSTORE (give it as X402_SETTLEMENT_KEYSTORE_PASSWORD_FILE).",
    secret: true,
  }),
  X402_SETTLEMENT_PKCS11_MODULE: variable(z.string().optional(), {
    group: "x402",
    about:
      "The settlement key on a PKCS#11 token: the token's PKCS#11 library (the token signs each settlement; instead of X402_SETTLEMENT_PRIVATE_KEY and X402_SETTLEMENT_KEYSTORE). Needs X402_SETTLEMENT_PKCS11_TOKEN_LABEL, X402_SETTLEMENT_PKCS11_KEY_LABEL and X402_SETTLEMENT_PKCS11_PIN too; the relayer's token may be the same one.",
    rule: "a readable file path",
  }),
  X402_SETTLEMENT_PKCS11_TOKEN_LABEL: variable(z.string().optional(), {
    group: "x402",
    about: "The label of the token that holds the settlement key.",
  }),
  X402_SETTLEMENT_PKCS11_KEY_LABEL: variable(z.string().optional(), {
    group: "x402",
    about: "The label (CKA_LABEL) of the settlement key pair (secp256k1) on the token.",
  }),
  X402_SETTLEMENT_PKCS11_PIN: variable(z.string().optional(), {
    group: "x402",
    about: "The token's user PIN (give it as X402_SETTLEMENT_PKCS11_PIN_FILE).",
    secret: true,
  }),
  X402_PAYMENT_CHAIN_ID: variable(z.coerce.number().int().positive().optional(), {
    group: "x402",
    about:
      "Chain whose USDC takes the payments. Default: the environment's Base chain (84532 in the sandbox, 8453 in production).",
  }),
  X402_PAY_TO: variable(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")
      .optional(),
    { group: "x402", about: "Address that receives payments; default: the settlement key's address." },
  ),
  X402_FACILITATOR_URL: variable(z.string().url().optional(), {
    group: "x402",
    about: "An external facilitator instead of the in-process one.",
  }),
  RAMS_ALLOWED_CONTRACTS: variable(list(addressElement, "comma-separated 0x addresses").prefault(""), {
    group: "chains",
    about:
      "Contracts a RAMS call may name (agentMandateAddress, complianceProviderAddress, executorAddress, an executor's registry) besides those whose code is this version's own AgentMandate, ComplianceProvider or AgentExecutor; any other is refused with 400.",
    rule: "comma-separated 0x-prefixed 20-byte hex addresses",
  }),
  X402_DISABLED_CHAINS: variable(list(chainIdElement, "comma-separated decimal chain ids").prefault(""), {
    group: "x402",
    about: "Chains on which x402 payments are refused.",
    rule: "comma-separated decimal chain ids, each one this deployment serves",
  }),
  X402_MAX_TIMEOUT_SECONDS: variable(z.coerce.number().int().min(30).default(300), {
    group: "x402",
    about: "How long a payment authorization must stay valid (the quote's maxTimeoutSeconds).",
  }),
  X402_SETTLEMENT_BATCH_MS: variable(z.coerce.number().int().min(0).max(60_000).default(250), {
    group: "x402",
    about:
      "Payments settled in transactions of their own (another chain, a paid read) are settled together: the next batch leaves once an earlier one is confirmed or this long after the last one, whichever comes first; 0: no wait.",
  }),

  WEBHOOK_RETRY_SCHEDULE: variable(durations.prefault("5s,5m,30m,2h,5h,10h"), {
    group: "webhooks",
    about:
      "Delays between a webhook delivery's attempts (the first attempt is at once); after the last one it has failed.",
    rule: "comma-separated durations (`500ms`, `5s`, `30m`, `2h`, `1d`), each positive",
  }),
  WEBHOOK_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(60_000).default(10_000), {
    group: "webhooks",
    about: "An attempt (connect, answer, body) gives up after this long.",
  }),
  WEBHOOK_RESPONSE_LIMIT_BYTES: variable(
    z.coerce
      .number()
      .int()
      .min(1024)
      .default(64 * 1024),
    {
      group: "webhooks",
      about:
        "Bytes of a receiver's answer read at most (the rest is dropped with the connection); the first KiB is kept.",
    },
  ),
  WEBHOOK_DISABLE_AFTER: variable(duration.prefault("24h"), {
    group: "webhooks",
    about: "An endpoint whose every attempt failed for this long is disabled (re-enable it with PATCH).",
    rule: "a duration (`500ms`, `5s`, `30m`, `2h`, `1d`)",
  }),
  WEBHOOK_CONCURRENCY: variable(z.coerce.number().int().min(1).max(256).default(16), {
    group: "webhooks",
    about: "Webhook deliveries in flight at once per instance.",
  }),
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: variable(booleanFromEnv.optional(), {
    group: "webhooks",
    about:
      "Webhook URLs may name loopback and private addresses: any API-key holder could then reach the service's own network. Link-local and cloud metadata addresses are refused always.",
    local: "default true, and http is accepted (local receivers)",
    production: "default false; https only, whatever this says",
  }),
  EVENT_RETENTION_DAYS: variable(z.coerce.number().positive().max(3660).default(7), {
    group: "webhooks",
    about: "Events are kept (for streams resuming with Last-Event-ID, and deliveries) this many days.",
  }),
  EVENT_STREAM_HEARTBEAT_MS: variable(z.coerce.number().int().min(100).default(15_000), {
    group: "webhooks",
    about: "A stream with nothing to say sends a comment line this often, so proxies keep it open.",
  }),
  EVENT_STREAMS_PER_KEY: variable(z.coerce.number().int().min(1).max(10_000).default(20), {
    group: "webhooks",
    about:
      "Open GET /events streams one API key may hold on one instance; the next is refused with 429 and Retry-After until one closes.",
  }),
  EVENT_STREAMS_PER_CLIENT: variable(z.coerce.number().int().min(1).max(10_000).default(20), {
    group: "webhooks",
    about:
      "Open GET /events streams one client address (an IPv4 address, an IPv6 /64) may hold on one instance, with or without a key; the next is refused with 429 and Retry-After.",
  }),

  SMTP_URL: variable(
    z
      .string()
      .regex(/^smtps?:\/\/.+/, "must be an smtp:// or smtps:// URL")
      .optional(),
    {
      group: "kyc",
      about:
        "SMTP server that sends KYC invitations (smtp://user:pass@host:587, smtps://…:465); without it the issuer delivers the link.",
      secret: true,
    },
  ),
  SMTP_FROM: variable(z.string().min(3).default("Investor onboarding <no-reply@localhost>"), {
    group: "kyc",
    about: "Sender of KYC invitations.",
  }),
  KYC_LINK_TTL_HOURS: variable(
    z.coerce
      .number()
      .positive()
      .max(24 * 366)
      .default(168),
    { group: "kyc", about: "How long a KYC link stays valid, in hours (fractions allowed)." },
  ),

  CONSOLE_SESSION_TTL: variable(duration.prefault("8h"), {
    group: "console",
    about:
      "How long an operator stays signed in to the console (/console) after signing in; then the session ends and the operator signs in again.",
    rule: "a duration (`30m`, `8h`, `1d`)",
  }),
  CONSOLE_SIGN_IN_LINK_TTL: variable(duration.prefault("1h"), {
    group: "console",
    about: "How long a one-time sign-in link printed by `npm run admin -- operators add|link` works (once).",
    rule: "a duration (`15m`, `1h`, `1d`)",
  }),

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

export type VariableName = keyof typeof variables;

/** Variables named per chain: `<prefix><chainId>`. */
export interface ChainVariable {
  prefix: string;
  /** The variable that applies to every chain, if any. */
  general?: VariableName;
  value: z.ZodType;
  doc: VariableDoc;
}

export const CHAIN_VARIABLES: ChainVariable[] = [
  {
    prefix: "RPC_URL_",
    value: list((url) => {
      if (!/^https?:\/\/[^\s]+$/.test(url)) throw new Error("not an http(s):// URL");
      return url;
    }, "comma-separated http(s):// URLs").refine((l) => l.length > 0, "needs at least one URL"),
    doc: {
      group: "chains",
      about:
        "The chain's RPC providers, tried in order of health (failover, retries). Every chain configured must be servable: its deployment file in DEPLOYMENTS_DIR and, for a chain of the network table, one of ENVIRONMENT's networks. The deploy script reads the same variable.",
      rule: "comma-separated http(s):// URLs",
      secret: true,
      example: "https://…",
    },
  },
  {
    prefix: "CONFIRMATIONS_",
    general: "CONFIRMATIONS",
    value: z.coerce.number().int().min(1).max(64),
    doc: { group: "chains", about: "Confirmations on one chain (beside CONFIRMATIONS for all)." },
  },
  {
    prefix: "RELAYER_PRIVATE_KEY_",
    general: "RELAYER_PRIVATE_KEY",
    value: privateKey,
    doc: {
      group: "relayer",
      about: "The relayer's key on one chain (instead of RELAYER_PRIVATE_KEY there).",
      secret: true,
    },
  },
  {
    prefix: "RELAYER_EXTRA_PRIVATE_KEYS_",
    general: "RELAYER_EXTRA_PRIVATE_KEYS",
    value: z.string(),
    doc: {
      group: "relayer",
      about: "The relayer's further keys on one chain (instead of RELAYER_EXTRA_PRIVATE_KEYS there).",
      rule: "comma-separated private keys",
      secret: true,
    },
  },
];

export const SECRET_NAMES: string[] = Object.entries(variables)
  .filter(([, schema]) => docs.get(schema)?.secret)
  .map(([name]) => name);

/** The chain variable a name is (RPC_URL_84532 → the RPC_URL_ entry and 84532), if any. */
export function chainVariableOf(name: string): { variable: ChainVariable; chainId: number } | undefined {
  // Longest prefix first: RELAYER_EXTRA_PRIVATE_KEYS_ before nothing else that would also match.
  for (const variable of [...CHAIN_VARIABLES].sort((a, b) => b.prefix.length - a.prefix.length)) {
    if (!name.startsWith(variable.prefix)) continue;
    const rest = name.slice(variable.prefix.length);
    if (/^\d+$/.test(rest) && Number(rest) > 0) return { variable, chainId: Number(rest) };
  }
  return undefined;
}

export const configSchema = z.object(variables);
export type RawConfig = z.infer<typeof configSchema>;
