import { getAddress, Interface, MaxUint256 } from "ethers";
import { badRequest } from "../errors";
import { AgentExecutor__factory } from "../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { ComplianceProvider__factory } from "../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";
import type { SetupContext } from "./rams-setup-types";

/**
 * The steps of the RAMS executor set-up (setupExecutor, rams-setup.ts), one function each but the second (the
 * executor's RECORDER_ROLE, granted there). Each reads the chain first and reports "already" when the step is in
 * place; a step whose signer's key is not given is answered as a prepared transaction.
 */

const erc20 = new Interface([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
]);

/** 1. The executor: the one given (checked to serve this principal on this registry), or a new one. */
export async function executorStep(c: SetupContext): Promise<string> {
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
export async function selectorSteps(
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
export async function approvalStep(c: SetupContext, executorAddress: string): Promise<void> {
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
export async function enforcerStep(c: SetupContext): Promise<void> {
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
export async function eligibilityStep(c: SetupContext): Promise<string> {
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
