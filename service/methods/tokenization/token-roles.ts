import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodDefinition } from "../types";
import { ACCESS } from "../../auth/access-rules";
import {
  holdsTokenRole,
  parseTokenRole,
  TOKEN_ROLE_NAMES,
  TOKEN_ROLES,
  tokenForRoleHolder,
  type TokenRole,
} from "../../domains/tokenization/roles";

const role = z
  .string({ error: (i) => (i.input === undefined ? "is required" : "must be a role name") })
  .transform((v, ctx) => {
    const parsed = parseTokenRole(v);
    if (!parsed)
      ctx.addIssue({
        code: "custom",
        message: `must be one of ${TOKEN_ROLE_NAMES.join(", ")} (or minter, whitelister, freezer, enforcer, recovery, pauser, admin)`,
      });
    return parsed as TokenRole;
  })
  .meta({
    type: "string",
    enum: [...TOKEN_ROLE_NAMES],
    description:
      "MINTER_ROLE, WHITELISTER_ROLE, FREEZER_ROLE, ENFORCER_ROLE, RECOVERY_ROLE or PAUSER_ROLE (case-insensitive; the _ROLE suffix may be left out). DEFAULT_ADMIN_ROLE is the tokenizer's alone: it moves with transferTokenizer and acceptTokenizer",
  });

const body = z.object({
  ...signerFields,
  tokenSymbol: z.string().trim().min(1),
  role,
  account: address.meta({ description: "The agent's wallet" }),
});
type Body = z.infer<typeof body>;

/** grantTokenRole / revokeTokenRole (OpenZeppelin AccessControl). The tokenizer (the token's only DEFAULT_ADMIN_ROLE). */
function roleMethod(grant: boolean): MethodDefinition<Body> {
  return defineMethod({
    name: grant ? "grantTokenRole" : "revokeTokenRole",
    area: "tokenization",
    summary: grant
      ? "Grant an agent a role on a token (minter, whitelister, freezer, enforcer, recovery, pauser); tokenizer"
      : "Revoke an agent's role on a token; tokenizer",
    body,
    access: ACCESS.keyMethod,
    metered: true,
    events: ["token.role_changed"],
    signerOf: (b: Body) => b.signerAddress,
    async plan(ctx, b) {
      if (b.role === "DEFAULT_ADMIN_ROLE") {
        throw badRequest(
          "DEFAULT_ADMIN_ROLE is the tokenizer's alone and is not granted or revoked: hand it over with transferTokenizer, then acceptTokenizer",
          { field: "role" },
        );
      }
      const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "DEFAULT_ADMIN_ROLE");
      if (b.account.toLowerCase() === token.tokenizerAddress.toLowerCase()) {
        throw badRequest(`account is ${token.symbol}'s tokenizer, which holds every role and cannot lose them`, {
          field: "account",
        });
      }
      const holds = await holdsTokenRole(ctx, token, b.role, b.account);
      if (holds === grant)
        throw preflightError(`${b.account} ${grant ? "already holds" : "does not hold"} ${b.role} on ${token.symbol}`, {
          field: "account",
          role: b.role,
        });
      return {
        signer: b.signerAddress,
        calls: [
          {
            to: token.tokenAddress,
            data: grant
              ? securityTokenInterface.encodeFunctionData("grantRole", [TOKEN_ROLES[b.role].hash, b.account])
              : securityTokenInterface.encodeFunctionData("revokeRole", [TOKEN_ROLES[b.role].hash, b.account]),
            description: `${grant ? "grant" : "revoke"} ${b.role} ${grant ? "to" : "from"} ${b.account} on ${token.symbol}`,
          },
        ],
        info: {
          tokenizerEmail: token.tokenizerEmail,
          tokenSymbol: token.symbol,
          role: b.role,
          account: b.account,
          allows: TOKEN_ROLES[b.role].allows,
        },
        record: { tokenSymbol: token.symbol },
      };
    },
    onConfirmed: recordEventsOfRecordedToken(),
  });
}

export const grantTokenRole = roleMethod(true);
export const revokeTokenRole = roleMethod(false);
