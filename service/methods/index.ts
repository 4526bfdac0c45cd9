import { approve, burnToken, transferFrom, transferTo } from "./tokenization/transfers";
import { claimDividends, dividendDistribution } from "./tokenization/dividends";
import { mintToken } from "./tokenization/mintToken";
import { newTokenization } from "./tokenization/newTokenization";
import { whitelist } from "./tokenization/whitelist";
import { claimTokens } from "./sto/claimTokens";
import { closeOffer } from "./sto/closeOffer";
import { newInvest } from "./sto/newInvest";
import { newSto } from "./sto/newSto";
import { agentCreateToken } from "./agents/agentCreateToken";
import { faucetBkn } from "./faucetBkn";
import type { MethodDefinition } from "./types";

/** Every prepare method. Adding a method is one module and one line here. */
export const METHODS: MethodDefinition[] = [
  newTokenization,
  mintToken,
  whitelist,
  burnToken,
  transferTo,
  transferFrom,
  approve,
  dividendDistribution,
  claimDividends,
  newSto,
  newInvest,
  claimTokens,
  closeOffer,
  agentCreateToken,
  faucetBkn,
];

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
