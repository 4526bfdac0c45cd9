import { getAddress, ZeroAddress } from "ethers";
import type { Chain } from "../../chains/registry";
import { MAX_UINT256 } from "../../model/units";
import { eligibilityAtExecution } from "./compliance";
import { chainNow, mandateAt, onChain, type ContractRef } from "./on-chain";
// ERC-8226 (RAMS) mandates: what a mandate allows, read from the registry, and whether an execution passes its checks.

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
  /**
   * canExecute and the principal compliant: what ramsExecute's pre-check requires. This version's registry asks the
   * compliance provider itself, so the two agree; a registry allowed with RAMS_ALLOWED_CONTRACTS that checks compliance
   * at grant only (the ERC-8226 reference) is still held to it here.
   */
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
 * Every check the registry's canExecute makes, each with its result, in the registry's order of cost (compliance, an
 * external call, last: a revoked, expired or re-identified principal fails canExecute on chain and here, though the
 * mandate record is unchanged), and the registry's own canExecute.
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
    ? await eligibilityAtExecution(
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
