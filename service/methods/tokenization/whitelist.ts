import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { address, booleanish, email } from "../../http/fields";
import { authorizedToken, requireTokenizer, signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod } from "../types";
import { investorHints } from "./mintToken";

const entry = z.looseObject({
  investorAddress: address,
  investorEmail: email.optional(),
  whitelistStatus: booleanish.default(true).meta({ description: "true whitelists, false blacklists" }),
});

const body = z.looseObject({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  userToWhitelist: z.array(entry).min(1),
  newInvestor: z
    .looseObject({
      name: z.string().optional(),
      surname: z.string().optional(),
      middleName: z.string().optional(),
      secondSurname: z.string().optional(),
      type: z.string().default("INVESTOR_PERSON"),
    })
    .optional(),
});
type Body = z.infer<typeof body>;

/** Whitelists or blacklists investor wallets in one transaction. Tokenizer only. */
export const whitelist = defineMethod({
  name: "whitelist",
  area: "tokenization",
  summary: "Whitelist or blacklist investor wallets",
  body,
  metered: true,
  signerOf: (b: Body) => b.signerAddress,
  async plan(ctx, b) {
    const token = await authorizedToken(ctx, b.tokenSymbol);
    requireTokenizer(token, b.signerAddress, "whitelist investors");
    const accounts = b.userToWhitelist.map((u) => u.investorAddress);
    const statuses = b.userToWhitelist.map((u) => u.whitelistStatus);
    const data =
      accounts.length === 1
        ? securityTokenInterface.encodeFunctionData("setWhitelisted", [accounts[0], statuses[0]])
        : securityTokenInterface.encodeFunctionData("setWhitelistedBatch", [accounts, statuses]);
    const single = b.userToWhitelist.length === 1 ? b.userToWhitelist[0] : undefined;
    return {
      signer: b.signerAddress,
      calls: [{ to: token.tokenAddress, data, description: `update the whitelist of ${token.symbol} for ${accounts.length} wallet(s)` }],
      info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, investorEmail: single?.investorEmail },
      record: {
        tokenSymbol: token.symbol,
        investors: b.userToWhitelist.map((u) => ({
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
