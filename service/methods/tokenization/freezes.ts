import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address, booleanish, decimalAmount } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, MAX_UINT256, toUnits } from "../../model/units";
import { securityToken } from "../../domains/tokenization/tokens";
import { tokenForRoleHolder } from "../../domains/tokenization/roles";

const holderFields = {
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  investorAddress: address.meta({ description: "The holder whose tokens or address are frozen" }),
};

const freezeBody = z.object({
  ...holderFields,
  amount: decimalAmount.meta({
    description: "Token amount (human units): added to the frozen amount, or the new frozen amount with mode set",
  }),
  mode: z.enum(["add", "set"]).default("add").meta({
    description: "add (default): freezePartialTokens; set: ERC-7943 setFrozenTokens, overwriting (0 unfreezes all)",
  }),
});
type FreezeBody = z.infer<typeof freezeBody>;

/** Freezes part of a holder's tokens (it may exceed the balance: what arrives later is withheld). FREEZER_ROLE. */
export const freezeTokens = defineMethod({
  name: "freezeTokens",
  area: "tokenization",
  summary: "Freeze an amount of a holder's tokens (ERC-7943); tokenizer or FREEZER_ROLE",
  body: freezeBody,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.frozen"],
  signerOf: (b: FreezeBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "FREEZER_ROLE");
    const units = toUnits(b.amount, token.decimals, "amount", { allowZero: b.mode === "set" });
    const contract = securityToken(ctx, token);
    const [frozen, balance] = await Promise.all([
      contract.getFrozenTokens(b.investorAddress),
      contract.balanceOf(b.investorAddress),
    ]);
    const after = b.mode === "set" ? units : frozen + units;
    if (after > MAX_UINT256)
      throw preflightError(`amount would take the frozen amount of ${b.investorAddress} above uint256`, {
        field: "amount",
      });
    const data =
      b.mode === "set"
        ? securityTokenInterface.encodeFunctionData("setFrozenTokens", [b.investorAddress, units])
        : securityTokenInterface.encodeFunctionData("freezePartialTokens", [b.investorAddress, units]);
    const shown = (v: bigint) => fromUnits(v, token.decimals);
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data,
          description: `freeze ${shown(after)} ${token.symbol} of ${b.investorAddress} (was ${shown(frozen)})`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        frozenBefore: shown(frozen),
        frozenAfter: shown(after),
        tokenBalance: shown(balance),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

const unfreezeBody = z.object({
  ...holderFields,
  amount: decimalAmount.meta({ description: "Token amount (human units) taken off the frozen amount" }),
});
type UnfreezeBody = z.infer<typeof unfreezeBody>;

/** Lowers a holder's frozen amount. FREEZER_ROLE. */
export const unfreezeTokens = defineMethod({
  name: "unfreezeTokens",
  area: "tokenization",
  summary: "Unfreeze an amount of a holder's frozen tokens; tokenizer or FREEZER_ROLE",
  body: unfreezeBody,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.frozen"],
  signerOf: (b: UnfreezeBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "FREEZER_ROLE");
    const units = toUnits(b.amount, token.decimals, "amount");
    const frozen = await securityToken(ctx, token).getFrozenTokens(b.investorAddress);
    const shown = (v: bigint) => fromUnits(v, token.decimals);
    if (units > frozen) {
      throw preflightError(
        `${b.investorAddress} has only ${shown(frozen)} ${token.symbol} frozen, less than ${b.amount}`,
        { field: "amount", frozenAmount: shown(frozen) },
      );
    }
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("unfreezePartialTokens", [b.investorAddress, units]),
          description: `unfreeze ${b.amount} ${token.symbol} of ${b.investorAddress}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        frozenBefore: shown(frozen),
        frozenAfter: shown(frozen - units),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

const addressBody = z.object({
  ...holderFields,
  freeze: booleanish.default(true).meta({ description: "true (default) freezes the address, false unfreezes it" }),
});
type AddressBody = z.infer<typeof addressBody>;

/** Freezes or unfreezes a whole address: it can neither send nor receive (ERC-3643 setAddressFrozen). FREEZER_ROLE. */
export const freezeAddress = defineMethod({
  name: "freezeAddress",
  area: "tokenization",
  summary: "Freeze (or unfreeze) a whole address: it neither sends nor receives; tokenizer or FREEZER_ROLE",
  body: addressBody,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.address_frozen"],
  signerOf: (b: AddressBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "FREEZER_ROLE");
    const frozen = await securityToken(ctx, token).isFrozen(b.investorAddress);
    if (frozen === b.freeze) {
      throw preflightError(`${b.investorAddress} is already ${frozen ? "frozen" : "not frozen"} on ${token.symbol}`, {
        field: "freeze",
        addressFrozen: frozen,
      });
    }
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("setAddressFrozen", [b.investorAddress, b.freeze]),
          description: `${b.freeze ? "freeze" : "unfreeze"} the address ${b.investorAddress} on ${token.symbol}`,
        },
      ],
      info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, addressFrozen: b.freeze },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});
