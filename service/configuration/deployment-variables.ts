import { z } from "zod";
import { variable } from "./variable-docs";
import { environments, privateKey, trustProxy } from "./value-rules";

/**
 * The variables of where the service runs and what it signs with, in the order docs/configuration.md and .env.example
 * list them: deployment (listening, networks, data), the secrets it keeps, chains (RPC, confirmations, reorgs) and the
 * relayer. They join the others in the one schema.
 */
export const deploymentVariables = {
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
};
