import path from "node:path";
import { describeUnknown, unknownNames } from "./configuration/names";
import { readKeystores } from "./configuration/keystores";
import { readPkcs11Keys, type Pkcs11KeyReference } from "./configuration/pkcs11-keys";
import { readSecretFiles } from "./configuration/secret-files";
import { keyFilePlacementProblem } from "./configuration/key-placement";
import { CHAIN_VARIABLES, chainVariableOf, configSchema, type RawConfig } from "./configuration/variables";
import { privateKeySchema, type TrustProxy } from "./configuration/value-rules";

export { environments, parseDuration, type Environment, type TrustProxy } from "./configuration/value-rules";
export type { RawConfig };

/**
 * How a start behaves, apart from which networks it serves (ENVIRONMENT). `local`: the sandbox on this machine
 * (`npm start`, `npm run service`, the test helpers): development defaults (secrets generated into DATA_DIR, webhooks
 * to local receivers over http, /metrics public, migrations applied at start). `production`: every other start, the
 * built service whatever its ENVIRONMENT: secrets required, webhooks to public https only, /metrics behind its token
 * or off, the schema migrated only by `npm run migrate`.
 */
export type Profile = "local" | "production";

export interface Config extends RawConfig {
  profile: Profile;
  /** The first RPC URL per chain id, from RPC_URL_<chainId>. */
  rpcUrls: Map<number, string>;
  /** Every RPC URL per chain id: RPC_URL_<chainId> is a comma-separated list, tried in order of health. */
  rpcEndpoints: Map<number, string[]>;
  /** Confirmations per chain id set by CONFIRMATIONS_<chainId>. */
  confirmationsByChain: Map<number, number>;
  /** Block explorers per chain id set by EXPLORER_URL_<chainId> (the console's links). */
  explorerUrls: Map<number, string>;
  /** Relayer key per chain id: RELAYER_PRIVATE_KEY_<chainId>, else RELAYER_PRIVATE_KEY. */
  relayerKeys: Map<number, string>;
  /** The relayer's further keys per chain id (RELAYER_EXTRA_PRIVATE_KEYS[_<chainId>]); only chains with a relayer key. */
  relayerExtraKeys: Map<number, string[]>;
  /** The relayer's key on a PKCS#11 token (RELAYER_PKCS11_*): the relayer of every served chain without a raw key of its own. */
  relayerPkcs11?: Pkcs11KeyReference;
  /** The settlement key on a PKCS#11 token (X402_SETTLEMENT_PKCS11_*). */
  settlementPkcs11?: Pkcs11KeyReference;
  /** The refund key on a PKCS#11 token (X402_REFUND_PKCS11_*). */
  refundPkcs11?: Pkcs11KeyReference;
  x402DisabledChains: Set<number>;
  /** X402_PAYMENT_CHAIN_ID, else the environment's Base chain. */
  x402PaymentChainId: number;
  /** Directory of this environment's embedded database and operator files. */
  environmentDir: string;
  /** TRUST_PROXY, as Express's `trust proxy` takes it. */
  trustProxy: TrustProxy;
}

export class ConfigError extends Error {}

export interface LoadOptions {
  /** Default production: only the local sandbox's own entry points say `local`. */
  profile?: Profile;
  /** The admin tool reads the same configuration but needs none of the service's own secrets. */
  tool?: "service" | "admin";
}

/** The secrets a production service refuses to start without. */
const REQUIRED_IN_PRODUCTION = {
  ADMIN_TOKEN: "guards the operator endpoint; at least 24 characters, e.g. $(openssl rand -base64 32)",
  DATA_ENCRYPTION_KEY:
    "seals what the database holds encrypted; at least 32 characters, the same for every instance, e.g. $(openssl rand -hex 32)",
} as const;

/**
 * Reads and validates the environment (docs/configuration.md lists every variable). Throws a ConfigError naming every
 * bad variable: a value against its rule, a secret file that cannot be read, an unknown name that looks like ours
 * (with the closest valid name), a per-chain variable for a chain without an RPC URL, and, in production, each
 * missing secret.
 */
export function loadConfig(given: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): Config {
  const profile = options.profile ?? "production";
  const { env, problems } = readSecretFiles(given);
  problems.push(...describeUnknown(unknownNames(env)));
  // An empty variable is an unset one (`FOO=` in an env file, or a test clearing one).
  const keystores = readKeystores(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== "")),
  );
  problems.push(...keystores.problems);
  const set = keystores.env;
  const pkcs11 = readPkcs11Keys(set);
  problems.push(...pkcs11.problems);
  const parsed = configSchema.safeParse(set);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  const perChain = readChainVariables(set, problems);
  if (profile === "production" && options.tool !== "admin") {
    for (const [name, why] of Object.entries(REQUIRED_IN_PRODUCTION)) {
      if (!set[name] && !problems.some((p) => p.startsWith(`${name}`)))
        problems.push(
          `${name}: required outside the local sandbox (${why}; or ${name}_FILE naming a file that holds it)`,
        );
    }
  }
  if (profile === "production" && parsed.success) {
    const placement = keyFilePlacementProblem(given, {
      dataDir: parsed.data.DATA_DIR,
      embedded: !parsed.data.DATABASE_URL,
    });
    if (placement) problems.push(placement);
  }
  if (problems.length || !parsed.success) throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  const raw = parsed.data;
  const { rpcEndpoints, confirmationsByChain, explorerUrls, relayerKeys } = perChain;
  for (const [name, chainId] of [...perChain.named].filter(([, id]) => !rpcEndpoints.has(id))) {
    problems.push(
      `${name}: chain ${chainId} has no RPC_URL_${chainId}, so it is not served; set RPC_URL_${chainId} or remove ${name}`,
    );
  }
  for (const chainId of raw.X402_DISABLED_CHAINS.filter((id) => !rpcEndpoints.has(id))) {
    problems.push(`X402_DISABLED_CHAINS: chain ${chainId} is not served (no RPC_URL_${chainId})`);
  }
  if (raw.RELAYER_PRIVATE_KEY) {
    for (const chainId of rpcEndpoints.keys())
      if (!relayerKeys.has(chainId)) relayerKeys.set(chainId, raw.RELAYER_PRIVATE_KEY);
  }
  let relayerExtraKeys = new Map<number, string[]>();
  try {
    const relayerChains = [...rpcEndpoints.keys()].filter((id) => relayerKeys.has(id) || pkcs11.relayer);
    relayerExtraKeys = extraRelayerKeysByChain(set, relayerChains, relayerKeys, raw.X402_SETTLEMENT_PRIVATE_KEY);
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  return {
    ...raw,
    profile,
    rpcUrls: new Map([...rpcEndpoints].map(([id, urls]) => [id, urls[0]])),
    rpcEndpoints,
    confirmationsByChain,
    explorerUrls,
    relayerKeys,
    relayerExtraKeys,
    relayerPkcs11: pkcs11.relayer,
    settlementPkcs11: pkcs11.settlement,
    refundPkcs11: pkcs11.refund,
    x402DisabledChains: new Set(raw.X402_DISABLED_CHAINS),
    x402PaymentChainId: raw.X402_PAYMENT_CHAIN_ID ?? (raw.ENVIRONMENT === "production" ? 8453 : 84532),
    environmentDir: path.resolve(raw.DATA_DIR, raw.ENVIRONMENT),
    trustProxy: raw.TRUST_PROXY,
  };
}

/** RPC_URL_<id>, CONFIRMATIONS_<id>, EXPLORER_URL_<id>, RELAYER_PRIVATE_KEY_<id> (and the names of every per-chain variable set, with its chain). */
function readChainVariables(env: Record<string, string | undefined>, problems: string[]) {
  const rpcEndpoints = new Map<number, string[]>();
  const confirmationsByChain = new Map<number, number>();
  const explorerUrls = new Map<number, string>();
  const relayerKeys = new Map<number, string>();
  const named = new Map<string, number>();
  for (const [name, value] of Object.entries(env)) {
    const found = chainVariableOf(name);
    if (!found || value === undefined) continue;
    const checked = found.variable.value.safeParse(value);
    if (!checked.success) {
      const shown = found.variable.doc.secret ? "" : ` (got ${JSON.stringify(value.replace(/\/\/.*@/, "//…@"))})`;
      problems.push(...checked.error.issues.map((i) => `${name}: ${i.message}${shown}`));
      continue;
    }
    const { prefix } = found.variable;
    if (prefix === "RPC_URL_") rpcEndpoints.set(found.chainId, checked.data as string[]);
    else named.set(name, found.chainId);
    if (prefix === "CONFIRMATIONS_") confirmationsByChain.set(found.chainId, checked.data as number);
    if (prefix === "EXPLORER_URL_") explorerUrls.set(found.chainId, checked.data as string);
    if (prefix === "RELAYER_PRIVATE_KEY_") relayerKeys.set(found.chainId, value);
  }
  return { rpcEndpoints, confirmationsByChain, explorerUrls, relayerKeys, named };
}

/** Per chain with a relayer key (`relayerChains`): RELAYER_EXTRA_PRIVATE_KEYS_<chainId>, else RELAYER_EXTRA_PRIVATE_KEYS. */
function extraRelayerKeysByChain(
  env: Record<string, string | undefined>,
  relayerChains: number[],
  relayerKeys: Map<number, string>,
  settlementKey?: string,
): Map<number, string[]> {
  const byChain = new Map<number, string[]>();
  for (const chainId of relayerChains) {
    const variable = env[`RELAYER_EXTRA_PRIVATE_KEYS_${chainId}`]
      ? `RELAYER_EXTRA_PRIVATE_KEYS_${chainId}`
      : "RELAYER_EXTRA_PRIVATE_KEYS";
    const keys = extraRelayerKeys(variable, env[variable], [relayerKeys.get(chainId), settlementKey]);
    if (keys.length) byChain.set(chainId, keys);
  }
  return byChain;
}

/**
 * The keys of a RELAYER_EXTRA_PRIVATE_KEYS variable: each a private key, none twice, none the relayer's own or the
 * settlement key (`taken`), whose nonces would then be shared by two roles.
 */
function extraRelayerKeys(variable: string, value: string | undefined, taken: (string | undefined)[]): string[] {
  const keys = (value ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  const seen = new Set(taken.filter(Boolean).map((k) => k!.toLowerCase()));
  keys.forEach((key, i) => {
    const checked = privateKeySchema.safeParse(key);
    if (!checked.success) throw new ConfigError(`${variable}: key ${i + 1}: ${checked.error.issues[0].message}`);
    if (seen.has(key.toLowerCase()))
      throw new ConfigError(`${variable}: key ${i + 1} is given twice, or is the relayer's or the settlement key`);
    seen.add(key.toLowerCase());
  });
  return keys;
}

/** Every per-chain variable prefix (RPC_URL_, CONFIRMATIONS_, …), for tools that clear a configuration. */
export const CHAIN_VARIABLE_PREFIXES = CHAIN_VARIABLES.map((v) => v.prefix);
