import { getAddress, Interface, MaxUint256, type JsonRpcProvider, type Wallet } from "ethers";
import { badRequest } from "../errors";
import { AgentExecutor__factory } from "../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { ComplianceProvider__factory } from "../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";

/**
 * The operator's set-up of a principal's AgentExecutor, in the order each step depends on the one before:
 *   1. deploy the executor (or reuse one), 2. grant it RECORDER_ROLE on the registry, 3. register each selector with
 *   hasAmount / amountIndex, 4. the principal's approval of the executor on the asset, 5. an enforcer other than the
 *   registry admin, 6. the compliance provider owner's grant-principal.
 * Every step first reads the chain and does nothing when it is already in place. Steps the operator (the registry
 * admin) can do are sent with its key; a step that needs another wallet's key is sent when that key is given, and
 * otherwise returned as a prepared, unsigned transaction for that wallet (with the API method that prepares it too).
 * Used by `npm run admin -- rams setup-executor` (service/operator/admin.ts) and by the tests.
 */

export interface SelectorSpec {
  selector: string;
  hasAmount: boolean;
  amountIndex: number;
  /** The name it was given by (transferFrom, approve, …), for the report. */
  name?: string;
}

export interface ExecutorSetupOptions {
  provider: JsonRpcProvider;
  chainId: number;
  registry: string;
  complianceProvider: string;
  principal: string;
  /** The executor's owner (may set actions); default: the registry admin. */
  owner?: string;
  selectors: SelectorSpec[];
  /** The mandate's asset, for the principal's approval (step 4); without it the step is skipped with an instruction. */
  asset?: string;
  /** The approval amount (default: unlimited). */
  allowance?: bigint;
  enforcer?: string;
  /** With identityRef, step 6 makes the principal eligible (expiresAt: 0 = no expiry). */
  identityRef?: string;
  expiresAt?: number;
  /** Reuse this executor instead of deploying one. */
  executor?: string;
  /** admin: the registry's DEFAULT_ADMIN_ROLE holder (required); the others are optional. */
  keys: { admin: Wallet; owner?: Wallet; principal?: Wallet; compliance?: Wallet };
  log?: (line: string) => void;
}

export interface PreparedTransaction {
  from: string;
  to: string;
  data: string;
  value: "0x00";
  chainId: number;
  description: string;
}

export interface SetupStep {
  step: number;
  name:
    "deploy-executor" | "grant-recorder-role" | "set-action" | "principal-approval" | "enforcer" | "grant-principal";
  status: "done" | "already" | "prepared" | "skipped";
  txHash?: string;
  /** The unsigned transaction for the wallet whose key was not given (status prepared). */
  transaction?: PreparedTransaction;
  /** The API method that prepares the same transaction. */
  api?: { method: string; body: Record<string, unknown> };
  note?: string;
  [detail: string]: unknown;
}

export interface ExecutorSetupResult {
  chainId: number;
  registry: string;
  complianceProvider: string;
  principal: string;
  executor: string;
  owner: string;
  steps: SetupStep[];
  /** The transactions other wallets still have to sign, in order. */
  pending: PreparedTransaction[];
  complete: boolean;
}

const erc20 = new Interface([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);

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

/** What every set-up step shares: the options, the admin's signer, the registry, and the list of steps taken. */
interface SetupContext {
  o: ExecutorSetupOptions;
  admin: Wallet;
  adminAddress: string;
  principal: string;
  owner: string;
  registry: ReturnType<typeof AgentMandate__factory.connect>;
  registryAddress: string;
  steps: SetupStep[];
  log: (line: string) => void;
  prepared: (from: string, to: string, data: string, description: string) => PreparedTransaction;
  requireKey: (wallet: Wallet | undefined, expected: string, variable: string) => Wallet | undefined;
  sent: (tx: Promise<{ hash: string; wait(): Promise<unknown> }>) => Promise<string>;
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

/** 1. The executor: the one given (checked to serve this principal on this registry), or a new one. */
async function executorStep(c: SetupContext): Promise<string> {
  if (c.o.executor) {
    const executorAddress = getAddress(c.o.executor);
    const existing = AgentExecutor__factory.connect(executorAddress, c.o.provider);
    const [p, r] = await Promise.all([existing.principal(), existing.rams()]).catch(() => {
      throw badRequest(`--executor ${executorAddress} is not an AgentExecutor`, { field: "executor" });
    });
    if (getAddress(p) !== c.principal || getAddress(r) !== c.registryAddress) {
      throw badRequest(
        `--executor ${executorAddress} serves principal ${p} on registry ${r}, not ${c.principal} on ${c.registryAddress}`,
        { field: "executor" },
      );
    }
    c.steps.push({
      step: 1,
      name: "deploy-executor",
      status: "already",
      executor: executorAddress,
      owner: getAddress(await existing.owner()),
    });
    return executorAddress;
  }
  {
    const contract = await new AgentExecutor__factory(c.admin).deploy(c.registryAddress, c.principal, c.owner);
    const receipt = await contract.deploymentTransaction()!.wait();
    const executorAddress = getAddress(await contract.getAddress());
    c.steps.push({
      step: 1,
      name: "deploy-executor",
      status: "done",
      txHash: receipt!.hash,
      executor: executorAddress,
      owner: c.owner,
    });
    c.log(`executor ${executorAddress} deployed for ${c.principal}`);
    return executorAddress;
  }
}

/** 3. The selectors the executor accepts, each with where its amount is (or none). */
async function selectorSteps(
  c: SetupContext,
  executor: ReturnType<typeof AgentExecutor__factory.connect>,
  executorAddress: string,
  executorOwner: string,
): Promise<void> {
  const ownerKey =
    executorOwner === c.adminAddress
      ? c.admin
      : c.requireKey(c.o.keys.owner, executorOwner, "RAMS_EXECUTOR_OWNER_PRIVATE_KEY");
  for (const spec of c.o.selectors) {
    const current = await executor.actions(spec.selector);
    const detail = {
      selector: spec.selector,
      ...(spec.name ? { selectorName: spec.name } : {}),
      hasAmount: spec.hasAmount,
      amountIndex: spec.amountIndex,
    };
    const warning = spec.hasAmount
      ? {}
      : { warning: `${spec.selector} without amount is gated at 0: a value-moving call bypasses the mandate's caps` };
    if (current.supported && current.hasAmount === spec.hasAmount && Number(current.amountIndex) === spec.amountIndex) {
      c.steps.push({ step: 3, name: "set-action", status: "already", ...detail, ...warning });
      continue;
    }
    const data = executor.interface.encodeFunctionData("setAction", [
      spec.selector,
      true,
      spec.hasAmount,
      spec.amountIndex,
    ]);
    if (ownerKey) {
      c.steps.push({
        step: 3,
        name: "set-action",
        status: "done",
        txHash: await c.sent(ownerKey.sendTransaction({ to: executorAddress, data })),
        ...detail,
        ...warning,
      });
    } else {
      c.steps.push({
        step: 3,
        name: "set-action",
        status: "prepared",
        transaction: c.prepared(
          executorOwner,
          executorAddress,
          data,
          `register ${spec.selector} on executor ${executorAddress}`,
        ),
        api: {
          method: "ramsSetExecutorAction",
          body: {
            chainId: String(c.o.chainId),
            signerAddress: executorOwner,
            executorAddress,
            selector: spec.selector,
            supported: true,
            hasAmount: spec.hasAmount,
            amountIndex: spec.amountIndex,
          },
        },
        note: `the executor's owner ${executorOwner} signs this (or give RAMS_EXECUTOR_OWNER_PRIVATE_KEY)`,
        ...detail,
        ...warning,
      });
    }
  }
}

/** 4. The principal's approval of the executor on the asset (the mandate does not check it). */
async function approvalStep(c: SetupContext, executorAddress: string): Promise<void> {
  if (!c.o.asset) {
    c.steps.push({
      step: 4,
      name: "principal-approval",
      status: "skipped",
      note: `no --asset given: ${c.principal} must approve ${executorAddress} on the mandate's asset (ERC-20 approve)`,
    });
  } else {
    const asset = getAddress(c.o.asset);
    const amount = c.o.allowance ?? MaxUint256;
    const [current] = erc20.decodeFunctionResult(
      "allowance",
      await c.o.provider.call({
        to: asset,
        data: erc20.encodeFunctionData("allowance", [c.principal, executorAddress]),
      }),
    );
    const data = erc20.encodeFunctionData("approve", [executorAddress, amount]);
    const principalKey = c.requireKey(c.o.keys.principal, c.principal, "RAMS_PRINCIPAL_PRIVATE_KEY");
    const detail = { asset, allowance: amount.toString() };
    if ((current as bigint) >= amount)
      c.steps.push({
        step: 4,
        name: "principal-approval",
        status: "already",
        ...detail,
        current: (current as bigint).toString(),
      });
    else if (principalKey)
      c.steps.push({
        step: 4,
        name: "principal-approval",
        status: "done",
        txHash: await c.sent(principalKey.sendTransaction({ to: asset, data })),
        ...detail,
      });
    else {
      c.steps.push({
        step: 4,
        name: "principal-approval",
        status: "prepared",
        transaction: c.prepared(
          c.principal,
          asset,
          data,
          `approve executor ${executorAddress} for ${amount} on ${asset}`,
        ),
        note: `the principal ${c.principal} signs this (or give RAMS_PRINCIPAL_PRIVATE_KEY)`,
        ...detail,
      });
    }
  }
}

/** 5. An enforcer, never the admin. */
async function enforcerStep(c: SetupContext): Promise<void> {
  const enforcerRole = await c.registry.ENFORCER_ROLE();
  if (!c.o.enforcer) {
    c.steps.push({
      step: 5,
      name: "enforcer",
      status: "skipped",
      note: "no --enforcer given: freeze / unfreeze need an ENFORCER_ROLE holder other than the registry admin",
    });
  } else {
    const enforcer = getAddress(c.o.enforcer);
    if (await c.registry.hasRole(enforcerRole, enforcer))
      c.steps.push({ step: 5, name: "enforcer", status: "already", enforcer });
    else if (await c.registry.hasRole(await c.registry.DEFAULT_ADMIN_ROLE(), enforcer)) {
      throw badRequest(
        `--enforcer ${enforcer} is a registry admin: the registry refuses one account holding both roles (AdminEnforcerOverlap)`,
        { field: "enforcer" },
      );
    } else
      c.steps.push({
        step: 5,
        name: "enforcer",
        status: "done",
        enforcer,
        txHash: await c.sent(c.registry.grantRole(enforcerRole, enforcer)),
      });
  }
}

/** 6. The principal's eligibility at the compliance provider; returns the provider's address. */
async function eligibilityStep(c: SetupContext): Promise<string> {
  const compliance = ComplianceProvider__factory.connect(getAddress(c.o.complianceProvider), c.o.provider);
  const complianceAddress = await compliance.getAddress();
  if (!c.o.identityRef) {
    c.steps.push({
      step: 6,
      name: "grant-principal",
      status: "skipped",
      note: "no --identity-ref given: the compliance provider's owner runs ramsGrantPrincipal before any grant-mandate",
    });
  } else {
    const [eligible] = await compliance.checkPrincipal(c.principal, c.o.identityRef);
    const complianceOwner = getAddress(await compliance.owner());
    const detail = {
      complianceProvider: complianceAddress,
      identityRef: c.o.identityRef,
      expiresAt: c.o.expiresAt ?? 0,
    };
    if (eligible) c.steps.push({ step: 6, name: "grant-principal", status: "already", ...detail });
    else {
      const data = compliance.interface.encodeFunctionData("grantPrincipal", [
        c.principal,
        c.o.identityRef,
        c.o.expiresAt ?? 0,
      ]);
      const key =
        complianceOwner === c.adminAddress
          ? c.admin
          : c.requireKey(c.o.keys.compliance, complianceOwner, "RAMS_COMPLIANCE_PRIVATE_KEY");
      if (key)
        c.steps.push({
          step: 6,
          name: "grant-principal",
          status: "done",
          txHash: await c.sent(key.sendTransaction({ to: complianceAddress, data })),
          ...detail,
        });
      else {
        c.steps.push({
          step: 6,
          name: "grant-principal",
          status: "prepared",
          transaction: c.prepared(
            complianceOwner,
            complianceAddress,
            data,
            `make ${c.principal} eligible under ${c.o.identityRef}`,
          ),
          api: {
            method: "ramsGrantPrincipal",
            body: {
              chainId: String(c.o.chainId),
              signerAddress: complianceOwner,
              principal: c.principal,
              identityRef: c.o.identityRef,
              expiresAt: c.o.expiresAt ?? 0,
            },
          },
          note: `the compliance provider's owner ${complianceOwner} signs this (or give RAMS_COMPLIANCE_PRIVATE_KEY)`,
          ...detail,
        });
      }
    }
  }
  return complianceAddress;
}
