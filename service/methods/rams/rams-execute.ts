import { dataSlice, getAddress, Interface, ZeroAddress } from "ethers";
import { z } from "zod";
import { agentExecutorInterface } from "../../chains/contracts";
import { badRequest, preflightError } from "../../errors";
import { address } from "../../wire/fields";
import { defineMethod } from "../types";
import type { Chain } from "../../chains/registry";
import { ramsMethod, ramsOutcome, requireClientSigned } from "./common";
import { ramsCommonFields, rawAmount } from "./fields";
import { actionOf, resolveExecutor } from "../../domains/rams/executors";
import { evaluateExecution } from "../../domains/rams/mandates";
import { executorAt, onChain, type ContractRef } from "../../domains/rams/on-chain";
import { simulate } from "../../domains/rams/reverts";

const body = z.object({
  ...ramsCommonFields,
  signerAddress: address.optional().meta({ description: "The agent (the executor checks the mandate of msg.sender)" }),
  target: address.optional().meta({ description: "Raw mode: the called contract (the mandate's asset)" }),
  data: z
    .string()
    .trim()
    .regex(/^0x([0-9a-fA-F]{2}){4,}$/, "must be 0x-prefixed calldata of at least 4 bytes")
    .optional()
    .meta({ type: "string", description: "Raw mode: the full calldata of the call" }),
  asset: address.optional().meta({ description: "Helper mode: the ERC-20; builds transferFrom(from, to, amount)" }),
  from: address.optional(),
  to: address.optional(),
  amount: rawAmount.optional().meta({ type: "string", description: "Helper mode: raw base units" }),
  executorAddress: address
    .optional()
    .meta({ description: "Default: the executor the operator set up for the principal" }),
  principal: address
    .optional()
    .meta({ description: "Picks the principal's default executor when executorAddress is omitted" }),
});
type Body = z.infer<typeof body>;

const erc20 = new Interface(["function transferFrom(address from, address to, uint256 amount) returns (bool)"]);

/** The call a body asks for: raw (target + data) or helper (ERC-20 transferFrom from asset/from/to/amount). */
function requestedCall(b: Body): { target: string; data: string; mode: "raw" | "helper" } {
  const raw = b.target !== undefined || b.data !== undefined;
  const helper = b.asset !== undefined || b.from !== undefined || b.to !== undefined || b.amount !== undefined;
  if (raw && helper)
    throw badRequest("send either target + data (raw mode) or asset + from + to + amount (helper mode), not both", {
      field: "target",
    });
  if (!raw && !helper)
    throw badRequest("target + data (raw mode) or asset + from + to + amount (helper mode) is required", {
      field: "target",
    });
  if (raw) {
    if (!b.target) throw badRequest("target is required with data", { field: "target" });
    if (!b.data) throw badRequest("data is required with target", { field: "data" });
    return { target: b.target, data: b.data.toLowerCase(), mode: "raw" };
  }
  for (const field of ["asset", "from", "to", "amount"] as const) {
    if (b[field] === undefined)
      throw badRequest(`${field} is required in helper mode (asset + from + to + amount)`, { field });
  }
  if (b.asset === ZeroAddress) throw badRequest("asset must not be the zero address", { field: "asset" });
  return {
    target: b.asset!,
    data: erc20.encodeFunctionData("transferFrom", [b.from!, b.to!, BigInt(b.amount!)]),
    mode: "helper",
  };
}

/**
 * The agent executes a call through the principal's AgentExecutor. Before the transaction is returned: the selector's
 * ActionSpec (unsupported → 400), the amount read as the executor reads it, every check of canExecute plus the
 * principal's compliance (the first failing one is the 400), then an eth_call of execute from the agent (a refusal
 * of the called contract comes back decoded). Always client-signed by the agent.
 */
export const ramsExecute = defineMethod({
  ...ramsMethod,
  name: "ramsExecute",
  summary:
    "RAMS: an agent executes a call (raw target + data, or an ERC-20 transferFrom) through the principal's AgentExecutor within its mandate (always client-signed)",
  body,
  events: ["mandate.executed"],
  facadePath: "/x402/rams/execute",
  async plan(ctx, b: Body) {
    const agent = getAddress(requireClientSigned(ctx, "ramsExecute"));
    const call = requestedCall(b);
    const executor = await resolveExecutor(ctx, { executorAddress: b.executorAddress, principal: b.principal, agent });
    const selector = call.data.slice(0, 10);
    const spec = await onChain(ctx.chain, executor.ref, "actions", () =>
      executorAt(ctx.chain, executor.ref).actions(selector),
    );
    if (!spec.supported) {
      throw preflightError(
        `selector ${selector} is not supported by executor ${executor.ref.address} (register it with ramsSetExecutorAction)`,
        {
          field: call.mode === "raw" ? "data" : "asset",
          reason: "UnsupportedAction",
          selector,
        },
      );
    }
    let amount = 0n;
    if (spec.hasAmount) {
      const offset = 4 + 32 * Number(spec.amountIndex);
      if ((call.data.length - 2) / 2 < offset + 32) {
        throw badRequest(
          `data is too short: executor ${executor.ref.address} reads the amount of ${selector} at argument ${spec.amountIndex} (InvalidData)`,
          {
            field: "data",
            reason: "InvalidData",
          },
        );
      }
      amount = BigInt(dataSlice(call.data, offset, offset + 32));
    }
    const action = actionOf(selector);
    const execution: ExecutionFacts = {
      registry: executor.registry.address,
      agent,
      principal: executor.principal,
      asset: getAddress(call.target),
      action,
      amount: amount.toString(),
    };
    await requireExecutable(ctx.chain, execution, "ramsExecute refused");
    const data = agentExecutorInterface.encodeFunctionData("execute", [call.target, call.data]);
    await simulate(ctx.chain, { from: agent, to: executor.ref.address, data }, "execute");
    return {
      signer: agent,
      calls: [
        {
          to: executor.ref.address,
          data,
          description: `execute ${selector} on ${call.target} for ${executor.principal} (amount ${amount})`,
        },
      ],
      info: {
        contract: executor.ref.address,
        mode: "direct",
        executorAddress: executor.ref.address,
        agentMandateAddress: executor.registry.address,
        agent,
        principal: executor.principal,
        target: getAddress(call.target),
        selector,
        action,
        amount: amount.toString(),
        hasAmount: spec.hasAmount,
        amountIndex: Number(spec.amountIndex),
        ...(spec.hasAmount
          ? {}
          : { warning: `${selector} is registered without an amount: the mandate's caps are not applied to it` }),
      },
      record: { execution },
    };
  },
  /**
   * The chain may have changed since the prepare (the principal's compliance revoked, the mandate revoked, frozen,
   * expired, its cumulative cap used by another execution): every check is made again before the signed execute is
   * broadcast, with the same reasons as can-execute. The registry checks caps and expiry itself on-chain; compliance
   * only the service checks.
   */
  async checkAtSend(services, batch) {
    const execution = (batch.plan as { execution?: ExecutionFacts }).execution ?? executionFromInfo(batch.info);
    const chain = services.chains.find(batch.chainId);
    if (!execution || !chain) return;
    await requireExecutable(chain, execution, "ramsExecute refused at send");
  },
  onConfirmed: ramsOutcome,
});

/** What an execution is checked against: kept with the batch (plan.execution) for the check at send. */
interface ExecutionFacts {
  registry: string;
  agent: string;
  principal: string;
  asset: string;
  action: string;
  /** Base units, decimal. */
  amount: string;
}

/** A batch prepared before plan.execution was kept: the same facts from its info. */
function executionFromInfo(info: Record<string, unknown>): ExecutionFacts | undefined {
  const { agentMandateAddress, agent, principal, target, action, amount } = info as Record<string, string | undefined>;
  if (!agentMandateAddress || !agent || !principal || !target || !action || amount === undefined) return undefined;
  return { registry: agentMandateAddress, agent, principal, asset: target, action, amount };
}

/** Every check of can-execute plus compliance; the first failing one is the 400, with the checks as can-execute shows them. */
async function requireExecutable(chain: Chain, e: ExecutionFacts, prefix: string): Promise<void> {
  const registry: ContractRef = { address: e.registry, label: "AgentMandate" };
  const evaluation = await evaluateExecution(chain, registry, {
    agent: e.agent,
    principal: e.principal,
    asset: e.asset,
    action: e.action,
    amount: BigInt(e.amount),
  });
  if (evaluation.allowed) return;
  const reason = evaluation.reason!;
  throw preflightError(`${prefix}: ${reason.message}`, {
    reason: reason.code,
    check: reason.check,
    canExecute: evaluation.canExecute,
    checks: evaluation.checks,
  });
}
