import { CHAIN_VARIABLES, chainVariableOf, SECRET_NAMES, variables } from "./variables";

/**
 * Variable names the configuration does not know, caught at start: a name with one of our prefixes that is no
 * variable (RPC_URL_SEPOLIA, X402_DISABLED_CHAIN), or a near miss of a known name (CONFIRMATION=3), is a mistake that
 * would otherwise be ignored. Each is answered with the closest valid name.
 */

/** The chain ids of the networks an operator names most, for RPC_URL_SEPOLIA-style mistakes (held to networks.ts by a test). */
export const CHAIN_IDS_BY_NAME: Record<string, number> = {
  SEPOLIA: 11155111,
  BASE_SEPOLIA: 84532,
  BASE: 8453,
  ETHEREUM: 1,
  MAINNET: 1,
  POLYGON: 137,
  POLYGON_AMOY: 80002,
  AMOY: 80002,
  BSC: 56,
  BNB: 56,
  AVALANCHE: 43114,
};

/** Names earlier versions read (the deploy script's RPC URLs): each is refused with the one that replaced it. */
export const RENAMED: Record<string, string> = {
  SEPOLIA_RPC_URL: "RPC_URL_11155111",
  BASE_SEPOLIA_RPC_URL: "RPC_URL_84532",
  BASE_RPC_URL: "RPC_URL_8453",
};

/** Names that start with these belong to us: any such name that is not a variable is refused. */
export const OUR_PREFIXES = [
  "RPC_",
  "X402_",
  "RELAYER_",
  "WEBHOOK_",
  "KYC_",
  "DATA_",
  "DATABASE_",
  "SMTP_",
  "METRICS_",
  "ADMIN_",
  "EVENT_",
  "CONFIRMATIONS",
  "TRUST_",
  "DEPLOYMENTS_",
  "RAMS_",
  "SHUTDOWN_",
  "RECEIPT_",
  "REORG_",
];

const UNIT_SUFFIXES = [
  "_MS",
  "_SECONDS",
  "_HOURS",
  "_DAYS",
  "_BLOCKS",
  "_GWEI",
  "_BYTES",
  "_URL",
  "_KEY",
  "_KEYS",
  "_TOKEN",
];

/** Every plain variable name, with the `_FILE` form of each secret. */
export function knownNames(): string[] {
  return [...Object.keys(variables), ...SECRET_NAMES.map((n) => `${n}_FILE`)];
}

/** Optimal string alignment distance (Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** Whether `name` is a variable of ours (plain, `_FILE` of a secret, or per chain). */
export function isKnownName(name: string): boolean {
  if (knownNames().includes(name)) return true;
  const chain = chainVariableOf(name.replace(/_FILE$/, ""));
  if (!chain) return false;
  return !name.endsWith("_FILE") || chain.variable.doc.secret === true;
}

/** The closest valid name for an unknown one, when there is a plausible one. */
export function closestName(name: string): string | undefined {
  if (RENAMED[name]) return RENAMED[name];
  const perChain = CHAIN_VARIABLES.find((v) => name.startsWith(v.prefix));
  if (perChain) {
    const rest = name.slice(perChain.prefix.length).replace(/_FILE$/, "");
    const id = CHAIN_IDS_BY_NAME[rest.replace(/-/g, "_")];
    return `${perChain.prefix}${id ?? "<chainId>"}`;
  }
  const known = knownNames();
  for (const suffix of UNIT_SUFFIXES) if (known.includes(name + suffix)) return name + suffix;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of [...known, ...CHAIN_VARIABLES.map((v) => `${v.prefix}<chainId>`)]) {
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  const allowed = name.length <= 6 ? 1 : name.length <= 12 ? 2 : 3;
  return best && best.distance <= allowed ? best.name : undefined;
}

/**
 * The unknown names of `env` that are mistakes: ours by prefix and not a variable, or a near miss of one. Names with
 * lower-case letters (npm's, a shell's) are never ours.
 */
export function unknownNames(env: NodeJS.ProcessEnv): { name: string; suggestion?: string }[] {
  const found: { name: string; suggestion?: string }[] = [];
  for (const name of Object.keys(env)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name) || isKnownName(name)) continue;
    const base = name.replace(/_FILE$/, "");
    if (base !== name && isKnownName(base)) {
      found.push({ name, suggestion: base });
      continue;
    }
    const ours = OUR_PREFIXES.some((p) => name.startsWith(p)) || RENAMED[name] !== undefined;
    const suggestion = closestName(name);
    const nearMiss =
      suggestion !== undefined &&
      !suggestion.includes("<chainId>") &&
      editDistance(name, suggestion) <= (name.length <= 6 ? 1 : name.length <= 12 ? 2 : 3);
    const missingUnit = suggestion !== undefined && UNIT_SUFFIXES.some((s) => name + s === suggestion);
    if (ours || nearMiss || missingUnit) found.push({ name, suggestion });
  }
  return found;
}

/** One line per unknown name: "RPC_URL_SEPOLIA is not a variable of this service (did you mean RPC_URL_11155111?)". */
export function describeUnknown(unknown: { name: string; suggestion?: string }[]): string[] {
  return unknown.map(({ name, suggestion }) => {
    if (suggestion && name === `${suggestion}_FILE`)
      return `${name}: ${suggestion} is not a secret, so it is not read from a file; set ${suggestion} itself`;
    const hint = suggestion?.includes("<chainId>")
      ? `; per-chain variables end in a decimal chain id (${suggestion}, e.g. Sepolia 11155111, Base Sepolia 84532, Base 8453)`
      : suggestion
        ? ` (did you mean ${suggestion}?)`
        : " (docs/configuration.md lists every variable)";
    return `${name} is not a variable of this service${hint}`;
  });
}
