import { getAddress } from "ethers";
import { badRequest } from "../errors";
import { AgentExecutor__factory } from "../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { approvalStep, eligibilityStep, enforcerStep, executorStep, selectorSteps } from "./rams-setup-steps";
import type { ExecutorSetupOptions, ExecutorSetupResult, SelectorSpec, SetupContext } from "./rams-setup-types";

/**
 * The operator's set-up of a principal's AgentExecutor, in the order each step depends on the one before:
 *   1. deploy the executor (or reuse one), 2. grant it RECORDER_ROLE on the registry, 3. register each selector with
 *   hasAmount / amountIndex, 4. the principal's approval of the executor on the asset, 5. an enforcer other than the
 *   registry admin, 6. the compliance provider owner's grant-principal.
 * Every step first reads the chain and does nothing when it is already in place. Steps the operator (the registry
 * admin) can do are sent with its key; a step that needs another wallet's key is sent when that key is given, and
 * otherwise returned as a prepared, unsigned transaction for that wallet (with the API method that prepares it too).
 * Used by `npm run admin -- rams setup-executor` and by the tests.
 */

/** Known selectors and the argument index of their amount: `transferFrom`, `transferFrom:2`, `0x23b872dd:2`, `approve:none`. */
export const KNOWN_SELECTORS: Record<string, { selector: string; amountIndex: number }> = {
  transferFrom: { selector: "0x23b872dd", amountIndex: 2 },
  transfer: { selector: "0xa9059cbb", amountIndex: 1 },
  approve: { selector: "0x095ea7b3", amountIndex: 1 },
};

/** Parses a --selector value: <name|0x8-hex>[:<amountIndex 0-255>|:none]; none registers it without amount. */
export function parseSelectorSpec(text: string): SelectorSpec {
  const [head, index, ...rest] = text.trim().split(":");
  const known = KNOWN_SELECTORS[head];
  const selector = known?.selector ?? (/^0x[0-9a-fA-F]{8}$/.test(head) ? head.toLowerCase() : undefined);
  if (!selector || rest.length) {
    throw badRequest(
      `--selector ${text}: expected <${Object.keys(KNOWN_SELECTORS).join("|")}|0x + 8 hex>[:<amountIndex>|:none]`,
      { field: "selector" },
    );
  }
  if (index === "none") return { selector, hasAmount: false, amountIndex: 0, name: known ? head : undefined };
  const amountIndex =
    index === undefined
      ? known?.amountIndex
      : /^\d{1,3}$/.test(index) && Number(index) <= 255
        ? Number(index)
        : undefined;
  if (amountIndex === undefined) {
    throw badRequest(
      `--selector ${text}: give the amount's argument index (0-255), or :none for a selector without amount`,
      { field: "selector" },
    );
  }
  return { selector, hasAmount: true, amountIndex, name: known ? head : undefined };
}

/**
 * Sets up a RAMS executor for a principal, step by step and idempotently (a step already done on chain is reported
 * "already"): 1 the executor, 2 its RECORDER_ROLE, 3 its selectors, 4 the principal's approval on the asset, 5 an
 * enforcer, 6 the principal's eligibility. A step whose signer's key is not given is answered as a prepared transaction.
 */
export async function setupExecutor(o: ExecutorSetupOptions): Promise<ExecutorSetupResult> {
  const admin = o.keys.admin.connect(o.provider);
  const adminAddress = getAddress(admin.address);
  const registry = AgentMandate__factory.connect(getAddress(o.registry), admin);
  const c: SetupContext = {
    o,
    admin,
    adminAddress,
    principal: getAddress(o.principal),
    owner: getAddress(o.owner ?? adminAddress),
    registry,
    registryAddress: await registry.getAddress(),
    steps: [],
    log: o.log ?? (() => undefined),
    prepared: (from, to, data, description) => ({ from, to, data, value: "0x00", chainId: o.chainId, description }),
    requireKey: (wallet, expected, variable) => {
      if (wallet && getAddress(wallet.address) !== expected)
        throw badRequest(`${variable} is the key of ${wallet.address}, not of ${expected}`, { field: variable });
      return wallet?.connect(o.provider);
    },
    sent: async (tx) => {
      const response = await tx;
      await response.wait();
      return response.hash;
    },
  };
  if (!(await registry.hasRole(await registry.DEFAULT_ADMIN_ROLE(), adminAddress))) {
    throw badRequest(`${adminAddress} (RAMS_ADMIN_PRIVATE_KEY) is not an admin of AgentMandate ${c.registryAddress}`, {
      field: "RAMS_ADMIN_PRIVATE_KEY",
    });
  }
  const executorAddress = await executorStep(c);
  const executor = AgentExecutor__factory.connect(executorAddress, o.provider);
  const executorOwner = getAddress(await executor.owner());
  // 2. RECORDER_ROLE for the executor (it is neither the asset nor the principal).
  const recorderRole = await registry.RECORDER_ROLE();
  if (await registry.hasRole(recorderRole, executorAddress))
    c.steps.push({ step: 2, name: "grant-recorder-role", status: "already" });
  else
    c.steps.push({
      step: 2,
      name: "grant-recorder-role",
      status: "done",
      txHash: await c.sent(registry.grantRole(recorderRole, executorAddress)),
    });
  await selectorSteps(c, executor, executorAddress, executorOwner);
  await approvalStep(c, executorAddress);
  await enforcerStep(c);
  const complianceAddress = await eligibilityStep(c);
  const pending = c.steps.filter((s) => s.transaction).map((s) => s.transaction!);
  return {
    chainId: o.chainId,
    registry: c.registryAddress,
    complianceProvider: complianceAddress,
    principal: c.principal,
    executor: executorAddress,
    owner: executorOwner,
    steps: c.steps,
    pending,
    complete: pending.length === 0 && c.steps.every((s) => s.status !== "skipped"),
  };
}
