import { ZeroAddress } from "ethers";
import { z } from "zod";
import { IERC20Metadata__factory } from "../../../typechain-types/factories/@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata__factory";
import { preflightError } from "../../errors";
import { address, decimalAmount, email } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodContext } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { fromUnits, toUnits } from "../../model/units";
import { erc20, resolveAsset, securityToken, type Asset } from "../../domains/tokenization/tokens";
import {
  restrictionError,
  transferRestriction,
  type TransferRestriction,
} from "../../domains/tokenization/restrictions";
import { aliasOf } from "../../wire/field-aliases";

const erc20Interface = IERC20Metadata__factory.createInterface();

/**
 * Balance and, for security tokens, every rule the token enforces (ERC-1404 detectTransferRestriction: pause, whitelist
 * and freezes of both sides, frozen tokens): the errors a user can act on, before signing. A refusal carries the token's
 * restriction code, name and message in details.
 */
async function checkTransfer(
  ctx: MethodContext,
  asset: Asset,
  from: string,
  to: string,
  units: bigint,
  amount: string,
  fields = { from: "from", to: "to" },
) {
  const balance = await erc20(ctx, asset.address).balanceOf(from);
  if (balance < units) {
    throw preflightError(
      `Insufficient ${asset.symbol} balance: ${from} holds ${fromUnits(balance, asset.decimals)}, needs ${amount}`,
      {
        field: "amount",
        balance: balance.toString(),
        ...(asset.token ? { restrictionCode: 6, restriction: "INSUFFICIENT_BALANCE" } : {}),
      },
    );
  }
  if (!asset.token) return;
  const r = await transferRestriction(ctx, asset.token, from, to, units);
  if (r.code === 0) return;
  const messages: Partial<Record<TransferRestriction["name"], string>> = {
    SENDER_NOT_WHITELISTED: `${from} is not whitelisted for ${asset.symbol} and cannot send it`,
    RECEIVER_NOT_WHITELISTED: `${to} is not whitelisted for ${asset.symbol} and cannot receive it`,
    SENDER_FROZEN: `${from} is frozen on ${asset.symbol} and cannot send it`,
    RECEIVER_FROZEN: `${to} is frozen on ${asset.symbol} and cannot receive it`,
    INSUFFICIENT_UNFROZEN_BALANCE: `${from} cannot move ${amount} ${asset.symbol}: part of its balance is frozen`,
    PAUSED: `${asset.symbol} is paused: holders cannot transfer or burn it`,
  };
  throw restrictionError(asset.token, r, fields, messages[r.name]);
}

const transferToBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  to: address.optional(),
  recipientAddress: aliasOf(address.optional(), "to"),
  amount: decimalAmount,
});
type TransferToBody = z.infer<typeof transferToBody>;

/** Transfers from the signer's own balance. */
export const transferTo = defineMethod({
  name: "transferTo",
  area: "tokenization",
  summary: "Transfer tokens from the signer to a whitelisted wallet",
  body: transferToBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: TransferToBody) => b.signerAddress,
  async plan(ctx, b) {
    const to = b.to ?? b.recipientAddress;
    if (!to) throw preflightError("to is required", { field: "to" });
    const asset = await resolveAsset(ctx, b.tokenSymbol);
    const units = toUnits(b.amount, asset.decimals, "amount");
    await checkTransfer(ctx, asset, b.signerAddress, to, units, b.amount, {
      from: "signerAddress",
      to: b.to ? "to" : "recipientAddress",
    });
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: asset.address,
          data: erc20Interface.encodeFunctionData("transfer", [to, units]),
          description: `transfer ${b.amount} ${asset.symbol} to ${to}`,
        },
      ],
      info: { tokenSymbol: asset.symbol, tokenizerEmail: asset.token?.tokenizerEmail },
      record: { tokenSymbol: asset.token?.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

const transferFromBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  from: address,
  to: address,
  amount: decimalAmount,
});
type TransferFromBody = z.infer<typeof transferFromBody>;

/** Transfers from an owner that approved the signer. */
export const transferFrom = defineMethod({
  name: "transferFrom",
  area: "tokenization",
  summary: "Transfer tokens from an owner that approved the signer",
  body: transferFromBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: TransferFromBody) => b.signerAddress,
  async plan(ctx, b) {
    const asset = await resolveAsset(ctx, b.tokenSymbol);
    const units = toUnits(b.amount, asset.decimals, "amount");
    const allowance = await erc20(ctx, asset.address).allowance(b.from, b.signerAddress);
    if (allowance < units) {
      throw preflightError(
        `Insufficient allowance: ${b.from} approved ${b.signerAddress} for ${fromUnits(allowance, asset.decimals)} ${asset.symbol}, needs ${b.amount}`,
        {
          field: "amount",
          allowance: allowance.toString(),
        },
      );
    }
    await checkTransfer(ctx, asset, b.from, b.to, units, b.amount);
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: asset.address,
          data: erc20Interface.encodeFunctionData("transferFrom", [b.from, b.to, units]),
          description: `transfer ${b.amount} ${asset.symbol} from ${b.from} to ${b.to}`,
        },
      ],
      info: { tokenSymbol: asset.symbol, tokenizerEmail: asset.token?.tokenizerEmail },
      record: { tokenSymbol: asset.token?.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

/** Allowance writes from zero cost ~20k more gas than the estimate taken while the old allowance still stands. */
const APPROVE_GAS_CEILING = 80_000n;

const approveBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  spenderAddress: address.optional(),
  spender: aliasOf(address.optional(), "spenderAddress"),
  amount: decimalAmount,
  investorAddress: address.optional().meta({ description: "Owner; must equal signerAddress when given" }),
  tokenizerEmail: email.optional(),
  tokenizerAddress: address.optional(),
});
type ApproveBody = z.infer<typeof approveBody>;

/**
 * Approves a spender. An existing different allowance is reset to zero first (two transactions), which tokens such
 * as USDT require and which closes the allowance front-running window.
 */
export const approve = defineMethod({
  name: "approve",
  area: "tokenization",
  summary: "Approve a spender (for dividends: the security token's address on the payment token)",
  body: approveBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: ApproveBody) => b.signerAddress,
  async plan(ctx, b) {
    const spender = b.spenderAddress ?? b.spender;
    if (!spender) throw preflightError("Missing spender address parameter", { field: "spenderAddress" });
    if (b.investorAddress && b.investorAddress !== b.signerAddress) {
      throw preflightError(
        "investorAddress (the owner) must be the signerAddress: an allowance is granted by its owner",
        { field: "investorAddress" },
      );
    }
    const asset = await resolveAsset(ctx, b.tokenSymbol);
    const units = toUnits(b.amount, asset.decimals, "amount", { allowZero: true });
    const current = await erc20(ctx, asset.address).allowance(b.signerAddress, spender);
    const calls = [];
    if (current > 0n && current !== units && units > 0n) {
      calls.push({
        to: asset.address,
        data: erc20Interface.encodeFunctionData("approve", [spender, 0n]),
        description: `reset the ${asset.symbol} allowance of ${spender} to 0`,
      });
    }
    calls.push({
      to: asset.address,
      data: erc20Interface.encodeFunctionData("approve", [spender, units]),
      description: `approve ${spender} for ${b.amount} ${asset.symbol}`,
      gasCeiling: APPROVE_GAS_CEILING,
    });
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenSymbol: asset.symbol,
        tokenizerEmail: asset.token?.tokenizerEmail ?? b.tokenizerEmail,
        spenderAddress: spender,
      },
      record: { tokenSymbol: asset.token?.symbol },
    };
  },
});

const burnBody = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  amount: decimalAmount,
  investorEmail: email.optional(),
});
type BurnBody = z.infer<typeof burnBody>;

/** Burns from the signer's own balance (any holder). */
export const burnToken = defineMethod({
  name: "burnToken",
  area: "tokenization",
  summary: "Burn tokens from the signer's own balance",
  body: burnBody,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: BurnBody) => b.signerAddress,
  async plan(ctx, b) {
    const asset = await resolveAsset(ctx, b.tokenSymbol);
    if (!asset.token)
      throw preflightError(`${asset.symbol} cannot be burned through this API`, { field: "tokenSymbol" });
    const units = toUnits(b.amount, asset.decimals, "amount");
    const balance = await erc20(ctx, asset.address).balanceOf(b.signerAddress);
    if (balance < units) {
      throw preflightError(
        `Insufficient ${asset.symbol} balance to burn: ${b.signerAddress} holds ${fromUnits(balance, asset.decimals)}`,
        {
          field: "amount",
          restrictionCode: 6,
          restriction: "INSUFFICIENT_BALANCE",
        },
      );
    }
    // A burn is a holder's move like a transfer (ERC-7943): not while paused, frozen, or off the whitelist.
    const r = await transferRestriction(ctx, asset.token, b.signerAddress, ZeroAddress, units);
    if (r.code !== 0)
      throw restrictionError(
        asset.token,
        r,
        { from: "signerAddress", to: "signerAddress" },
        `${b.signerAddress} cannot burn ${b.amount} ${asset.symbol}: ${r.message}`,
      );
    const token = securityToken(ctx, asset.token);
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: asset.address,
          data: token.interface.encodeFunctionData("burn", [units]),
          description: `burn ${b.amount} ${asset.symbol}`,
        },
      ],
      info: { tokenSymbol: asset.symbol, tokenizerEmail: asset.token.tokenizerEmail, investorEmail: b.investorEmail },
      record: { tokenSymbol: asset.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});
