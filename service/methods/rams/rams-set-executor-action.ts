import { z } from "zod";
import { agentExecutorInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address, booleanish } from "../../wire/fields";
import { defineMethod } from "../types";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { action, amountIndex, ramsCommonFields, selector } from "./fields";
import { actionOf, resolveExecutor, selectorOf } from "../../domains/rams/executors";
import { executorAt, onChain } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

const body = z.object({
  ...ramsCommonFields,
  executorAddress: address.optional().meta({ description: "Default: the executor the operator set up for principal" }),
  principal: address
    .optional()
    .meta({ description: "Picks the principal's default executor when executorAddress is omitted" }),
  selector: selector.optional(),
  action: action
    .optional()
    .meta({ description: "bytes32 action label (a selector left-aligned); alternative to selector" }),
  supported: booleanish.meta({ type: "boolean", description: "false disables the selector" }),
  hasAmount: booleanish.optional().meta({
    type: "boolean",
    description: "Read the amount from the calldata (default false: gated at 0, caps bypassed)",
  }),
  amountIndex: amountIndex
    .optional()
    .meta({ type: "integer", description: "0-based argument position of the uint256 amount (default 0)" }),
});
type Body = z.infer<typeof body>;

/** The executor's owner registers, changes or disables how a selector is gated. Always client-signed. */
export const ramsSetExecutorAction = defineMethod({
  ...ramsMethod,
  name: "ramsSetExecutorAction",
  summary:
    "RAMS: register, change or disable a selector on an AgentExecutor (executor owner only; always client-signed)",
  body,
  facadePath: "/x402/rams/set-executor-action",
  async plan(ctx, b: Body) {
    const signer = requireClientSigned(ctx, "ramsSetExecutorAction");
    const fromAction = b.action === undefined ? undefined : selectorOf(b.action);
    if (b.action !== undefined && !fromAction)
      throw badRequest("action must be a selector's label: 4 bytes followed by 28 zero bytes", { field: "action" });
    if (b.selector && fromAction && b.selector !== fromAction)
      throw badRequest(`selector ${b.selector} and action ${b.action} name different selectors: send one of them`, {
        field: "action",
      });
    const sel = b.selector ?? fromAction;
    if (!sel) throw badRequest("selector (4 bytes) or action (bytes32) is required", { field: "selector" });
    const hasAmount = b.hasAmount ?? false;
    const index = b.amountIndex ?? 0;
    const executor = await resolveExecutor(ctx, { executorAddress: b.executorAddress, principal: b.principal });
    if (executor.owner !== signer) {
      throw preflightError(
        `signerAddress ${signer} is not the owner (${executor.owner}) of executor ${executor.ref.address}; only the owner may set its actions`,
        {
          field: "signerAddress",
          owner: executor.owner,
        },
      );
    }
    const previous = await onChain(ctx.chain, executor.ref, "actions", () =>
      executorAt(ctx.chain, executor.ref).actions(sel),
    );
    const data = agentExecutorInterface.encodeFunctionData("setAction", [sel, b.supported, hasAmount, index]);
    await simulate(ctx.chain, { from: signer, to: executor.ref.address, data }, "setAction");
    return {
      signer,
      calls: [
        {
          to: executor.ref.address,
          data,
          description: `${b.supported ? "register" : "disable"} ${sel} on executor ${executor.ref.address}`,
        },
      ],
      info: {
        contract: executor.ref.address,
        mode: "direct",
        executorAddress: executor.ref.address,
        principal: executor.principal,
        selector: sel,
        action: actionOf(sel),
        supported: b.supported,
        hasAmount,
        amountIndex: index,
        previous: {
          supported: previous.supported,
          hasAmount: previous.hasAmount,
          amountIndex: Number(previous.amountIndex),
        },
        ...(b.supported && !hasAmount
          ? {
              warning: `${sel} is registered without an amount: executions are gated at amount 0, so a value-moving call bypasses the mandate's caps`,
            }
          : {}),
      },
    };
  },
  onConfirmed: ramsOutcome,
});
