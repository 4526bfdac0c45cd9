import { z } from "zod";
import { securityTokenInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { signerFields } from "../common";
import { recordEventsOfRecordedToken } from "../token-events";
import { defineMethod, type MethodDefinition } from "../types";
import { ACCESS } from "../../auth/access-rules";
import { securityToken } from "../../domains/tokenization/tokens";
import { tokenForRoleHolder } from "../../domains/tokenization/roles";

const body = z.object({ ...signerFields, tokenSymbol: z.string().trim().min(1) });
type Body = z.infer<typeof body>;

/** pauseToken / unpauseToken: one definition, the direction apart. PAUSER_ROLE. */
function pauseMethod(pause: boolean): MethodDefinition<Body> {
  const verb = pause ? "pause" : "unpause";
  return defineMethod({
    name: pause ? "pauseToken" : "unpauseToken",
    area: "tokenization",
    summary: pause
      ? "Pause a token: holders can neither transfer nor burn (issuance, forced transfers and recoveries go on); tokenizer or PAUSER_ROLE"
      : "Unpause a token; tokenizer or PAUSER_ROLE",
    body,
    access: ACCESS.keyMethod,
    metered: true,
    events: ["token.paused"],
    signerOf: (b: Body) => b.signerAddress,
    async plan(ctx, b) {
      const token = await tokenForRoleHolder(ctx, b.tokenSymbol, b.signerAddress, "PAUSER_ROLE");
      if ((await securityToken(ctx, token).paused()) === pause) {
        throw preflightError(`${token.symbol} is already ${pause ? "paused" : "running (not paused)"}`, {
          field: "tokenSymbol",
          paused: pause,
        });
      }
      return {
        signer: b.signerAddress,
        calls: [
          {
            to: token.tokenAddress,
            data: pause
              ? securityTokenInterface.encodeFunctionData("pause")
              : securityTokenInterface.encodeFunctionData("unpause"),
            description: `${verb} ${token.symbol}`,
          },
        ],
        info: { tokenizerEmail: token.tokenizerEmail, tokenSymbol: token.symbol, paused: pause },
        record: { tokenSymbol: token.symbol },
      };
    },
    onConfirmed: recordEventsOfRecordedToken(),
  });
}

export const pauseToken = pauseMethod(true);
export const unpauseToken = pauseMethod(false);
