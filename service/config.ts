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

const durations = z.string().transform((text, ctx) => {
  try {
    const list = text.split(",").map((d) => parseDuration(d));
    if (!list.length || list.some((d) => d <= 0)) throw new Error("every delay must be positive");
    return list;
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

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
  /**
   * Blocks on the canonical chain (counting its own) a transaction needs before it counts as confirmed, for every
   * chain; unset, each chain's default (service/chains/networks.ts). CONFIRMATIONS_<chainId> sets one chain.
   */
  CONFIRMATIONS: z.coerce.number().int().min(1).max(64).optional(),
  /** After its confirmations, a transaction's block is still watched for a deeper reorg until this many blocks are on top of it. */
  REORG_WATCH_BLOCKS: z.coerce.number().int().min(1).max(10_000).default(64),
  /** A relayed transaction not mined after this many blocks is replaced with higher fees (also when its fee cap falls below the base fee). */
  RELAYER_BUMP_AFTER_BLOCKS: z.coerce.number().int().min(1).max(1_000).default(3),
  /** The highest fee cap (maxFeePerGas) the relayer and the settlement wallet ever sign, in gwei (fractions allowed). */
  RELAYER_MAX_FEE_GWEI: z.coerce.number().positive().default(1_000),
  /** Per RPC attempt: no answer by then and the call is tried again (on the next URL of RPC_URL_<chainId> when there is one). */
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /** Per RPC call: retried with backoff for this long at most, then the chain counts as unavailable (a 503 for a read). */
  RPC_RETRY_BUDGET_MS: z.coerce.number().int().min(100).default(15_000),
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
   * Secret that seals what the database may hold only encrypted (pending x402 authorisations and settlement
   * transactions, signed transactions of batches, open KYC links' tokens, webhook secrets). Generated into DATA_DIR
   * (data-encryption-key, mode 0600) when not set; on a shared database server give every instance the same value,
   * kept apart from the database's backups (a start with another key than the database's is refused).
   */
  DATA_ENCRYPTION_KEY: z.string().min(32, "must be at least 32 characters (e.g. 32 random bytes, hex)").optional(),
  RELAYER_PRIVATE_KEY: privateKey.optional(),
  /**
   * Further relayer keys (comma-separated), each with its own nonces, on every chain the relayer serves
   * (RELAYER_EXTRA_PRIVATE_KEYS_<chainId> for one chain): operations whose outcome does not depend on which key sends
   * them (agentCreateToken) are spread over all keys, so one key's nonce sequence does not bound the relayer's rate.
   */
  RELAYER_EXTRA_PRIVATE_KEYS: z.string().optional(),
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
  /**
   * Payments settled in transactions of their own (not with their operation: a payment on another chain, a paid read)
   * are gathered and settled together, one transaction per batch: the next batch leaves once an earlier one is
   * confirmed or this long after the last one, whichever comes first; a payment that comes when none went out for this long goes
   * at once. 0: no wait (payments of the same moment, or that come while a batch is being sent, still go together).
   */
  X402_SETTLEMENT_BATCH_MS: z.coerce.number().int().min(0).max(60_000).default(250),
  /** SMTP server that sends KYC invitations (smtp://user:pass@host:587, smtps://…:465); without it the issuer delivers the link. */
  SMTP_URL: z.string().regex(/^smtps?:\/\/.+/, "must be an smtp:// or smtps:// URL").optional(),
  /** Sender of KYC invitations. */
  SMTP_FROM: z.string().min(3).default("Investor onboarding <no-reply@localhost>"),
  /** How long a KYC link stays valid, in hours (fractions allowed); default 7 days. */
  KYC_LINK_TTL_HOURS: z.coerce.number().positive().max(24 * 366).default(168),
  /** Delays between a webhook delivery's attempts (the first attempt is at once); after the last one it has failed. */
  WEBHOOK_RETRY_SCHEDULE: durations.prefault(["5s", "5m", "30m", "2h", "5h", "10h"].join(",")),
  /** An attempt (connect, answer, body) gives up after this long. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Bytes of a receiver's answer read at most (the rest is dropped with the connection); the first KiB is kept. */
  WEBHOOK_RESPONSE_LIMIT_BYTES: z.coerce.number().int().min(1024).default(64 * 1024),
  /** An endpoint whose every attempt failed for this long is disabled (shown in its listing; re-enable it with PATCH). */
  WEBHOOK_DISABLE_AFTER: duration.prefault("24h"),
  /** Webhook deliveries in flight at once per instance. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  /**
   * Webhook URLs may name loopback and private addresses (and use http). Default: allowed in the sandbox (local
   * receivers), refused in production. Link-local and cloud metadata addresses are refused always.
   */
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: booleanFromEnv.optional(),
  /** Events are kept (for streams resuming with Last-Event-ID, and deliveries) this many days. */
  EVENT_RETENTION_DAYS: z.coerce.number().positive().max(3660).default(7),
  /** A stream with nothing to say sends a comment line this often, so proxies keep it open. */
  EVENT_STREAM_HEARTBEAT_MS: z.coerce.number().int().min(100).default(15_000),
});

export type RawConfig = z.infer<typeof configSchema>;

export interface Config extends RawConfig {
  /** The first RPC URL per chain id, from RPC_URL_<chainId>. */
  rpcUrls: Map<number, string>;
  /** Every RPC URL per chain id: RPC_URL_<chainId> is a comma-separated list, tried in order of health. */
  rpcEndpoints: Map<number, string[]>;
  /** Confirmations per chain id set by CONFIRMATIONS_<chainId>. */
  confirmationsByChain: Map<number, number>;
  /** Relayer key per chain id: RELAYER_PRIVATE_KEY_<chainId>, else RELAYER_PRIVATE_KEY. */
  relayerKeys: Map<number, string>;
  /** The relayer's further keys per chain id (RELAYER_EXTRA_PRIVATE_KEYS[_<chainId>]); only chains with a relayer key. */
  relayerExtraKeys: Map<number, string[]>;
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
  const rpcEndpoints = new Map<number, string[]>();
  const confirmationsByChain = new Map<number, number>();
  const relayerKeys = new Map<number, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    const rpc = /^RPC_URL_(\d+)$/.exec(name);
    if (rpc) {
      const urls = value.split(",").map((u) => u.trim()).filter(Boolean);
      for (const url of urls) {
        if (!/^https?:\/\/[^\s]+$/.test(url)) throw new ConfigError(`Invalid configuration: ${name}: every URL must be http(s):// (comma-separated), got ${JSON.stringify(url.replace(/\/\/.*@/, "//…@"))}`);
      }
      rpcUrls.set(Number(rpc[1]), urls[0]);
      rpcEndpoints.set(Number(rpc[1]), urls);
    }
    const confirmations = /^CONFIRMATIONS_(\d+)$/.exec(name);
    if (confirmations) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 64) throw new ConfigError(`Invalid configuration: ${name}: must be a whole number of blocks from 1 to 64`);
      confirmationsByChain.set(Number(confirmations[1]), n);
    }
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
    rpcEndpoints,
    confirmationsByChain,
    relayerKeys,
    relayerExtraKeys: extraRelayerKeysByChain(env, relayerKeys, raw.X402_SETTLEMENT_PRIVATE_KEY),
    x402DisabledChains,
    x402PaymentChainId: raw.X402_PAYMENT_CHAIN_ID ?? (raw.ENVIRONMENT === "production" ? 8453 : 84532),
    environmentDir: path.resolve(raw.DATA_DIR, raw.ENVIRONMENT),
  };
}

/** Per chain with a relayer key: RELAYER_EXTRA_PRIVATE_KEYS_<chainId>, else RELAYER_EXTRA_PRIVATE_KEYS. */
function extraRelayerKeysByChain(env: NodeJS.ProcessEnv, relayerKeys: Map<number, string>, settlementKey?: string): Map<number, string[]> {
  const byChain = new Map<number, string[]>();
  for (const [chainId, home] of relayerKeys) {
    const variable = env[`RELAYER_EXTRA_PRIVATE_KEYS_${chainId}`] ? `RELAYER_EXTRA_PRIVATE_KEYS_${chainId}` : "RELAYER_EXTRA_PRIVATE_KEYS";
    const keys = extraRelayerKeys(variable, env[variable], [home, settlementKey]);
    if (keys.length) byChain.set(chainId, keys);
  }
  return byChain;
}

/**
 * The keys of a RELAYER_EXTRA_PRIVATE_KEYS variable: each a private key, none twice, none the relayer's own or the
 * settlement key (`taken`), whose nonces would then be shared by two roles.
 */
function extraRelayerKeys(variable: string, value: string | undefined, taken: (string | undefined)[]): string[] {
  const keys = (value ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  const seen = new Set(taken.filter(Boolean).map((k) => k!.toLowerCase()));
  keys.forEach((key, i) => {
    const checked = privateKey.safeParse(key);
    if (!checked.success) throw new ConfigError(`Invalid configuration: ${variable}: key ${i + 1}: ${checked.error.issues[0].message}`);
    if (seen.has(key.toLowerCase())) throw new ConfigError(`Invalid configuration: ${variable}: key ${i + 1} is given twice, or is the relayer's or the settlement key`);
    seen.add(key.toLowerCase());
  });
  return keys;
}
