import { id, ZeroHash } from "ethers";
import { badRequest, forbidden, preflightError } from "../../errors";
import type { TokenRecord } from "../../store/tokens";
import { securityToken } from "./tokens";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";

type Context = DomainContext<Pick<Stores, "tokens">>;

/**
 * The roles of a SecurityToken (OpenZeppelin AccessControl) and what each allows. The tokenizer is the token's only
 * DEFAULT_ADMIN_ROLE (handed over in two steps: transferTokenizer, acceptTokenizer) and holds every other role without
 * a grant; it grants and revokes them.
 */
export const TOKEN_ROLES = {
  DEFAULT_ADMIN_ROLE: { hash: ZeroHash, allows: "grant and revoke the token's roles" },
  MINTER_ROLE: { hash: id("MINTER_ROLE"), allows: "mint" },
  WHITELISTER_ROLE: { hash: id("WHITELISTER_ROLE"), allows: "whitelist investors and bind wallets to them" },
  FREEZER_ROLE: { hash: id("FREEZER_ROLE"), allows: "freeze and unfreeze addresses and amounts" },
  ENFORCER_ROLE: { hash: id("ENFORCER_ROLE"), allows: "force transfers" },
  RECOVERY_ROLE: { hash: id("RECOVERY_ROLE"), allows: "request, cancel and execute the recovery of a lost wallet" },
  PAUSER_ROLE: { hash: id("PAUSER_ROLE"), allows: "pause and unpause the token" },
} as const;
export type TokenRole = keyof typeof TOKEN_ROLES;
export const TOKEN_ROLE_NAMES = Object.keys(TOKEN_ROLES) as [TokenRole, ...TokenRole[]];

/** "freezer", "FREEZER_ROLE", "admin" … to the role's constant name; undefined when it names none. */
export function parseTokenRole(text: string): TokenRole | undefined {
  const upper = text
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, "_");
  const name =
    upper === "ADMIN" || upper === "DEFAULT_ADMIN"
      ? "DEFAULT_ADMIN_ROLE"
      : upper.endsWith("_ROLE")
        ? upper
        : `${upper}_ROLE`;
  return name in TOKEN_ROLES ? (name as TokenRole) : undefined;
}

export function holdsTokenRole(ctx: Context, token: TokenRecord, role: TokenRole, account: string): Promise<boolean> {
  return securityToken(ctx, token).hasRole(TOKEN_ROLES[role].hash, account);
}

/**
 * The token an issuer control acts on, for the signer that will sign it. The caller's key is the tokenizer's (the key
 * may use the token) or the key of an agent: either way the signer must hold `role` on chain (the tokenizer holds
 * every role). Another key whose signer holds no role gets "Unauthorized token symbol", as for any token it may not see.
 */
export async function tokenForRoleHolder(
  ctx: Context,
  symbol: string,
  signer: string,
  role: TokenRole,
): Promise<TokenRecord> {
  const found = ctx.apiKey ? await ctx.services.tokens.bySymbolForKey(symbol, ctx.apiKey.id) : undefined;
  const token = found?.token;
  if (!token)
    throw badRequest("No company found with this token symbol", { field: "tokenSymbol", tokenSymbol: symbol });
  if (token.chainId !== ctx.chain.chainId) {
    throw badRequest(`tokenSymbol ${symbol} lives on chain ${token.chainId}, not on chain ${ctx.chain.chainId}`, {
      field: "chainId",
      tokenChainId: token.chainId,
    });
  }
  // An agent's own key reaches the token through a role granted to its signer. The tokenizer's roles are implicit:
  // they never open the token to another key (a key acts on its own tokenizer's tokens, wire-conventions rule 4).
  const isTokenizer = signer.toLowerCase() === token.tokenizerAddress.toLowerCase();
  if (!found.keyMayUse) {
    if (!isTokenizer && (await holdsTokenRole(ctx, token, role, signer))) return token;
    throw forbidden("Unauthorized token symbol", { tokenSymbol: symbol });
  }
  // The key's own token: the plan may go on while the chain answers (a key that may not see the token learns nothing
  // more of it than the refusal, so its check above is awaited first).
  const held = holdsTokenRole(ctx, token, role, signer).then((holds) => {
    if (holds) return;
    throw preflightError(
      `signerAddress ${signer} does not hold ${role} on ${symbol}: only the tokenizer (${token.tokenizerAddress}) or an agent it granted ${role} may ${TOKEN_ROLES[role].allows}`,
      { field: "signerAddress", role, tokenizer: token.tokenizerAddress },
    );
  });
  if (ctx.deferCheck) ctx.deferCheck(held);
  else await held;
  return token;
}
