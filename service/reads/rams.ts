import { getAddress } from "ethers";
import { z } from "zod";
import { dataEnvelope, responseFields } from "../wire/responses";
import type { Chain } from "../chains/registry";
import { badRequest } from "../errors";
import {
  ramsTypedData,
  SIGNED_OPERATIONS,
  typedDataDigest,
  type RamsTypedData,
  type SignedOperation,
} from "../domains/rams/typed-data";
import type { DomainServices } from "../domains/context";
import { checkPrincipal } from "../domains/rams/compliance";
import { actionOf, resolveExecutor, selectorOf } from "../domains/rams/executors";
import { evaluateExecution, mandateStatus, mandateView, readMandate } from "../domains/rams/mandates";
import {
  chainNow,
  DEFAULT_DEADLINE_SECONDS,
  executorAt,
  mandateAt,
  onChain,
  RAMS_CHAIN_ID,
  registryRef,
  requireDeadline,
  type ContractRef,
} from "../domains/rams/on-chain";
import {
  type GrantInput,
  grantParams,
  grantMessage,
  extendMessage,
  revokeMessage,
  operatorMessage,
} from "../domains/rams/messages";

/** What the RAMS reads use. */
export type RamsReadServices = DomainServices;

/**
 * The RAMS read views. Every value comes from the chain as it is now;
 * a failed read is an error, never a default. Routes wrap each in `{ data }`.
 */

// Response schemas; routes answer each inside `{ data }`.

const { address, hash32, integerText, int } = responseFields;
const bytes32 = hash32;
const mandateStatusEnum = z.enum(["none", "revoked", "pending", "expired", "active"]);

const MandateView = z
  .strictObject({
    agent: address,
    principal: address,
    complianceProvider: address,
    asset: address,
    validFrom: int.meta({ description: "Unix seconds; 0 = immediately" }),
    validUntil: int.meta({ description: "Unix seconds" }),
    revoked: z.boolean(),
    identityRef: bytes32,
    metadata: bytes32,
    maxTransactionValue: integerText.meta({ description: "Raw base units of the asset; 2^256-1 = no cap" }),
    maxCumulativeValue: integerText,
    cumulativeUsed: integerText,
    remainingCumulativeValue: integerText,
    unlimitedTransactionValue: z.boolean(),
    unlimitedCumulativeValue: z.boolean(),
  })
  .meta({ id: "Mandate" });

export const MandateRead = dataEnvelope(
  z
    .strictObject({
      chainId: z.string(),
      agentMandateAddress: address,
      agent: address,
      principal: address,
      mandate: MandateView.nullable().meta({ description: "null when the pair was never granted one" }),
      status: mandateStatusEnum.meta({ description: "Derived in this order: none, revoked, pending, expired, active" }),
      frozen: z.boolean(),
      nonce: integerText.meta({ description: "The principal's current EIP-712 nonce" }),
      chainTime: int,
    })
    .meta({ id: "MandateRead" }),
);

export const ComplianceRead = dataEnvelope(
  z
    .strictObject({
      chainId: z.string(),
      complianceProviderAddress: address,
      principal: address,
      identityRef: bytes32,
      eligible: z.boolean(),
      reasonCode: int.meta({
        description:
          "COMPLIANT 0, KYC_EXPIRED 1, AML_FLAG 2, NOT_ACCREDITED 3, NOT_QUALIFIED 4, JURISDICTION_BLOCKED 5, IDENTITY_NOT_FOUND 6, ATTESTATION_REVOKED 7, OTHER 8",
      }),
      reason: z.string(),
      expiresAt: int.meta({ description: "0: no expiry" }),
    })
    .meta({ id: "ComplianceStatus" }),
);

export const StatusRead = dataEnvelope(
  z
    .strictObject({
      chainId: z.string(),
      agentMandateAddress: address,
      agent: address,
      principal: address,
      isFrozen: z.boolean(),
      nonce: integerText,
      operator: address.nullable(),
      isOperator: z.boolean().nullable().meta({ description: "null unless operator was asked" }),
    })
    .meta({ id: "AgentPrincipalStatus" }),
);

const check = z.looseObject({ pass: z.boolean() });

export const CanExecuteRead = dataEnvelope(
  z
    .strictObject({
      chainId: z.string(),
      agentMandateAddress: address,
      agent: address,
      principal: address,
      asset: address,
      action: bytes32,
      selector: z.string().nullable(),
      amount: integerText,
      canExecute: z.boolean().meta({ description: "The registry's canExecute" }),
      allowed: z.boolean().meta({
        description:
          "canExecute and the principal compliant: what an execution needs (the same as canExecute on this version's registry, which asks the compliance provider itself)",
      }),
      reason: z
        .strictObject({ check: z.string(), code: z.string(), message: z.string() })
        .nullable()
        .meta({ description: "The first failing check" }),
      status: mandateStatusEnum,
      frozen: z.boolean(),
      checks: z.strictObject({
        lifecycle: check,
        freeze: check,
        asset: check,
        action: check,
        transactionCap: check,
        cumulativeCap: check,
        compliance: check,
      }),
      chainTime: int,
    })
    .meta({ id: "CanExecute" }),
);

const actionSpec = { supported: z.boolean(), hasAmount: z.boolean(), amountIndex: int };

export const ExecutorActionRead = dataEnvelope(
  z
    .strictObject({
      chainId: z.string(),
      executorAddress: address,
      selector: z.string(),
      action: bytes32,
      actionSpec: z.strictObject(actionSpec),
      ...actionSpec,
      principal: address,
      owner: address,
      agentMandateAddress: address,
    })
    .meta({ id: "ExecutorAction" }),
);

export const TypedDataRead = dataEnvelope(
  z
    .strictObject({
      signer: address.meta({ description: "The principal, who signs" }),
      nonce: integerText,
      deadline: integerText.meta({ description: "Unix seconds; send it with the signature" }),
      typedDataId: bytes32.meta({ description: "The EIP-712 digest" }),
      typedData: z.strictObject({
        domain: z.strictObject({
          name: z.literal("RAMS"),
          version: z.literal("1"),
          chainId: int,
          verifyingContract: address,
        }),
        types: z
          .record(z.string(), z.array(z.strictObject({ name: z.string(), type: z.string() })))
          .meta({ description: "The primary type only (no EIP712Domain)" }),
        primaryType: z.enum(["GrantMandate", "RevokeMandate", "ExtendMandate", "SetOperator"]),
        message: z
          .record(z.string(), z.union([z.string(), z.boolean(), z.array(z.string())]))
          .meta({ description: "Integers as decimal strings" }),
      }),
      operation: z.enum(["grant-mandate", "revoke-mandate", "extend-mandate", "set-operator"]),
      agentMandateAddress: address,
      chainId: z.string(),
    })
    .meta({
      id: "RamsTypedData",
      description: "Sign typedData as is: ethers wallet.signTypedData(domain, types, message)",
    }),
);

type DataOf<T extends z.ZodType> = z.infer<T> extends { data: infer D } ? D : never;

/** The chain of a RAMS read: Sepolia (11155111) only. */
export function ramsChain(services: RamsReadServices, chainId: unknown): Chain {
  const chain = services.chains.resolve(chainId);
  if (chain.chainId !== RAMS_CHAIN_ID)
    throw badRequest(`RAMS runs on chain ${RAMS_CHAIN_ID} (Sepolia) only, not on ${chain.chainId}`, {
      field: "chainId",
    });
  return chain;
}

/** GET /rams/mandate: the pair's mandate, its derived status, the agent's freeze and the principal's nonce. */
export async function mandateRead(
  chain: Chain,
  registry: ContractRef,
  agent: string,
  principal: string,
): Promise<DataOf<typeof MandateRead>> {
  const contract = mandateAt(chain, registry);
  const [mandate, frozen, nonce, now] = await Promise.all([
    readMandate(chain, registry, agent, principal),
    onChain(chain, registry, "isFrozen", () => contract.isFrozen(agent)),
    onChain(chain, registry, "nonces", () => contract.nonces(principal)),
    chainNow(chain),
  ]);
  return {
    chainId: String(chain.chainId),
    agentMandateAddress: registry.address,
    agent: getAddress(agent),
    principal: getAddress(principal),
    mandate: mandate ? mandateView(mandate) : null,
    status: mandateStatus(mandate, now),
    frozen,
    nonce: nonce.toString(),
    chainTime: now,
  };
}

/** GET /rams/compliance-status: the principal's eligibility under identityRef. */
export async function complianceRead(
  chain: Chain,
  provider: ContractRef,
  principal: string,
  identityRef: string,
): Promise<DataOf<typeof ComplianceRead>> {
  const eligibility = await checkPrincipal(chain, provider, principal, identityRef);
  return {
    chainId: String(chain.chainId),
    complianceProviderAddress: provider.address,
    principal: getAddress(principal),
    identityRef,
    ...eligibility,
  };
}

/** GET /rams/status: the agent's freeze, the principal's nonce and, when asked, one operator's approval. */
export async function statusRead(
  chain: Chain,
  registry: ContractRef,
  agent: string,
  principal: string,
  operator?: string,
): Promise<DataOf<typeof StatusRead>> {
  const contract = mandateAt(chain, registry);
  const [isFrozen, nonce, isOperator] = await Promise.all([
    onChain(chain, registry, "isFrozen", () => contract.isFrozen(agent)),
    onChain(chain, registry, "nonces", () => contract.nonces(principal)),
    operator
      ? onChain(chain, registry, "isOperator", () => contract.isOperator(principal, operator))
      : Promise.resolve(null),
  ]);
  return {
    chainId: String(chain.chainId),
    agentMandateAddress: registry.address,
    agent: getAddress(agent),
    principal: getAddress(principal),
    isFrozen,
    nonce: nonce.toString(),
    operator: operator ? getAddress(operator) : null,
    isOperator,
  };
}

/** The action a read names: `action` (bytes32) or `selector` (4 bytes); the two must agree when both are sent. */
export function actionOfQuery(q: { action?: string; selector?: string }, fallback?: string): string {
  if (q.action && q.selector && actionOf(q.selector) !== q.action)
    throw badRequest(`selector ${q.selector} and action ${q.action} differ: send one of them`, { field: "action" });
  const action = q.action ?? (q.selector ? actionOf(q.selector) : fallback);
  if (!action) throw badRequest("selector (4 bytes) or action (bytes32) is required", { field: "selector" });
  return action;
}

/** GET /rams/can-execute: the registry's canExecute and each of its checks, plus compliance, with the first failure. */
export async function canExecuteRead(
  chain: Chain,
  registry: ContractRef,
  q: { agent: string; principal: string; asset: string; action: string; amount: bigint },
): Promise<DataOf<typeof CanExecuteRead>> {
  const e = await evaluateExecution(chain, registry, q);
  return {
    chainId: String(chain.chainId),
    agentMandateAddress: registry.address,
    agent: getAddress(q.agent),
    principal: getAddress(q.principal),
    asset: getAddress(q.asset),
    action: q.action,
    selector: selectorOf(q.action) ?? null,
    amount: q.amount.toString(),
    canExecute: e.canExecute,
    allowed: e.allowed,
    reason: e.reason,
    status: e.status,
    frozen: e.frozen,
    checks: e.checks,
    chainTime: e.now,
  };
}

/** GET /rams/executor-action: a selector's ActionSpec on an executor, with the executor's principal, owner and registry. */
export async function executorActionRead(
  services: RamsReadServices,
  chain: Chain,
  q: { action: string; executorAddress?: string; principal?: string },
): Promise<DataOf<typeof ExecutorActionRead>> {
  const selector = selectorOf(q.action);
  if (!selector)
    throw badRequest("action must be a selector's label: 4 bytes followed by 28 zero bytes", { field: "action" });
  const executor = await resolveExecutor(
    { services, chain },
    { executorAddress: q.executorAddress, principal: q.principal },
  );
  const spec = await onChain(chain, executor.ref, "actions", () => executorAt(chain, executor.ref).actions(selector));
  const actionSpec = { supported: spec.supported, hasAmount: spec.hasAmount, amountIndex: Number(spec.amountIndex) };
  return {
    chainId: String(chain.chainId),
    executorAddress: executor.ref.address,
    selector,
    action: q.action,
    actionSpec,
    ...actionSpec,
    principal: executor.principal,
    owner: executor.owner,
    agentMandateAddress: executor.registry.address,
  };
}

/** What GET /rams/typed-data/{operation} reads from its query (already parsed). */
export type TypedDataQuery = Partial<GrantInput> & {
  agent?: string;
  principal?: string;
  operator?: string;
  approved?: boolean;
  newValidUntil?: number;
  deadline?: number;
  agentMandateAddress?: string;
};

/** A typed-data request, validated (input rules, deadline bounds), before anything is paid for or read. */
export interface TypedDataPlan {
  operation: SignedOperation;
  registry: ContractRef;
  principal: string;
  deadline: number;
  message: (nonce: bigint, deadline: bigint) => RamsTypedData["message"];
}

export async function planTypedData(
  chain: Chain,
  operation: SignedOperation,
  q: TypedDataQuery,
): Promise<TypedDataPlan> {
  let registry: ContractRef;
  let principal: string;
  let message: TypedDataPlan["message"];
  if (operation === "grant-mandate") {
    const { registry: r, params } = await grantParams(chain, q as GrantInput);
    registry = r;
    principal = params.principal;
    message = (nonce, deadline) => grantMessage(params, nonce, deadline);
  } else {
    registry = registryRef(chain, q.agentMandateAddress);
    principal = q.principal!;
    message =
      operation === "revoke-mandate"
        ? revokeMessage(q.agent!, q.principal!)
        : operation === "extend-mandate"
          ? extendMessage(q.agent!, q.principal!, q.newValidUntil!)
          : operatorMessage(q.principal!, q.operator!, q.approved!);
  }
  const deadline = q.deadline === undefined ? (await chainNow(chain)) + DEFAULT_DEADLINE_SECONDS : q.deadline;
  if (q.deadline !== undefined) await requireDeadline(chain, q.deadline);
  return { operation, registry, principal, deadline, message };
}

/**
 * GET /rams/typed-data/{operation}: the EIP-712 payload the principal signs, over the on-chain nonce and a deadline
 * (default one hour after the chain's time, at most 30 days). `typedDataId` is the EIP-712 digest.
 */
export async function typedDataRead(chain: Chain, plan: TypedDataPlan): Promise<DataOf<typeof TypedDataRead>> {
  const { registry, principal } = plan;
  const nonce = await onChain(chain, registry, "nonces", () => mandateAt(chain, registry).nonces(principal));
  const typedData = ramsTypedData(
    SIGNED_OPERATIONS[plan.operation],
    chain.chainId,
    registry.address,
    plan.message(nonce, BigInt(plan.deadline)),
  );
  return {
    signer: getAddress(principal),
    nonce: nonce.toString(),
    deadline: String(plan.deadline),
    typedDataId: typedDataDigest(typedData),
    typedData,
    operation: plan.operation,
    agentMandateAddress: registry.address,
    chainId: String(chain.chainId),
  };
}
