import { contractAt } from "../../chains/contract-at";
import { getAddress, ZeroAddress } from "ethers";
import { agentExecutorInterface, decodeRevert, revertDataOf } from "../../chains/contracts";
import type { Chain } from "../../chains/registry";
import { ApiError, badRequest, preflightError } from "../../errors";
import { AgentExecutor__factory } from "../../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { AgentMandate__factory } from "../../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { ComplianceProvider__factory } from "../../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";
import type { Stores } from "../../store/stores";
import { MAX_UINT256 } from "../../model/units";
import { assertOwnContract } from "./contract-code";
// ERC-8226 (RAMS) mandates: the registry and its contracts, what a mandate allows, the executors, revert reasons; for writes and reads alike.

/** RAMS runs on Sepolia only, in both environments (NETWORKS' alsoServes in chains/networks.ts). */
export const RAMS_CHAIN_ID = 11155111;

/** A signature deadline is at most this far ahead of the chain's clock; the typed-data default is one hour. */
export const MAX_DEADLINE_SECONDS = 30 * 24 * 3600;
export const DEFAULT_DEADLINE_SECONDS = 3600;

/** The selector of ERC-20 transferFrom(address,address,uint256): ramsExecute's helper mode and can-execute's default. */
export const TRANSFER_FROM_SELECTOR = "0x23b872dd";

// ---------------------------------------------------------------------------------------------------------------
// Contracts and on-chain reads

/** One of the RAMS contracts a call uses: the chain's configured default, or the address the client sent. */
export interface ContractRef {
  address: string;
  label: "AgentMandate" | "ComplianceProvider" | "AgentExecutor";
  /** The request field that named it (absent: the chain's default). */
  field?: string;
}

export function registryRef(chain: Chain, override?: string, field = "agentMandateAddress"): ContractRef {
  return override
    ? { address: getAddress(override), label: "AgentMandate", field }
    : { address: chain.deployment.contracts.AgentMandate, label: "AgentMandate" };
}

export function complianceRef(chain: Chain, override?: string, field = "complianceProviderAddress"): ContractRef {
  return override
    ? { address: getAddress(override), label: "ComplianceProvider", field }
    : { address: chain.deployment.contracts.ComplianceProvider, label: "ComplianceProvider" };
}

export const mandateAt = (chain: Chain, ref: ContractRef) =>
  contractAt(AgentMandate__factory, ref.address, chain.provider);
export const complianceAt = (chain: Chain, ref: ContractRef) =>
  contractAt(ComplianceProvider__factory, ref.address, chain.provider);
export const executorAt = (chain: Chain, ref: ContractRef) =>
  contractAt(AgentExecutor__factory, ref.address, chain.provider);

/**
 * Reads `what` from a RAMS contract. Failures are errors, never defaults (a default would pass for what the chain
 * holds): an address that is not such a contract is the client's 400 when it sent it (the service's 502 when it is the
 * chain's default); an RPC failure is a 502. A contract the client named is read only once its code is known to be this
 * version's own (or the operator allowed it: contract-code.ts), so no contract of the client's answers a check.
 */
export async function onChain<T>(chain: Chain, ref: ContractRef, what: string, read: () => Promise<T>): Promise<T> {
  if (ref.field) await assertOwnContract(chain, ref);
  try {
    return await read();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "CALL_EXCEPTION" || code === "BAD_DATA") {
      const bytecode = await chain.provider.getCode(ref.address).catch(() => undefined);
      const why = bytecode === "0x" ? "has no contract code" : `does not answer ${what}`;
      const message = `${ref.field ?? ref.label} ${ref.address} ${why} on chain ${chain.chainId}: it is not ${/^[AEIOU]/.test(ref.label) ? "an" : "a"} ${ref.label}`;
      if (ref.field) throw badRequest(message, { field: ref.field, contract: ref.address });
      throw new ApiError("CHAIN_READ_FAILED", message, { contract: ref.address });
    }
    throw new ApiError(
      "CHAIN_READ_FAILED",
      `Reading ${what} from ${ref.label} ${ref.address} on chain ${chain.chainId} failed: ${shortMessage(error)}`,
      {
        contract: ref.address,
      },
    );
  }
}

/** The chain's clock: the latest block's timestamp (what the next block's checks compare against, at the least). */
export async function chainNow(chain: Chain): Promise<number> {
  const block = await chain.provider.getBlock("latest");
  if (!block) throw new ApiError("CHAIN_READ_FAILED", `Chain ${chain.chainId} returned no latest block`);
  return block.timestamp;
}

export function shortMessage(error: unknown): string {
  const e = error as { shortMessage?: string; message?: string };
  return e.shortMessage ?? e.message ?? String(error);
}

// ---------------------------------------------------------------------------------------------------------------
// Mandates

export interface Mandate {
  agent: string;
  principal: string;
  complianceProvider: string;
  asset: string;
  validFrom: number;
  validUntil: number;
  revoked: boolean;
  identityRef: string;
  metadata: string;
  maxTransactionValue: bigint;
  maxCumulativeValue: bigint;
  cumulativeUsed: bigint;
}

export type MandateStatus = "none" | "revoked" | "pending" | "expired" | "active";

/** The pair's mandate, or undefined when it was never granted (the registry returns all zeros). */
export async function readMandate(
  chain: Chain,
  registry: ContractRef,
  agent: string,
  principal: string,
): Promise<Mandate | undefined> {
  const m = await onChain(chain, registry, "getMandate", () => mandateAt(chain, registry).getMandate(agent, principal));
  if (m.principal === ZeroAddress) return undefined;
  return {
    agent: getAddress(m.agent),
    principal: getAddress(m.principal),
    complianceProvider: getAddress(m.complianceProvider),
    asset: getAddress(m.asset),
    validFrom: Number(m.validFrom),
    validUntil: Number(m.validUntil),
    revoked: m.revoked,
    identityRef: m.identityRef.toLowerCase(),
    metadata: m.metadata.toLowerCase(),
    maxTransactionValue: m.maxTransactionValue,
    maxCumulativeValue: m.maxCumulativeValue,
    cumulativeUsed: m.cumulativeUsed,
  };
}

/** The derived status, in this order: none → revoked → pending → expired → active (both window ends inclusive). */
export function mandateStatus(m: Mandate | undefined, now: number): MandateStatus {
  if (!m) return "none";
  if (m.revoked) return "revoked";
  if (now < m.validFrom) return "pending";
  if (now > m.validUntil) return "expired";
  return "active";
}

/** The mandate as the API shows it: amounts as decimal strings in raw base units. */
export function mandateView(m: Mandate) {
  return {
    agent: m.agent,
    principal: m.principal,
    complianceProvider: m.complianceProvider,
    asset: m.asset,
    validFrom: m.validFrom,
    validUntil: m.validUntil,
    revoked: m.revoked,
    identityRef: m.identityRef,
    metadata: m.metadata,
    maxTransactionValue: m.maxTransactionValue.toString(),
    maxCumulativeValue: m.maxCumulativeValue.toString(),
    cumulativeUsed: m.cumulativeUsed.toString(),
    remainingCumulativeValue: (m.maxCumulativeValue > m.cumulativeUsed
      ? m.maxCumulativeValue - m.cumulativeUsed
      : 0n
    ).toString(),
    unlimitedTransactionValue: m.maxTransactionValue === MAX_UINT256,
    unlimitedCumulativeValue: m.maxCumulativeValue === MAX_UINT256,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Compliance

export interface Eligibility {
  eligible: boolean;
  reasonCode: number;
  reason: string;
  expiresAt: number;
}

export async function checkPrincipal(
  chain: Chain,
  provider: ContractRef,
  principal: string,
  identityRef: string,
): Promise<Eligibility> {
  const [eligible, reasonCode, expiresAt] = await onChain(chain, provider, "checkPrincipal", () =>
    complianceAt(chain, provider).checkPrincipal(principal, identityRef),
  );
  const code = Number(reasonCode);
  return { eligible, reasonCode: code, reason: REASONS[code] ?? `UNKNOWN_${code}`, expiresAt: Number(expiresAt) };
}

// ---------------------------------------------------------------------------------------------------------------
// Execution checks (GET /rams/can-execute and ramsExecute's pre-check)

export interface ExecutionQuery {
  agent: string;
  principal: string;
  asset: string;
  /** bytes32, lower-case. */
  action: string;
  amount: bigint;
}

export interface CheckResult {
  pass: boolean;
  [detail: string]: unknown;
}

export interface ExecutionEvaluation {
  /** The registry's own answer (authoritative for the chain). */
  canExecute: boolean;
  /** canExecute and the principal still compliant: what ramsExecute's pre-check requires. */
  allowed: boolean;
  /** The first failing check (in the order of `checks`), or null. */
  reason: { check: string; code: string; message: string } | null;
  checks: Record<
    "lifecycle" | "freeze" | "asset" | "action" | "transactionCap" | "cumulativeCap" | "compliance",
    CheckResult
  >;
  mandate: Mandate | undefined;
  status: MandateStatus;
  frozen: boolean;
  now: number;
}

/**
 * Every check the registry's canExecute makes, each with its result, plus compliance (a revoked or expired principal
 * fails the execution pre-check, though the mandate record is unchanged), and the registry's own canExecute.
 */
export async function evaluateExecution(
  chain: Chain,
  registry: ContractRef,
  q: ExecutionQuery,
): Promise<ExecutionEvaluation> {
  const contract = mandateAt(chain, registry);
  const [mandate, frozen, actionEnabled, canExecute, now] = await Promise.all([
    readMandate(chain, registry, q.agent, q.principal),
    onChain(chain, registry, "isFrozen", () => contract.isFrozen(q.agent)),
    onChain(chain, registry, "isActionEnabled", () => contract.isActionEnabled(q.agent, q.principal, q.action)),
    onChain(chain, registry, "canExecute", () =>
      contract.canExecute(q.agent, q.principal, q.asset, q.action, q.amount),
    ),
    chainNow(chain),
  ]);
  const status = mandateStatus(mandate, now);
  const m = mandate;
  const compliance = m
    ? await checkPrincipal(
        chain,
        { address: m.complianceProvider, label: "ComplianceProvider" },
        q.principal,
        m.identityRef,
      )
    : undefined;
  const txCap = m?.maxTransactionValue ?? 0n;
  const cumCap = m?.maxCumulativeValue ?? 0n;
  const used = m?.cumulativeUsed ?? 0n;
  const checks: ExecutionEvaluation["checks"] = {
    lifecycle: {
      pass: status === "active",
      status,
      validFrom: m?.validFrom ?? null,
      validUntil: m?.validUntil ?? null,
      revoked: m?.revoked ?? null,
      now,
    },
    freeze: { pass: !frozen, frozen },
    asset: { pass: !!m && m.asset === getAddress(q.asset), asset: getAddress(q.asset), mandateAsset: m?.asset ?? null },
    action: {
      pass: !!m && actionEnabled,
      action: q.action,
      selector: q.action.slice(0, 10),
      enabled: !!m && actionEnabled,
    },
    transactionCap: {
      pass: !!m && (txCap === MAX_UINT256 || q.amount <= txCap),
      amount: q.amount.toString(),
      maxTransactionValue: txCap.toString(),
      unlimited: txCap === MAX_UINT256,
    },
    cumulativeCap: {
      pass: !!m && (cumCap === MAX_UINT256 || (used <= cumCap && q.amount <= cumCap - used)),
      amount: q.amount.toString(),
      cumulativeUsed: used.toString(),
      maxCumulativeValue: cumCap.toString(),
      remainingCumulativeValue: (cumCap > used ? cumCap - used : 0n).toString(),
      unlimited: cumCap === MAX_UINT256,
    },
    compliance: compliance
      ? {
          pass: compliance.eligible,
          complianceProvider: m!.complianceProvider,
          identityRef: m!.identityRef,
          ...compliance,
        }
      : {
          pass: false,
          complianceProvider: null,
          identityRef: null,
          eligible: false,
          reason: null,
          reasonCode: null,
          expiresAt: null,
        },
  };
  const reason =
    firstFailure(checks, q, m) ??
    (canExecute
      ? null
      : { check: "registry", code: "not_executable", message: "the registry's canExecute answers false" });
  return { canExecute, allowed: canExecute && checks.compliance.pass, reason, checks, mandate, status, frozen, now };
}

export function firstFailure(
  checks: ExecutionEvaluation["checks"],
  q: ExecutionQuery,
  m: Mandate | undefined,
): ExecutionEvaluation["reason"] {
  const c = checks;
  if (!c.lifecycle.pass) {
    const status = c.lifecycle.status as MandateStatus;
    const text: Record<MandateStatus, string> = {
      none: `principal ${String(q.principal)} has granted agent ${String(q.agent)} no mandate`,
      revoked: "the mandate is revoked",
      pending: `the mandate is not valid before ${m?.validFrom} (pending)`,
      expired: `the mandate expired at ${m?.validUntil}`,
      active: "",
    };
    return { check: "lifecycle", code: status === "none" ? "no_mandate" : status, message: text[status] };
  }
  if (!c.freeze.pass)
    return { check: "freeze", code: "frozen", message: `agent ${String(q.agent)} is frozen by an enforcer` };
  if (!c.asset.pass)
    return {
      check: "asset",
      code: "asset_mismatch",
      message: `asset ${String(c.asset.asset)} is not the mandate's asset ${String(c.asset.mandateAsset)}`,
    };
  if (!c.action.pass)
    return {
      check: "action",
      code: "action_not_enabled",
      message: `action ${String(q.action)} is not enabled by the mandate`,
    };
  if (!c.transactionCap.pass) {
    return {
      check: "transactionCap",
      code: "exceeds_transaction_cap",
      message: `amount ${String(q.amount)} is over the per-transaction cap ${String(c.transactionCap.maxTransactionValue)}`,
    };
  }
  if (!c.cumulativeCap.pass) {
    return {
      check: "cumulativeCap",
      code: "exceeds_cumulative_cap",
      message: `amount ${String(q.amount)} is over what remains of the cumulative cap (${String(c.cumulativeCap.remainingCumulativeValue)} of ${String(c.cumulativeCap.maxCumulativeValue)}; ${String(c.cumulativeCap.cumulativeUsed)} used)`,
    };
  }
  if (!c.compliance.pass) {
    return {
      check: "compliance",
      code: "not_compliant",
      message: `principal ${String(q.principal)} is not compliant at its compliance provider (${String(c.compliance.reason)})`,
    };
  }
  return null;
}

/** A signature deadline must lie ahead of the chain's clock, at most 30 days. */
export async function requireDeadline(chain: Chain, deadline: number, field = "deadline"): Promise<number> {
  const now = await chainNow(chain);
  if (deadline <= now) throw badRequest(`${field} ${deadline} has passed (chain time is ${now})`, { field, now });
  if (deadline > now + MAX_DEADLINE_SECONDS)
    throw badRequest(`${field} ${deadline} is more than 30 days after the chain's time ${now}`, { field, now });
  return now;
}

// ---------------------------------------------------------------------------------------------------------------
// Simulation and revert reasons

const REVERT_TEXT: Record<string, string> = {
  ZeroComplianceProvider: "complianceProvider must not be the zero address",
  MandateAlreadyActive:
    "the agent already holds an active or pending mandate from this principal; revoke it (or let it expire) before granting again",
  NoActiveMandate: "there is no mandate to act on (none, revoked, or, for extend, expired)",
  PrincipalNotEligible: "the principal is not eligible at the compliance provider under this identityRef",
  InvalidExpiry: "validUntil must be in the future and after validFrom (after the current validUntil when extending)",
  NotPrincipal: "only the principal may send this directly",
  NotAuthorized: "only the principal or an operator it approved may send this directly",
  SignatureExpired: "the signature's deadline has passed",
  InvalidSignature: "the signature is not the principal's over these parameters and its current nonce",
  UnauthorizedRecorder: "the executor lacks RECORDER_ROLE on the registry (its set-up is incomplete)",
  NotExecutable: "the mandate does not allow this execution",
  ExceedsTransactionCap: "the amount is over the per-transaction cap",
  ExceedsCumulativeCap: "the amount is over what remains of the cumulative cap",
  AdminEnforcerOverlap: "one account may not hold both the registry admin and the enforcer role",
  ZeroIdentityRef: "identityRef must not be zero",
  NotActive: "the principal has no active eligibility record (never granted, or already revoked)",
  UnsupportedAction: "the executor does not support this selector",
  InvalidData: "the calldata is too short for its selector or registered amount argument",
  CannotExecute: "the registry's canExecute refused the execution",
  AccessControlUnauthorizedAccount: "the sender lacks the required role",
  OwnableUnauthorizedAccount: "the sender is not the owner",
};

/** A revert as "ErrorName(args)" plus a sentence; CallFailed carries the executed call's own revert, decoded. */
export function describeRevert(data: string | undefined): { error: string; message: string } {
  const decoded =
    decodeRevert(data) ?? (data && data !== "0x" ? `unknown error ${data.slice(0, 10)}` : "reverted without a reason");
  const name = decoded.split("(")[0];
  if (name === "CallFailed" && data) {
    const [inner] = agentExecutorInterface.decodeErrorResult("CallFailed", data);
    const innerDecoded =
      decodeRevert(inner) ??
      (inner && inner !== "0x" ? `unknown error ${String(inner).slice(0, 10)}` : "reverted without a reason");
    return { error: `CallFailed(${innerDecoded})`, message: `the executed call reverted: ${innerDecoded}` };
  }
  return { error: decoded, message: REVERT_TEXT[name] ? `${REVERT_TEXT[name]} (${decoded})` : decoded };
}

/**
 * eth_call of the transaction the prepare will return, from its sender: a revert is the client's 400 with the
 * decoded reason (token-level refusals of an executed call included), before anything is stored or paid.
 */
export async function simulate(
  chain: Chain,
  call: { from: string; to: string; data: string },
  what: string,
): Promise<string> {
  try {
    return await chain.provider.call({ from: call.from, to: call.to, data: call.data });
  } catch (error) {
    const data = revertDataOf(error);
    if (data !== undefined || (error as { code?: string }).code === "CALL_EXCEPTION") {
      const reason = describeRevert(data);
      throw preflightError(`${what} would revert: ${reason.message}`, {
        reason: reason.error,
        ...(data ? { revertData: data } : {}),
      });
    }
    throw new ApiError(
      "CHAIN_READ_FAILED",
      `Simulating ${what} on chain ${chain.chainId} failed: ${shortMessage(error)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Executors

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

/** The ComplianceProvider's ReasonCode enumeration, in order (name = code). */
export const REASONS = [
  "COMPLIANT",
  "KYC_EXPIRED",
  "AML_FLAG",
  "NOT_ACCREDITED",
  "NOT_QUALIFIED",
  "JURISDICTION_BLOCKED",
  "IDENTITY_NOT_FOUND",
  "ATTESTATION_REVOKED",
  "OTHER",
] as const;
export type ReasonName = (typeof REASONS)[number];
