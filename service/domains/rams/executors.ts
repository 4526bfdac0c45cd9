import { getAddress } from "ethers";
import type { Chain } from "../../chains/registry";
import { badRequest } from "../../errors";
import type { Stores } from "../../store/stores";
import { assertOwnContract } from "./contract-code";
import { readMandate } from "./mandates";
import { executorAt, onChain, type ContractRef } from "./on-chain";
// ERC-8226 (RAMS) executors: which AgentExecutor a call uses, and the selectors and action labels it executes.

/** The selector of ERC-20 transferFrom(address,address,uint256): ramsExecute's helper mode and can-execute's default. */
export const TRANSFER_FROM_SELECTOR = "0x23b872dd";

/**
 * The executor a call names: `executorAddress`, else the principal's default executor (the latest one the operator
 * set up with `npm run admin -- rams setup-executor`). Its registry and principal come from the contract itself.
 */
export async function resolveExecutor(
  ctx: { services: Pick<Stores, "ramsExecutors">; chain: Chain },
  input: { executorAddress?: string; principal?: string; agent?: string },
): Promise<{ ref: ContractRef; principal: string; owner: string; registry: ContractRef }> {
  const { chain } = ctx;
  let ref: ContractRef;
  if (input.executorAddress) {
    ref = { address: getAddress(input.executorAddress), label: "AgentExecutor", field: "executorAddress" };
  } else {
    const candidates = input.principal
      ? [await ctx.services.ramsExecutors.defaultFor(chain.chainId, input.principal)].filter((r) => r !== undefined)
      : await candidatesForAgent(ctx, input.agent);
    if (candidates.length !== 1) {
      const why = input.principal
        ? `no executor was set up for principal ${input.principal} on chain ${chain.chainId}`
        : !input.agent
          ? "or principal, for the executor the operator set up for it"
          : candidates.length
            ? `agent ${input.agent} holds mandates of ${candidates.length} principals with executors here; name one`
            : `no executor set up here serves a principal that granted agent ${input.agent} a mandate`;
      throw badRequest(`executorAddress is required: ${why} (operators: npm run admin -- rams setup-executor)`, {
        field: "executorAddress",
      });
    }
    ref = { address: candidates[0].executor, label: "AgentExecutor" };
  }
  const executor = executorAt(chain, ref);
  const [principal, owner, rams] = await Promise.all([
    onChain(chain, ref, "principal", () => executor.principal()),
    onChain(chain, ref, "owner", () => executor.owner()),
    onChain(chain, ref, "rams", () => executor.rams()),
  ]);
  // The registry an executor the client named works with is the client's choice too: checked as its own field's.
  const registry: ContractRef = {
    address: getAddress(rams),
    label: "AgentMandate",
    ...(ref.field && getAddress(rams).toLowerCase() !== chain.deployment.contracts.AgentMandate?.toLowerCase()
      ? { field: ref.field }
      : {}),
  };
  if (registry.field) await assertOwnContract(chain, registry);
  return { ref, principal: getAddress(principal), owner: getAddress(owner), registry };
}

/**
 * Recorded executors whose principal granted `agent` a mandate that is not revoked; when there is none, those whose
 * mandate was revoked, so that an execution after a revocation is refused for the revocation (the lifecycle check),
 * not for a missing executorAddress.
 */
export async function candidatesForAgent(
  ctx: { services: Pick<Stores, "ramsExecutors">; chain: Chain },
  agent: string | undefined,
) {
  if (!agent) return [];
  type Recorded = Awaited<ReturnType<Stores["ramsExecutors"]["list"]>>[number];
  const latest = new Map<string, Recorded>();
  for (const record of await ctx.services.ramsExecutors.list(ctx.chain.chainId))
    latest.set(`${record.registry}:${record.principal}`, record);
  const live: Recorded[] = [];
  const revoked: Recorded[] = [];
  for (const record of latest.values()) {
    const registry: ContractRef = { address: record.registry, label: "AgentMandate" };
    const mandate = await readMandate(ctx.chain, registry, agent, record.principal).catch(() => undefined);
    if (mandate) (mandate.revoked ? revoked : live).push(record);
  }
  return live.length ? live : revoked;
}

/** The action label of a selector: left-aligned in a bytes32. */
export const actionOf = (selector: string) => (selector + "0".repeat(56)).toLowerCase();

/** The selector of an action label; undefined when bytes 4-31 are not zero (not a selector's label). */
export function selectorOf(action: string): string | undefined {
  return /^0x[0-9a-f]{8}0{56}$/.test(action) ? action.slice(0, 10) : undefined;
}
