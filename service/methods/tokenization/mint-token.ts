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
import { securityToken } from "../../domains/tokenization/tokens";
import { tokenForRoleHolder, holdsTokenRole } from "../../domains/tokenization/roles";
import { bindingFor } from "../../domains/tokenization/investors";

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
 * Mints to investors; a recipient not yet whitelisted is whitelisted (and bound to its investor) first, in the same
 * batch. Tokenizer or MINTER_ROLE (and WHITELISTER_ROLE for a recipient to whitelist). An entry with an e-mail and no
 * address mints to the wallet known for that investor (service/onboarding/wallets.ts).
 */
export const mintToken = defineMethod({
  name: "mintToken",
  area: "tokenization",
  summary: "Mint to one or more investors (whitelisting new recipients first); tokenizer or MINTER_ROLE",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "MINTER_ROLE");
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

    if (await contract.paused()) {
      throw preflightError(`${token.symbol} is paused: nothing is minted until it is unpaused`, {
        field: "tokenSymbol",
        restrictionCode: 1,
        restriction: "PAUSED",
      });
    }
    const toWhitelist: string[] = [];
    const emailOf = new Map<string, string | undefined>();
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
      emailOf.set(e.investorAddress, e.investorEmail ?? e.email);
    }

    const calls = [];
    if (toWhitelist.length) {
      if (!(await holdsTokenRole(ctx, token, "WHITELISTER_ROLE", b.signerAddress))) {
        throw preflightError(
          `${toWhitelist.join(", ")} must be whitelisted first, and signerAddress ${b.signerAddress} does not hold WHITELISTER_ROLE on ${token.symbol}`,
          { field: "userToMint", role: "WHITELISTER_ROLE" },
        );
      }
      const ids = [];
      for (const wallet of toWhitelist) ids.push(await bindingFor(ctx, token, wallet, emailOf.get(wallet)));
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("whitelistInvestors", [toWhitelist, ids]),
        description:
          toWhitelist.length === 1 ? `whitelist ${toWhitelist[0]}` : `whitelist ${toWhitelist.length} investors`,
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
