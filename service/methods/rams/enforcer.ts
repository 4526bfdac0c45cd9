import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod, type MethodDefinition } from "../types";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { ramsCommonFields } from "./fields";
import { mandateAt, onChain, registryRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

const body = z.object({
  ...ramsCommonFields,
  agent: address,
  agentMandateAddress: address.optional().meta({ description: "Overrides the chain's AgentMandate registry" }),
});
type Body = z.infer<typeof body>;

/**
 * ramsFreezeAgent / ramsUnfreezeAgent (one module each) share this definition: a holder of the registry's
 * ENFORCER_ROLE (never its admin) stops or restarts every mandate of an agent.
 */
export function freezeMethod(name: "ramsFreezeAgent" | "ramsUnfreezeAgent", freeze: boolean): MethodDefinition {
  const fn = freeze ? "freezeAgent" : "unfreezeAgent";
  return defineMethod<Body>({
    ...ramsMethod,
    name,
    summary: `RAMS: ${freeze ? "freeze an agent (all its mandates stop executing)" : "unfreeze an agent"} (ENFORCER_ROLE only; always client-signed)`,
    body,
    facadePath: `/x402/rams/${freeze ? "freeze-agent" : "unfreeze-agent"}`,
    async plan(ctx, b: Body) {
      const signer = requireClientSigned(ctx, name);
      const registry = registryRef(ctx.chain, b.agentMandateAddress);
      const mandate = mandateAt(ctx.chain, registry);
      const [role, frozen] = await Promise.all([
        onChain(ctx.chain, registry, "ENFORCER_ROLE", () => mandate.ENFORCER_ROLE()),
        onChain(ctx.chain, registry, "isFrozen", () => mandate.isFrozen(b.agent)),
      ]);
      if (!(await onChain(ctx.chain, registry, "hasRole", () => mandate.hasRole(role, signer)))) {
        throw preflightError(
          `signerAddress ${signer} does not hold ENFORCER_ROLE on AgentMandate ${registry.address}; only an enforcer may ${freeze ? "freeze" : "unfreeze"} agents`,
          {
            field: "signerAddress",
            role: "ENFORCER_ROLE",
          },
        );
      }
      if (frozen === freeze)
        throw preflightError(`agent ${b.agent} is ${freeze ? "already frozen" : "not frozen"}`, {
          field: "agent",
          frozen,
        });
      const data = freeze
        ? agentMandateInterface.encodeFunctionData("freezeAgent", [b.agent])
        : agentMandateInterface.encodeFunctionData("unfreezeAgent", [b.agent]);
      await simulate(ctx.chain, { from: signer, to: registry.address, data }, fn);
      return {
        signer,
        calls: [{ to: registry.address, data, description: `${freeze ? "freeze" : "unfreeze"} agent ${b.agent}` }],
        info: {
          contract: registry.address,
          mode: "direct",
          agentMandateAddress: registry.address,
          agent: b.agent,
          frozen: freeze,
        },
      };
    },
    onConfirmed: ramsOutcome,
  });
}
