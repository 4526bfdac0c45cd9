import { z } from "zod";
import { deploymentVariables } from "./deployment-variables";
import { featureVariables } from "./feature-variables";
import { mcpVariables } from "./mcp-variables";
import { operationsVariables } from "./operations-variables";
import { list, privateKey } from "./value-rules";
import { docs, type VariableDoc } from "./variable-docs";

/**
 * Every environment variable the service, its admin tool and its deploy script read: one zod schema (what a value may
 * be, its default) with what an operator needs to know beside it (what it does, whether it is a secret, what the local
 * sandbox and a production start do with it). config.ts parses with it; scripts/generate-config-docs.ts writes
 * docs/configuration.md and .env.example from it (a test fails when they are stale).
 */

export const variables = {
  ...deploymentVariables,
  ...featureVariables,
  ...mcpVariables,
  ...operationsVariables,
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
    prefix: "EXPLORER_URL_",
    value: z
      .string()
      .regex(/^https?:\/\/[^\s?#]+[^\s?#/]$/, "must be an http(s):// URL without a trailing slash, query or fragment"),
    doc: {
      group: "chains",
      about:
        "The block explorer the operator console links hashes, addresses and blocks of one chain to (`<url>/tx/<hash>`, `/address/<address>`, `/block/<number>`). Unset: the public network's usual explorer (service/chains/networks.ts), none for other chains and for the local sandbox's chains.",
      example: "https://sepolia.basescan.org",
    },
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
