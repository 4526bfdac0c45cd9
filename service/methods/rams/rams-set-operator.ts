import { ZeroAddress } from "ethers";
import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { badRequest } from "../../errors";
import { address, booleanish } from "../../wire/fields";
import { defineMethod } from "../types";
import { authInfo, authorize, requireRelayedSignature, ramsMethod, ramsOutcome } from "./common";
import { ramsCommonFields, signedFields } from "./fields";
import { mandateAt, onChain, registryRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";
import { operatorMessage } from "../../domains/rams/messages";

/** Also the query of GET /rams/typed-data/set-operator. */
export const operatorFields = {
  principal: address,
  operator: address.meta({ description: "May revoke and extend the principal's mandates directly once approved" }),
  approved: booleanish.meta({ type: "boolean", description: "true approves, false withdraws the approval" }),
};

const body = z.object({ ...ramsCommonFields, ...operatorFields, ...signedFields });
type Body = z.infer<typeof body>;

/** The principal approves (or withdraws) an operator: directly, or with its SetOperator signature (relayable). */
export const ramsSetOperator = defineMethod({
  ...ramsMethod,
  name: "ramsSetOperator",
  summary:
    "RAMS: approve or withdraw an operator of the principal (direct by the principal, or its EIP-712 signature; relayable with a signature)",
  body,
  relayable: true,
  facadePath: "/x402/rams/set-operator",
  async plan(ctx, b: Body) {
    requireRelayedSignature(ctx, b, "SetOperator");
    const { chain } = ctx;
    if (b.operator === ZeroAddress) throw badRequest("operator must not be the zero address", { field: "operator" });
    const registry = registryRef(chain, b.agentMandateAddress);
    const auth = await authorize(ctx, {
      registry,
      principal: b.principal,
      signature: b.signature,
      deadline: b.deadline,
      primaryType: "SetOperator",
      message: operatorMessage(b.principal, b.operator, b.approved),
      operatorMayAct: false,
      action: "set its operators",
    });
    const wasApproved = await onChain(chain, registry, "isOperator", () =>
      mandateAt(chain, registry).isOperator(b.principal, b.operator),
    );
    const data = agentMandateInterface.encodeFunctionData("setOperator", [
      b.principal,
      b.operator,
      b.approved,
      auth.deadline,
      auth.signature,
    ]);
    await simulate(chain, { from: auth.sender, to: registry.address, data }, "setOperator");
    return {
      signer: auth.sender,
      calls: [
        {
          to: registry.address,
          data,
          description: `${b.approved ? "approve" : "withdraw"} ${b.operator} as operator of ${b.principal}`,
        },
      ],
      info: {
        ...authInfo(registry.address, auth),
        agentMandateAddress: registry.address,
        principal: b.principal,
        operator: b.operator,
        approved: b.approved,
        wasApproved,
      },
    };
  },
  onConfirmed: ramsOutcome,
});
