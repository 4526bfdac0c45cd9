import { ZeroAddress } from "ethers";
import { preflightError, type ApiError } from "../../errors";
import type { TokenRecord } from "../../store/tokens";
import { securityToken } from "./tokens";
import type { DomainContext } from "../context";
import type { Stores } from "../../store/stores";

type Context = DomainContext<Pick<Stores, "tokens">>;

/**
 * The ERC-1404 restriction codes of SecurityToken (contracts/tokenization/TransferRestrictions.sol), by code. The token
 * answers the code and its message; the name is what clients branch on.
 */
export const RESTRICTION_NAMES = [
  "SUCCESS",
  "PAUSED",
  "SENDER_NOT_WHITELISTED",
  "RECEIVER_NOT_WHITELISTED",
  "SENDER_FROZEN",
  "RECEIVER_FROZEN",
  "INSUFFICIENT_BALANCE",
  "INSUFFICIENT_UNFROZEN_BALANCE",
  "SUPPLY_CAP_EXCEEDED",
] as const;
export type RestrictionName = (typeof RESTRICTION_NAMES)[number];

export interface TransferRestriction {
  code: number;
  name: RestrictionName | "UNKNOWN";
  message: string;
}

/**
 * What the token says about moving `units` from `from` to `to` now (`from` zero: an issuance, `to` zero: a burn):
 * detectTransferRestriction, then the token's own message for the code.
 */
export async function transferRestriction(
  ctx: Context,
  token: TokenRecord,
  from: string,
  to: string,
  units: bigint,
): Promise<TransferRestriction> {
  const contract = securityToken(ctx, token);
  const code = Number(await contract.detectTransferRestriction(from, to, units));
  const message = await contract.messageForTransferRestriction(code);
  return { code, name: RESTRICTION_NAMES[code] ?? "UNKNOWN", message };
}

/** The request field a restriction is about: the sending side, the receiving side, or the amount. */
function fieldOf(name: TransferRestriction["name"], fields: { from: string; to: string }): string {
  if (name === "SENDER_NOT_WHITELISTED" || name === "SENDER_FROZEN") return fields.from;
  if (name === "RECEIVER_NOT_WHITELISTED" || name === "RECEIVER_FROZEN") return fields.to;
  if (name === "PAUSED") return "tokenSymbol";
  return "amount";
}

/** The 400 a prepare answers when the token would refuse the move: its ERC-1404 code, name and message in details. */
export function restrictionError(
  token: TokenRecord,
  r: TransferRestriction,
  fields: { from: string; to: string },
  message?: string,
): ApiError {
  return preflightError(
    message ?? `${token.symbol} refuses this transfer: ${r.message} (restriction ${r.code}, ${r.name})`,
    {
      field: fieldOf(r.name, fields),
      restrictionCode: r.code,
      restriction: r.name,
      restrictionMessage: r.message,
    },
  );
}

/** Refuses, before anyone signs, a move the token would refuse. */
export async function requireUnrestricted(
  ctx: Context,
  token: TokenRecord,
  move: { from: string; to: string; units: bigint },
  fields: { from: string; to: string },
): Promise<void> {
  const r = await transferRestriction(ctx, token, move.from, move.to, move.units);
  if (r.code !== 0) throw restrictionError(token, r, fields);
}

/** Why the token refuses to deliver to `account` (an issuance of 0: the receiver's side only); code 0 when it accepts. */
export function receiverRestriction(ctx: Context, token: TokenRecord, account: string): Promise<TransferRestriction> {
  return transferRestriction(ctx, token, ZeroAddress, account, 0n);
}
