import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, decimalAmount } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, toUnits } from "../../model/units";
import { securityToken } from "../../domains/tokenization/tokens";
import { tokenForRoleHolder } from "../../domains/tokenization/roles";
import { receiverRestriction, restrictionError } from "../../domains/tokenization/restrictions";

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  from: address.meta({
    description: "The holder the tokens are taken from (its consent, whitelist status and freezes are not needed)",
  }),
  to: address.meta({ description: "The receiver: must be whitelisted and not frozen" }),
  amount: decimalAmount,
  reason: z
    .string()
    .trim()
    .max(500)
    .optional()
    .meta({ description: "Why (a court order's reference, …): kept with the batch" }),
});
type Body = z.infer<typeof body>;

/**
 * ERC-7943 forcedTransfer: moves a holder's tokens without its consent, also while paused and from a frozen address,
 * taking frozen tokens last (the frozen amount drops by what is taken beyond the unfrozen part). ENFORCER_ROLE.
 */
export const forcedTransfer = defineMethod({
  name: "forcedTransfer",
  area: "tokenization",
  summary: "Force a transfer from a holder (court order, enforcement); tokenizer or ENFORCER_ROLE",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.forced_transfer", "token.frozen"],
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "ENFORCER_ROLE");
    if (b.from === b.to) throw badRequest("to must differ from from", { field: "to" });
    const units = toUnits(b.amount, token.decimals, "amount");
    const contract = securityToken(ctx, token);
    const [balance, frozen, receiver] = await Promise.all([
      contract.balanceOf(b.from),
      contract.getFrozenTokens(b.from),
      receiverRestriction(ctx, token, b.to),
    ]);
    const shown = (v: bigint) => fromUnits(v, token.decimals);
    if (balance < units) {
      throw preflightError(
        `Insufficient ${token.symbol} balance: ${b.from} holds ${shown(balance)}, the transfer takes ${b.amount}`,
        { field: "amount", balance: shown(balance) },
      );
    }
    if (receiver.code !== 0)
      throw restrictionError(
        token,
        receiver,
        { from: "from", to: "to" },
        `${b.to} cannot receive ${token.symbol}: ${receiver.message}`,
      );
    const unfrozen = balance > frozen ? balance - frozen : 0n;
    const frozenTaken = units > unfrozen ? units - unfrozen : 0n;
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("forcedTransfer", [b.from, b.to, units]),
          description: `force a transfer of ${b.amount} ${token.symbol} from ${b.from} to ${b.to}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        frozenTaken: shown(frozenTaken),
        frozenAfter: shown(frozen - frozenTaken),
      },
      record: { tokenSymbol: token.symbol, reason: b.reason ?? null },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});
