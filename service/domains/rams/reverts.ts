import { agentExecutorInterface, decodeRevert, revertDataOf } from "../../chains/contracts";
import type { Chain } from "../../chains/registry";
import { ApiError, preflightError } from "../../errors";
import { shortMessage } from "./on-chain";
// ERC-8226 (RAMS) revert reasons: what each of the contracts' errors means, and the simulation of a prepared call.

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
