import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, booleanish, decimalAmount, email } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { aliasOf } from "../../wire/field-aliases";
import { ACCESS } from "../../auth/access-rules";
import { knownWallet, type KnownWallet } from "../../onboarding/wallets";
import { fromUnits, toUnits } from "../../model/units";
import { authorizedToken, requireTokenizer, securityToken } from "../../domains/tokenization/tokens";

/** Measured mint to a fresh holder is ~75k gas; the ceiling covers a mint whose whitelist is not mined yet. */
const MINT_GAS_CEILING = 150_000n;

const mintEntry = z.object({
  investorEmail: email.optional(),
  email: aliasOf(email.optional(), "investorEmail"),
  investorAddress: address.optional(),
  amount: decimalAmount.meta({ description: "Whole tokens (human units)" }),
  needWhitelist: booleanish.default(true),
  name: z.string().optional(),
  surname: z.string().optional(),
});

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  userToMint: z.array(mintEntry).min(1),
});
type Body = z.infer<typeof body>;

/**
 * Mints to investors; a recipient not yet whitelisted is whitelisted first, in the same batch. Tokenizer only. An entry
 * with an e-mail and no address mints to the wallet known for that investor (service/onboarding/wallets.ts).
 */
export const mintToken = defineMethod({
  name: "mintToken",
  area: "tokenization",
  summary: "Mint to one or more investors (whitelisting new recipients first)",
  body,
  access: ACCESS.keyMethod,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    requireTokenizer(token, b.signerAddress, "mint");
    const contract = securityToken(ctx, token);
    const entries = [];
    for (const [i, u] of b.userToMint.entries()) {
      const units = toUnits(u.amount, token.decimals, `userToMint.${i}.amount`);
      let investorAddress = u.investorAddress;
      let known: KnownWallet | undefined;
      if (!investorAddress) {
        // E-mail only: the wallet this service knows for the investor, KYC-cleared when KYC was asked.
        const email = u.investorEmail ?? u.email;
        if (!email)
          throw badRequest(`userToMint.${i}.investorAddress or userToMint.${i}.investorEmail is required`, {
            field: `userToMint.${i}.investorAddress`,
          });
        known = await knownWallet(ctx, {
          email,
          field: `userToMint.${i}.${u.investorEmail ? "investorEmail" : "email"}`,
          purpose: "mint",
          token,
        });
        investorAddress = known.address;
      }
      // Only the names the request gives are recorded with the mint: a KYC record's stay sealed in it (reads show them from there).
      entries.push({ ...u, investorAddress, units, name: u.name, surname: u.surname });
    }

    const [supply, reserved, cap] = await Promise.all([
      contract.totalSupply(),
      contract.reservedSupply(),
      contract.supplyCap(),
    ]);
    const total = entries.reduce((s, e) => s + e.units, 0n);
    if (cap > 0n && supply + reserved + total > cap) {
      throw preflightError(
        `Minting ${fromUnits(total, token.decimals)} ${token.symbol} would exceed the supply cap of ${fromUnits(cap, token.decimals)} (supply ${fromUnits(supply, token.decimals)}, reserved for offerings ${fromUnits(reserved, token.decimals)})`,
        { field: "userToMint" },
      );
    }

    const toWhitelist: string[] = [];
    for (const [i, e] of entries.entries()) {
      if (await contract.isWhitelisted(e.investorAddress)) continue;
      if (!e.needWhitelist) {
        throw preflightError(
          `userToMint.${i}.investorAddress ${e.investorAddress} is not whitelisted and needWhitelist is false`,
          {
            field: `userToMint.${i}.needWhitelist`,
          },
        );
      }
      if (!toWhitelist.includes(e.investorAddress)) toWhitelist.push(e.investorAddress);
    }

    const calls = [];
    if (toWhitelist.length === 1) {
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("setWhitelisted", [toWhitelist[0], true]),
        description: `whitelist ${toWhitelist[0]}`,
      });
    } else if (toWhitelist.length > 1) {
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("setWhitelistedBatch", [
          toWhitelist,
          toWhitelist.map(() => true),
        ]),
        description: `whitelist ${toWhitelist.length} investors`,
      });
    }
    for (const e of entries) {
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("mint", [e.investorAddress, e.units]),
        description: `mint ${e.amount} ${token.symbol} to ${e.investorAddress}`,
        gasCeiling: MINT_GAS_CEILING,
      });
    }
    const emails = entries.map((e) => e.investorEmail ?? e.email).filter(Boolean);
    return {
      signer: b.signerAddress,
      calls,
      info: {
        tokenizerEmail: token.tokenizerEmail,
        tokenSymbol: token.symbol,
        investorEmail: emails.length === 0 ? undefined : emails.length === 1 ? emails[0] : emails,
      },
      record: {
        tokenSymbol: token.symbol,
        investors: entries.map((e) => ({
          address: e.investorAddress,
          email: e.investorEmail ?? e.email ?? null,
          firstName: e.name ?? null,
          lastName: e.surname ?? null,
        })),
      },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(investorHints),
});

/** Request facts about the investors named in a batch record, keyed by lower-case address. */
export function investorHints(record: Record<string, unknown>) {
  const list = (record.investors ?? []) as {
    address: string;
    email: string | null;
    firstName?: string | null;
    lastName?: string | null;
    investorType?: string | null;
  }[];
  return new Map(
    list.map((i) => [
      i.address.toLowerCase(),
      { email: i.email, firstName: i.firstName, lastName: i.lastName, investorType: i.investorType },
    ]),
  );
}
