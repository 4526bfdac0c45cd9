import { z } from "zod";
import { variable } from "./variable-docs";
import { addressElement, booleanFromEnv, chainIdElement, duration, durations, list, privateKey } from "./value-rules";

/**
 * The variables of what the service offers beyond relaying: x402 payments (with RAMS_ALLOWED_CONTRACTS, of the chains
 * group, where it has always stood in the schema's order), webhooks and event streams, investor onboarding (KYC) and
 * its mail, the operator console. They join the others in the one schema.
 */
export const featureVariables = {
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
  X402_REFUND_PRIVATE_KEY: variable(privateKey.optional(), {
    group: "x402",
    about:
      "Key of the refund wallet: it pays back, in USDC on the payment chain, a payment settled for an operation that then failed for a reason of the service's (the relayer without gas money, a transaction the service signed refused). Fund it with USDC and some ETH for gas. Without one, such refunds wait on the console's Refunds page for an operator to pay and mark. A key of its own: not the relayer's nor the settlement key.",
    secret: true,
    example: "<0x… 32-byte hex key>",
  }),
  X402_REFUND_KEYSTORE: variable(z.string().optional(), {
    group: "x402",
    about:
      "The refund key as an encrypted JSON keystore, decrypted at start with X402_REFUND_KEYSTORE_PASSWORD: instead of X402_REFUND_PRIVATE_KEY.",
    rule: "a file path",
  }),
  X402_REFUND_KEYSTORE_PASSWORD: variable(z.string().optional(), {
    group: "x402",
    about: "The password of X402_REFUND_KEYSTORE (give it as X402_REFUND_KEYSTORE_PASSWORD_FILE).",
    secret: true,
  }),
  X402_REFUND_PKCS11_MODULE: variable(z.string().optional(), {
    group: "x402",
    about:
      "The refund key on a PKCS#11 token: the token's PKCS#11 library (instead of X402_REFUND_PRIVATE_KEY and X402_REFUND_KEYSTORE). Needs X402_REFUND_PKCS11_TOKEN_LABEL, X402_REFUND_PKCS11_KEY_LABEL and X402_REFUND_PKCS11_PIN too.",
    rule: "a readable file path",
  }),
  X402_REFUND_PKCS11_TOKEN_LABEL: variable(z.string().optional(), {
    group: "x402",
    about: "The label of the token that holds the refund key.",
  }),
  X402_REFUND_PKCS11_KEY_LABEL: variable(z.string().optional(), {
    group: "x402",
    about: "The label (CKA_LABEL) of the refund key pair (secp256k1) on the token.",
  }),
  X402_REFUND_PKCS11_PIN: variable(z.string().optional(), {
    group: "x402",
    about: "The token's user PIN (give it as X402_REFUND_PKCS11_PIN_FILE).",
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

  CONSOLE_STUCK_AFTER_BLOCKS: variable(z.coerce.number().int().min(1).max(10_000).default(10), {
    group: "console",
    about:
      "The console's overview flags a transaction that is still not mined this many blocks after it was first broadcast (or whose fee cap is below the chain's base fee), and links to the batches it holds up.",
  }),
  CONSOLE_SESSION_TTL: variable(duration.prefault("8h"), {
    group: "console",
    about:
      "How long an operator stays signed in to the console (/console) after signing in; then the session ends and the operator signs in again.",
    rule: "a duration (`30m`, `8h`, `1d`)",
  }),
  CONSOLE_SESSION_IDLE_TIMEOUT: variable(duration.prefault("30m"), {
    group: "console",
    about:
      "A console session not used for this long ends (the operator signs in again), however long CONSOLE_SESSION_TTL still gives it.",
    rule: "a duration (`15m`, `30m`, `2h`)",
  }),
  CONSOLE_SIGN_IN_LINK_TTL: variable(duration.prefault("1h"), {
    group: "console",
    about: "How long a one-time sign-in link printed by `npm run admin -- operators add|link` works (once).",
    rule: "a duration (`15m`, `1h`, `1d`)",
  }),
};
