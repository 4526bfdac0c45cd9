import { approve, burnToken, transferFrom, transferTo } from "./tokenization/transfers";
import { claimDividends, dividendDistribution } from "./tokenization/dividends";
import { mintToken } from "./tokenization/mintToken";
import { newTokenization } from "./tokenization/newTokenization";
import { whitelist } from "./tokenization/whitelist";
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
];

const byName = new Map<string, MethodDefinition>();
for (const method of METHODS) {
  byName.set(method.name, method);
  for (const alias of method.aliases ?? []) byName.set(alias, method);
}

export function findMethod(name: string): MethodDefinition | undefined {
  return byName.get(name);
}
