import { getAddress } from "ethers";
import { z } from "zod";
import { responseFields } from "../wire/responses";
import { fromUnits, toUnits } from "../model/units";
import { transferRestriction, RESTRICTION_NAMES } from "../domains/tokenization/restrictions";
import { TOKEN_CONTROL_ACTIONS } from "../store/token-controls";
import type { DomainContext } from "../domains/context";
import type { TokenRecord } from "../store/tokens";

const { address, hash32, integerText, int } = responseFields;
const amount = z.string().regex(/^\d+(\.\d+)?$/);

export const TransferCheck = z
  .strictObject({
    tokenSymbol: z.string(),
    from: address,
    to: address,
    amount,
    amountRaw: integerText,
    allowed: z.boolean(),
    restrictionCode: int.meta({ description: "ERC-1404 detectTransferRestriction: 0 when allowed" }),
    restriction: z.enum([...RESTRICTION_NAMES, "UNKNOWN"]),
    message: z.string().meta({ description: "The token's messageForTransferRestriction for the code" }),
  })
  .meta({
    id: "TransferCheck",
    description: `Whether the token would let from move amount to to now. from 0x000…0 checks an issuance, to 0x000…0 a burn. Codes: ${RESTRICTION_NAMES.map((n, i) => `${i} ${n}`).join(", ")}`,
  });

/** GET /check-transfer: the token's own answer (ERC-1404), code and message, read at a recent head. */
export async function transferCheckView(
  ctx: DomainContext,
  token: TokenRecord,
  q: { from: string; to: string; amount: string },
): Promise<z.infer<typeof TransferCheck>> {
  const units = toUnits(q.amount, token.decimals, "amount", { allowZero: true });
  const r = await transferRestriction(ctx, token, q.from, q.to, units);
  return {
    tokenSymbol: token.symbol,
    from: getAddress(q.from),
    to: getAddress(q.to),
    amount: fromUnits(units, token.decimals),
    amountRaw: units.toString(),
    allowed: r.code === 0,
    restrictionCode: r.code,
    restriction: r.name,
    message: r.message,
  };
}

export const TokenControlList = z
  .strictObject({
    tokenSymbol: z.string(),
    controls: z.array(
      z.strictObject({
        id: z.string(),
        action: z.enum(TOKEN_CONTROL_ACTIONS),
        account: address.nullable(),
        counterparty: address.nullable(),
        amount: amount.nullable().meta({ description: "Moved, or the frozen amount after a freeze (human units)" }),
        amountRaw: integerText.nullable(),
        role: z.string().nullable(),
        agent: address.nullable(),
        txHash: hash32,
        blockNumber: int,
        date: z.string(),
      }),
    ),
    total: int,
    limit: int,
    offset: int,
  })
  .meta({
    id: "TokenControlList",
    description:
      "Issuer controls confirmed on the token, oldest first (freezes, forced transfers, recoveries, pauses, roles)",
  });

/** GET /get-token-controls: the records the controls' events left. */
export async function tokenControlsView(
  ctx: DomainContext,
  token: TokenRecord,
  q: { account?: string; limit: number; offset: number },
): Promise<z.infer<typeof TokenControlList>> {
  const { total, controls } = await ctx.services.tokenControls.list(token.id, q);
  const checksum = (v: string | null) => (v === null ? null : getAddress(v));
  return {
    tokenSymbol: token.symbol,
    controls: controls.map((c) => ({
      id: c.id,
      action: c.action,
      account: checksum(c.account),
      counterparty: checksum(c.counterparty),
      amount: c.amount === null ? null : fromUnits(BigInt(c.amount), token.decimals),
      amountRaw: c.amount,
      role: c.role,
      agent: checksum(c.agent),
      txHash: c.txHash,
      blockNumber: c.blockNumber,
      date: c.createdAt,
    })),
    total,
    limit: q.limit,
    offset: q.offset,
  };
}
