import { getAddress } from "ethers";
import { z } from "zod";
import { agentMandateInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, integerString } from "../../wire/fields";
import { defineMethod } from "../types";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { ramsCommonFields } from "./fields";
import { mandateAt, onChain, registryRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

/** How far one invalidateNonces call may move a nonce (the registry's MAX_NONCE_JUMP). */
export const MAX_NONCE_JUMP = 2n ** 64n - 1n;

const body = z.object({
  ...ramsCommonFields,
  principal: address.meta({ description: "The principal whose unused signatures are voided; it signs the call" }),
  newNonce: integerString.optional().meta({
    type: "string",
    description:
      "The principal's next EIP-712 nonce: every signature carrying a lower one is void. Default: the current nonce + 1 " +
      "(voids every signature made for the current nonce, which is what GET /rams/typed-data hands out); send a " +
      "higher one to void signatures made ahead for later nonces. At most 2^64-1 above the current nonce",
    example: "1",
  }),
  agentMandateAddress: address.optional().meta({ description: "Overrides the chain's AgentMandate registry" }),
});
type Body = z.infer<typeof body>;

/**
 * The principal voids the RAMS signatures it gave and has not seen used (grant, revoke, extend, set-operator), by
 * moving its nonce forward on the registry (IAgentMandateNonces.invalidateNonces). Only the principal itself may send
 * it, so it is always client-signed by the principal.
 */
export const ramsInvalidateNonces = defineMethod({
  ...ramsMethod,
  name: "ramsInvalidateNonces",
  summary:
    "RAMS: the principal voids its unused EIP-712 signatures by moving its nonce forward (the principal only; always client-signed)",
  body,
  facadePath: "/x402/rams/invalidate-nonces",
  async plan(ctx, b: Body) {
    const signer = getAddress(requireClientSigned(ctx, "ramsInvalidateNonces"));
    const principal = getAddress(b.principal);
    if (signer !== principal) {
      throw preflightError(
        `signerAddress ${signer} is not the principal ${principal}: only the principal may void its own signatures`,
        { field: "signerAddress", principal },
      );
    }
    const { chain } = ctx;
    const registry = registryRef(chain, b.agentMandateAddress);
    const current = await onChain(chain, registry, "nonces", () => mandateAt(chain, registry).nonces(principal));
    const newNonce = b.newNonce === undefined ? current + 1n : BigInt(b.newNonce);
    if (newNonce <= current || newNonce - current > MAX_NONCE_JUMP) {
      throw badRequest(
        `newNonce ${newNonce} must be above the principal's current nonce ${current} and at most 2^64-1 above it`,
        { field: "newNonce", currentNonce: current.toString() },
      );
    }
    const data = agentMandateInterface.encodeFunctionData("invalidateNonces", [newNonce]);
    await simulate(chain, { from: signer, to: registry.address, data }, "invalidateNonces");
    return {
      signer,
      calls: [
        {
          to: registry.address,
          data,
          description: `void ${principal}'s unused RAMS signatures: nonce ${current} → ${newNonce}`,
        },
      ],
      info: {
        contract: registry.address,
        agentMandateAddress: registry.address,
        mode: "direct",
        principal,
        eip712Nonce: current.toString(),
        newNonce: newNonce.toString(),
      },
    };
  },
  onConfirmed: ramsOutcome,
});
