import path from "node:path";
import { z } from "zod";

/** The two deployments of the API. They use separate databases; credentials of one never work on the other. */
export const environments = ["sandbox", "production"] as const;
export type Environment = (typeof environments)[number];

const privateKey = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte hex private key");

const booleanFromEnv = z
  .enum(["true", "false", "1", "0"])
  .transform((v) => v === "true" || v === "1");

const configSchema = z.object({
  ENVIRONMENT: z.enum(environments).default("sandbox"),
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Base URL clients reach the service at; used in x402 resource URLs. Defaults to http://HOST:PORT. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default(".data"),
  /** A PostgreSQL server; when absent the embedded PGlite database under DATA_DIR/<environment>/pglite is used. */
  DATABASE_URL: z.string().optional(),
  /** PostgreSQL schema to use (created if missing); lets several deployments or test runs share one database. */
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
  DEPLOYMENTS_DIR: z.string().default("deployments"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** `json` (one JSON object a line, for log shippers; the default) or `pretty` (readable lines; the sandbox's npm start). */
  LOG_FORMAT: z.enum(["json", "pretty"]).default("json"),
  /** Confirmations a transaction needs before the next one of its batch is broadcast. */
  CONFIRMATIONS: z.coerce.number().int().min(1).max(64).default(1),
  /** How long POST /send-transactions waits for a batch to finish before answering with status pending. */
  SEND_WAIT_MS: z.coerce.number().int().min(0).default(25_000),
  /** Give up waiting for a receipt after this long; the batch stays pending and is resumed on the next start. */
  RECEIPT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(10 * 60_000),
  /** On SIGTERM/SIGINT: how long requests in flight may take to finish before their connections are closed. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /** When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; unset, it is public (scrape it on a private network). */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Shared secret for the operator endpoints (/admin/*). Generated into DATA_DIR when not set. */
  ADMIN_TOKEN: z.string().min(24).optional(),
  /**
   * Secret that seals what the database may hold only encrypted (pending x402 authorisations, webhook secrets).
   * Generated into DATA_DIR (data-encryption-key, mode 0600) when not set; on a shared database server give every
   * instance the same value, kept apart from the database's backups.
   */
  DATA_ENCRYPTION_KEY: z.string().min(32, "must be at least 32 characters (e.g. 32 random bytes, hex)").optional(),
  RELAYER_PRIVATE_KEY: privateKey.optional(),
  X402_ENABLED: booleanFromEnv.default(true),
  /** Key the in-process facilitator settles EIP-3009 payments with (pays the settlement gas). */
  X402_SETTLEMENT_PRIVATE_KEY: privateKey.optional(),
  /** Chain whose USDC takes the payments; default: the environment's Base chain (Base Sepolia in the sandbox, Base in production). */
  X402_PAYMENT_CHAIN_ID: z.coerce.number().int().positive().optional(),
  /** Address that receives payments; defaults to the settlement key's address. */
  X402_PAY_TO: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional(),
  /** Use an external facilitator instead of the in-process one. */
  X402_FACILITATOR_URL: z.string().url().optional(),
  /** Comma-separated chain ids on which x402 payments are refused. */
  X402_DISABLED_CHAINS: z.string().default(""),
  X402_MAX_TIMEOUT_SECONDS: z.coerce.number().int().min(30).default(300),
  /** SMTP server that sends KYC invitations (smtp://user:pass@host:587, smtps://…:465); without it the issuer delivers the link. */
  SMTP_URL: z.string().regex(/^smtps?:\/\/.+/, "must be an smtp:// or smtps:// URL").optional(),
  /** Sender of KYC invitations. */
  SMTP_FROM: z.string().min(3).default("Investor onboarding <no-reply@localhost>"),
  /** How long a KYC link stays valid, in hours (fractions allowed); default 7 days. */
  KYC_LINK_TTL_HOURS: z.coerce.number().positive().max(24 * 366).default(168),
});

export type RawConfig = z.infer<typeof configSchema>;

export interface Config extends RawConfig {
  /** RPC URL per chain id, from RPC_URL_<chainId>. */
  rpcUrls: Map<number, string>;
  /** Relayer key per chain id: RELAYER_PRIVATE_KEY_<chainId>, else RELAYER_PRIVATE_KEY. */
  relayerKeys: Map<number, string>;
  x402DisabledChains: Set<number>;
  /** X402_PAYMENT_CHAIN_ID, else the environment's Base chain. */
  x402PaymentChainId: number;
  /** Directory of this environment's embedded database and operator files. */
  environmentDir: string;
}

export class ConfigError extends Error {}

/** Reads and validates the environment. Throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const raw = parsed.data;
  const rpcUrls = new Map<number, string>();
  const relayerKeys = new Map<number, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    const rpc = /^RPC_URL_(\d+)$/.exec(name);
    if (rpc) rpcUrls.set(Number(rpc[1]), value);
    const relayer = /^RELAYER_PRIVATE_KEY_(\d+)$/.exec(name);
    if (relayer) {
      const checked = privateKey.safeParse(value);
      if (!checked.success) throw new ConfigError(`Invalid configuration: ${name}: ${checked.error.issues[0].message}`);
      relayerKeys.set(Number(relayer[1]), value);
    }
  }
  if (raw.RELAYER_PRIVATE_KEY) {
    for (const chainId of rpcUrls.keys()) if (!relayerKeys.has(chainId)) relayerKeys.set(chainId, raw.RELAYER_PRIVATE_KEY);
  }
  const x402DisabledChains = new Set(
    raw.X402_DISABLED_CHAINS.split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map(Number),
  );
  return {
    ...raw,
    rpcUrls,
    relayerKeys,
    x402DisabledChains,
    x402PaymentChainId: raw.X402_PAYMENT_CHAIN_ID ?? (raw.ENVIRONMENT === "production" ? 8453 : 84532),
    environmentDir: path.resolve(raw.DATA_DIR, raw.ENVIRONMENT),
  };
}
