import { z } from "zod";
import { ZeroAddress } from "ethers";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { authorizedToken, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";

const tokenOnly = z.object({ ...signerFields, tokenSymbol: z.string().trim().min(1) });
type TokenOnly = z.infer<typeof tokenOnly>;

const transferBody = tokenOnly.extend({
  newTokenizer: address.meta({
    description:
      "The tokenizer's new key (a multisig such as a Safe, or another wallet); it accepts with acceptTokenizer",
  }),
});
type TransferBody = z.infer<typeof transferBody>;

const iso = (seconds: bigint | number) => new Date(Number(seconds) * 1000).toISOString();

/**
 * Step 1 of handing the issuer's key over (OpenZeppelin AccessControlDefaultAdminRules.beginDefaultAdminTransfer):
 * the current tokenizer names its successor. Nothing changes until the successor accepts; the tokenizer can cancel.
 */
export const transferTokenizer = defineMethod({
  name: "transferTokenizer",
  area: "tokenization",
  summary: "Start handing the token over to a new tokenizer key (it accepts with acceptTokenizer); tokenizer",
  body: transferBody,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.tokenizer_changed"],
  signerOf: (b: TransferBody) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "hand the token over");
    if (b.newTokenizer === ZeroAddress)
      throw badRequest("newTokenizer must not be the zero address", { field: "newTokenizer" });
    if (b.newTokenizer === b.signerAddress)
      throw badRequest("newTokenizer is already the tokenizer", { field: "newTokenizer" });
    const delay = await securityToken(ctx, token).defaultAdminDelay();
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("beginDefaultAdminTransfer", [b.newTokenizer]),
          description: `hand ${token.symbol} over to ${b.newTokenizer} (it accepts next)`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        newTokenizer: b.newTokenizer,
        acceptDelaySeconds: Number(delay),
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

/**
 * Step 2: the new key accepts (acceptDefaultAdminTransfer). From then on it is the tokenizer, holding every role, and
 * the old key holds nothing; the service's record of the token follows.
 */
export const acceptTokenizer = defineMethod({
  name: "acceptTokenizer",
  area: "tokenization",
  summary: "Accept the token's tokenizer role handed over with transferTokenizer; the new tokenizer key",
  body: tokenOnly,
  access: ACCESS.keyMethod,
  metered: true,
  events: ["token.tokenizer_changed"],
  signerOf: (b: TokenOnly) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    const contract = securityToken(ctx, token);
    const [pending, latest] = await Promise.all([
      contract.pendingDefaultAdmin(),
      ctx.chain.provider.getBlock("latest"),
    ]);
    if (pending.newAdmin.toLowerCase() !== b.signerAddress.toLowerCase()) {
      throw preflightError(
        pending.newAdmin === ZeroAddress
          ? `no handover of ${token.symbol} is pending: the tokenizer starts it with transferTokenizer`
          : `the handover of ${token.symbol} is to ${pending.newAdmin}, not to signerAddress ${b.signerAddress}`,
        { field: "signerAddress", pendingTokenizer: pending.newAdmin },
      );
    }
    // The token wants a block time after the schedule (with no delay: a block after the one that started it).
    const now = latest?.timestamp ?? Math.floor(Date.now() / 1000);
    if (BigInt(now) <= pending.schedule) {
      throw preflightError(`the handover of ${token.symbol} may be accepted after ${iso(pending.schedule)}`, {
        field: "signerAddress",
        acceptableAfter: iso(pending.schedule),
      });
    }
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("acceptDefaultAdminTransfer"),
          description: `become the tokenizer of ${token.symbol}`,
        },
      ],
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        previousTokenizer: token.tokenizerAddress,
      },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});

/** Cancels a handover not yet accepted (cancelDefaultAdminTransfer). Tokenizer. */
export const cancelTokenizerTransfer = defineMethod({
  name: "cancelTokenizerTransfer",
  area: "tokenization",
  summary: "Cancel a handover of the token not yet accepted; tokenizer",
  body: tokenOnly,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: TokenOnly) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    await requireTokenizer(ctx, token, b.signerAddress, "cancel a handover");
    const pending = await securityToken(ctx, token).pendingDefaultAdmin();
    if (pending.newAdmin === ZeroAddress)
      throw preflightError(`no handover of ${token.symbol} is pending`, { field: "tokenSymbol" });
    return {
      signer: b.signerAddress,
      calls: [
        {
          to: token.tokenAddress,
          data: securityTokenInterface.encodeFunctionData("cancelDefaultAdminTransfer"),
          description: `cancel the handover of ${token.symbol} to ${pending.newAdmin}`,
        },
      ],
      info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, cancelled: pending.newAdmin },
      record: { tokenSymbol: token.symbol },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(),
});
