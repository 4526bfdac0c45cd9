import { contractAt } from "../../chains/contract-at";
import { StoEscrow__factory } from "../../../typechain-types/factories/contracts/tokenization/StoEscrow__factory";
import type { TokenRecord } from "../../store/tokens";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";

/** What this domain reads: the offering records, and the chain. */
type Context = DomainContext<Pick<Stores, "offerings">>;
// Offerings (STOs): the escrow of a token and its current offering, for writes and reads alike.

/** Names of IStoEscrow.Status, in enum order. */
export const STO_STATUS = ["NONE", "PENDING", "ACTIVE", "PAUSED", "ENDED", "COMPLETED", "FAILED"] as const;
export type StoStatus = (typeof STO_STATUS)[number];

export function escrowOf(ctx: Context, token: TokenRecord) {
  return contractAt(StoEscrow__factory, token.escrowAddress, ctx.chain.provider);
}

/** The chain's clock: the latest block's timestamp (local chains follow the wall clock too, see scripts/lib/local-chain.ts). */
export async function chainNow(ctx: Context): Promise<number> {
  const block = await ctx.chain.provider.getBlock("latest");
  return block!.timestamp;
}

/** The token's latest offering with its live status; id 0 when it never had one. */
export async function currentOffering(ctx: Context, token: TokenRecord) {
  const escrow = escrowOf(ctx, token);
  const id = Number(await escrow.currentOfferingId());
  if (id === 0) return { id, status: "NONE" as StoStatus, offering: undefined };
  const [offering, status] = await Promise.all([escrow.offering(id), escrow.status(id)]);
  return { id, status: STO_STATUS[Number(status)], offering };
}
