import { agentBurnToken } from "./agents/agent-burn-token";
import { agentMintToken } from "./agents/agent-mint-token";
import { METHODS } from "./registry";
import { burnToken } from "./tokenization/transfers";
import { mintToken } from "./tokenization/mint-token";
import type { MethodDefinition } from "./types";

/**
 * Every prepare method: registry.ts, generated from the modules that define them (`npm run methods:generate`). A new
 * method is its own module under service/methods/ (declaring its access, metering and events) and its test.
 */
export { METHODS };

/** Methods a client may name on /prepare-transactions. */
export const PUBLIC_METHODS = METHODS.filter((m) => !m.internal);

const byName = new Map<string, MethodDefinition>();
for (const method of METHODS) {
  byName.set(method.name, method);
  for (const alias of method.aliases ?? []) byName.set(alias, method);
}

export function findMethod(name: string): MethodDefinition | undefined {
  return byName.get(name);
}

export function findPublicMethod(name: string): MethodDefinition | undefined {
  const method = byName.get(name);
  return method && !method.internal ? method : undefined;
}

/**
 * The method a /prepare-transactions body means. The published CLI sends `tx prepare --method mintToken|burnToken` as
 * agentMintToken / agentBurnToken carrying the security-token fields (docs/wire-conventions.md, What existing clients
 * send): a body that names a tokenSymbol and no tokenAddress is the security-token method it meant.
 */
export function methodForBody(name: string, body: unknown): MethodDefinition | undefined {
  const method = findPublicMethod(name);
  const fields = (body ?? {}) as Record<string, unknown>;
  const meantSecurityToken = fields.tokenSymbol !== undefined && fields.tokenAddress === undefined;
  if (method === agentMintToken && meantSecurityToken && fields.userToMint !== undefined) return mintToken;
  if (method === agentBurnToken && meantSecurityToken) return burnToken;
  return method;
}
