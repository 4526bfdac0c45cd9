import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { address, booleanish, email } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { investorHints } from "./mint-token";
import { ACCESS } from "../../auth/access-rules";
import { badRequest } from "../../errors";
import { knownWallet } from "../../onboarding/wallets";
import { tokenForRoleHolder } from "../../domains/tokenization/roles";
import { bindingFor } from "../../domains/tokenization/investors";

const entry = z.object({
  investorAddress: address
    .optional()
    .meta({ description: "Omit to use the wallet known for investorEmail (KYC-approved when KYC was asked)" }),
  investorEmail: email.optional(),
  whitelistStatus: booleanish.default(true).meta({ description: "true whitelists, false blacklists" }),
});

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  userToWhitelist: z.array(entry).min(1),
  newInvestor: z
    .object({
      name: z.string().optional(),
      surname: z.string().optional(),
      middleName: z.string().optional(),
      secondSurname: z.string().optional(),
      type: z.string().default("INVESTOR_PERSON"),
    })
    .optional(),
});
type Body = z.infer<typeof body>;

/**
 * Whitelists or blacklists investor wallets. Wallets added with an e-mail are bound to that investor on chain
 * (service/domains/tokenization/investors.ts), which a later recovery needs. Tokenizer or WHITELISTER_ROLE.
 */
export const whitelist = defineMethod({
  name: "whitelist",
  area: "tokenization",
  summary:
    "Whitelist or blacklist investor wallets (binding each added wallet to its investor); tokenizer or WHITELISTER_ROLE",
  body,
  access: ACCESS.keyMethod,
  metered: true,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "WHITELISTER_ROLE");
    const entries = [];
    for (const [i, u] of b.userToWhitelist.entries()) {
      let investorAddress = u.investorAddress;
      if (!investorAddress) {
        // E-mail only: the wallet known for the investor; adding it needs KYC clearance, removing it does not.
        if (!u.investorEmail)
          throw badRequest(`userToWhitelist.${i}.investorAddress is required`, {
            field: `userToWhitelist.${i}.investorAddress`,
          });
        const purpose = u.whitelistStatus ? "whitelist" : "unwhitelist";
        investorAddress = (
          await knownWallet(ctx, {
            email: u.investorEmail,
            field: `userToWhitelist.${i}.investorEmail`,
            purpose,
            token,
          })
        ).address;
      }
      entries.push({ ...u, investorAddress });
    }
    const added = entries.filter((u) => u.whitelistStatus);
    const removed = entries.filter((u) => !u.whitelistStatus).map((u) => u.investorAddress);
    const calls = [];
    if (added.length) {
      const ids = [];
      for (const u of added) ids.push(await bindingFor(ctx, token, u.investorAddress, u.investorEmail));
      calls.push({
        to: token.tokenAddress,
        data: securityTokenInterface.encodeFunctionData("whitelistInvestors", [
          added.map((u) => u.investorAddress),
          ids,
        ]),
        description: `whitelist ${added.length} wallet(s) on ${token.symbol}, each bound to its investor`,
      });
    }
    if (removed.length) {
      calls.push({
        to: token.tokenAddress,
        data:
          removed.length === 1
            ? securityTokenInterface.encodeFunctionData("setWhitelisted", [removed[0], false])
            : securityTokenInterface.encodeFunctionData("setWhitelistedBatch", [removed, removed.map(() => false)]),
        description: `remove ${removed.length} wallet(s) from the whitelist of ${token.symbol}`,
      });
    }
    const single = entries.length === 1 ? entries[0] : undefined;
    return {
      signer: b.signerAddress,
      calls,
      info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, investorEmail: single?.investorEmail },
      record: {
        tokenSymbol: token.symbol,
        investors: entries.map((u) => ({
          address: u.investorAddress,
          email: u.investorEmail ?? null,
          firstName: single ? (b.newInvestor?.name ?? null) : null,
          lastName: single ? (b.newInvestor?.surname ?? null) : null,
          investorType: single ? (b.newInvestor?.type ?? null) : null,
        })),
      },
    };
  },
  onConfirmed: recordEventsOfRecordedToken(investorHints),
});
