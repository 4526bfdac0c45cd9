import { securityTokenInterface } from "../chains/contracts";
import type { Log, LogDescription, TransactionReceipt } from "ethers";
import { getAddress, ZeroHash } from "ethers";
import { emitEvent } from "../events/emit";
import type { Queryable } from "../store/db";
import type { TokenRecord } from "../store/tokens";
import type { TokenControl } from "../store/token-controls";
import type { TokenControlEventType } from "../events/types";
import { fromUnits } from "../model/units";
import { TOKEN_ROLES } from "../domains/tokenization/roles";
import type { ConfirmedBatch } from "./types";

type ControlToken = Pick<TokenRecord, "id" | "tokenAddress" | "symbol" | "decimals" | "apiKeyId">;

const ROLE_NAMES = new Map<string, string>(Object.entries(TOKEN_ROLES).map(([name, role]) => [role.hash, name]));

/** An issuer-control event of a SecurityToken as a record and the webhook type it is announced with; undefined for other events. */
function controlOf(
  event: LogDescription,
  receipt: TransactionReceipt,
  log: Log,
): { control: TokenControl; type: TokenControlEventType } | undefined {
  const lifecycle = lifecycleControlOf(event, receipt, log);
  if (lifecycle) return lifecycle;
  const at = { txHash: receipt.hash, logIndex: log.index, blockNumber: receipt.blockNumber };
  const none = { account: null, counterparty: null, amount: null, role: null, agent: null };
  const a = event.args;
  switch (event.name) {
    case "Frozen":
      return {
        type: "token.frozen",
        control: { ...none, ...at, action: "frozen", account: a.account, amount: a.amount.toString() },
      };
    case "AddressFrozen":
      return {
        type: "token.address_frozen",
        control: {
          ...none,
          ...at,
          action: a.isFrozen ? "address_frozen" : "address_unfrozen",
          account: a.account,
          agent: a.agent,
        },
      };
    case "ForcedTransfer":
      return {
        type: "token.forced_transfer",
        control: {
          ...none,
          ...at,
          action: "forced_transfer",
          account: a.from,
          counterparty: a.to,
          amount: a.amount.toString(),
          agent: receipt.from,
        },
      };
    case "RecoverySuccess":
      return {
        type: "token.wallet_recovered",
        control: {
          ...none,
          ...at,
          action: "recovery",
          account: a.lostWallet,
          counterparty: a.newWallet,
          agent: a.agent,
        },
      };
    case "Paused":
    case "Unpaused":
      return {
        type: "token.paused",
        control: { ...none, ...at, action: event.name === "Paused" ? "paused" : "unpaused", agent: a.account },
      };
    case "RoleGranted":
    case "RoleRevoked":
      return {
        type: "token.role_changed",
        control: {
          ...none,
          ...at,
          action: event.name === "RoleGranted" ? "role_granted" : "role_revoked",
          account: a.account,
          role: ROLE_NAMES.get(a.role) ?? a.role,
          agent: a.sender,
        },
      };
    default:
      return undefined;
  }
}

/** The two-step controls: a recovery requested or cancelled, a tokenizer handover's steps, an upgrade's steps. */
function lifecycleControlOf(
  event: LogDescription,
  receipt: TransactionReceipt,
  log: Log,
): { control: TokenControl; type: TokenControlEventType } | undefined {
  const at = { txHash: receipt.hash, logIndex: log.index, blockNumber: receipt.blockNumber };
  const none = { account: null, counterparty: null, amount: null, role: null, agent: null };
  const a = event.args;
  switch (event.name) {
    case "RoleGranted":
      // The handover's second step: the default admin is the tokenizer (other grants are role_granted).
      if (a.role !== ZeroHash) return undefined;
      return {
        type: "token.tokenizer_changed",
        control: { ...none, ...at, action: "tokenizer_changed", account: a.account, agent: a.sender },
      };
    case "RecoveryRequested":
    case "RecoveryCancelled":
      return {
        type: "token.recovery_pending",
        control: {
          ...none,
          ...at,
          action: event.name === "RecoveryRequested" ? "recovery_requested" : "recovery_cancelled",
          account: a.lostWallet,
          counterparty: a.newWallet,
          agent: event.name === "RecoveryRequested" ? a.agent : a.by,
        },
      };
    case "DefaultAdminTransferScheduled":
      return {
        type: "token.tokenizer_changed",
        control: { ...none, ...at, action: "tokenizer_transfer_started", account: a.newAdmin, agent: receipt.from },
      };
    case "UpgradeScheduled":
    case "UpgradeCancelled":
      return {
        type: "token.upgrade",
        control: {
          ...none,
          ...at,
          action: event.name === "UpgradeScheduled" ? "upgrade_scheduled" : "upgrade_cancelled",
          account: a.implementation,
          agent: a.by,
        },
      };
    case "Upgraded":
      return {
        type: "token.upgrade",
        control: { ...none, ...at, action: "upgraded", account: a.implementation, agent: receipt.from },
      };
    default:
      return undefined;
  }
}

/**
 * Records an issuer control a receipt proves (token_controls) and announces it to the token's key (the issuer's,
 * whoever's key sent it: an agent acts for the issuer). Returns false for events that are not controls.
 */
export async function recordControlEvent(
  tx: Queryable,
  batch: ConfirmedBatch,
  token: ControlToken,
  event: LogDescription,
  receipt: TransactionReceipt,
  log: Log,
): Promise<boolean> {
  const found = controlOf(event, receipt, log);
  if (!found) return false;
  // A token's creation sets its implementation (Upgraded) and its tokenizer (the default admin's RoleGranted): that is
  // the token.created event's, not an upgrade or a handover.
  if (
    (found.control.action === "upgraded" || found.control.action === "tokenizer_changed") &&
    createdIn(receipt, log.address)
  )
    return true;
  const { control, type } = found;
  await batch.services.tokenControls.record(tx, token.id, control);
  const checksum = (v: string | null) => (v === null ? null : getAddress(v));
  await emitEvent(tx, {
    type,
    apiKeyId: token.apiKeyId ?? batch.apiKeyId,
    txId: batch.txId,
    chainId: batch.chain.chainId,
    hash: receipt.hash,
    data: {
      tokenSymbol: token.symbol,
      tokenAddress: getAddress(token.tokenAddress),
      action: control.action,
      account: checksum(control.account),
      counterparty: checksum(control.counterparty),
      amount: control.amount === null ? null : fromUnits(BigInt(control.amount), token.decimals),
      amountRaw: control.amount,
      role: control.role,
      agent: checksum(control.agent),
      txHash: receipt.hash,
      blockNumber: receipt.blockNumber,
    },
  });
  return true;
}

const INITIALIZED = securityTokenInterface.getEvent("Initialized").topicHash;

/** Whether the receipt initialized the contract at `address` (a proxy made and initialized in it). */
function createdIn(receipt: TransactionReceipt, address: string): boolean {
  return receipt.logs.some((l) => l.address.toLowerCase() === address.toLowerCase() && l.topics[0] === INITIALIZED);
}
