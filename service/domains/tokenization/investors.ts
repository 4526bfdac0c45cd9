import { ZeroHash } from "ethers";
import type { TokenRecord } from "../../store/tokens";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";
import { securityToken } from "./tokens";

type Context = DomainContext<Pick<Stores, "tokens" | "investors" | "sealer">>;

/**
 * The investor a wallet is bound to on a token (SecurityToken.investorOf): a recovery moves holdings only between two
 * wallets bound to the same investor, so the binding is what stands between a recovery agent and someone else's
 * holdings. The service identifies an investor of a token by its e-mail. Its id is the one already on chain for another
 * wallet of that e-mail on the token (so a binding outlives anything the service keeps), else a keyed hash of the token
 * and the e-mail under the data key: stable, and nobody without the key can tell whose it is.
 */
export async function investorIdFor(
  ctx: Context,
  token: Pick<TokenRecord, "chainId" | "symbol"> & Partial<Pick<TokenRecord, "id" | "tokenAddress">>,
  email: string,
): Promise<string> {
  const normalized = email.trim().toLowerCase();
  if (token.id && token.tokenAddress) {
    const wallets = await ctx.services.investors.byEmail(token.id, normalized);
    const contract = securityToken(ctx, token as TokenRecord);
    for (const wallet of wallets) {
      const bound = await contract.investorOf(wallet.address);
      if (bound !== ZeroHash) return bound;
    }
  }
  return `0x${ctx.services.sealer.keyedHash(`${token.chainId}:${token.symbol}:${normalized}`, "investor-id")}`;
}

/**
 * The id to pass to whitelistInvestors for `wallet`: the investor's, or 0 to leave an existing binding as it is (a
 * wallet already bound to someone else keeps its binding: the token refuses to move a wallet that holds anything).
 */
export async function bindingFor(
  ctx: Context,
  token: TokenRecord,
  wallet: string,
  email: string | null | undefined,
): Promise<string> {
  if (!email) return ZeroHash;
  const id = await investorIdFor(ctx, token, email);
  const current = await securityToken(ctx, token).investorOf(wallet);
  return current === ZeroHash ? id : ZeroHash;
}
