import { getAddress, isAddress } from "ethers";
import { FAUCET_CREDIT_METHOD, INVITATION_CREDIT_METHOD, PLANS, type Plan } from "../model/plans";
import { METERED_METHODS } from "../methods/metering";
import { badRequest, notFound } from "../errors";
import type { ApiKeys } from "../store/api-keys";
import type { Credits } from "../store/credits";
import type { SignerScope, Signers } from "../store/signers";
import type { Tokens } from "../store/tokens";
import { DEFAULT_PRICES, type Prices } from "../payments/pricing";
import type { RamsExecutors } from "../store/rams";
import type { Db } from "../store/db";
import { KYC_STATUSES, type KycInvestorRecord, type KycStatus, type KycStore } from "../store/kyc";
import type { KycLinks } from "../store/kyc-links";
import { OperatorKycProvider } from "../onboarding/provider";
import type { RelayerKeys } from "../store/relayer-keys";
import { runRelayerKeyCommand, type RelayerKeyCommand, type RelayerKeysContext } from "./relayer-keys";
import { ADMIN_TOOL_ACTOR, type AuditLog } from "../store/audit-log";
import type { OperatorSessions } from "../store/operator-sessions";
import type { Operators } from "../store/operators";
import { runOperatorCommand, type ConsoleLinkContext, type OperatorCommand } from "./operators";
import { auditOf } from "./audit";

/** What operator commands need; satisfied by the running service and by a direct database connection. */
export interface AdminStores {
  apiKeys: ApiKeys;
  credits: Credits;
  signers: Signers;
  prices: Prices;
  tokens: Tokens;
  ramsExecutors: RamsExecutors;
  db: Db;
  kyc: KycStore;
  kycLinks: KycLinks;
  relayerKeys: RelayerKeys;
  operators: Operators;
  operatorSessions: OperatorSessions;
  auditLog: AuditLog;
}

export type AdminCommand =
  | { command: "keys.create"; email: string; plan: string }
  | { command: "keys.list" }
  | { command: "keys.revoke"; keyId: string }
  | { command: "keys.bind-email"; keyId: string; email: string }
  | { command: "keys.unbind-email"; keyId: string; email: string }
  | { command: "credits.add"; keyId: string; method: string; amount: number }
  | { command: "signers.add"; address: string; keyId?: string; allKeys?: boolean }
  | { command: "signers.remove"; address: string; keyId?: string; allKeys?: boolean }
  | { command: "signers.list"; keyId?: string }
  | { command: "prices.set"; operation: string; amount: string }
  | { command: "prices.list" }
  | {
      command: "rams.executors.record";
      chainId: number;
      executor: string;
      registry: string;
      principal: string;
      owner: string;
    }
  | { command: "rams.executors.list"; chainId?: number }
  | { command: "kyc.list"; status?: string; email?: string; keyId?: string }
  | { command: "kyc.approve"; email: string; keyId?: string }
  | { command: "kyc.reject"; email: string; reason: string; keyId?: string }
  | RelayerKeyCommand
  | OperatorCommand;

export const CREDIT_METHODS = [...METERED_METHODS, FAUCET_CREDIT_METHOD, INVITATION_CREDIT_METHOD];

/** What commands check against that lives above this layer: the operations with a price (app.ts pricedOperations). */
export interface AdminContext {
  operations: string[];
  /** The relayer's configured keys (and, through the service, how it holds each): what relayer-keys commands check against. */
  relayer?: RelayerKeysContext;
  /** Where operators' sign-in links point and how long they last (operators add, operators link). */
  console?: ConsoleLinkContext;
  /** Who makes the change, for the audit log: an operator's e-mail in the console; the admin tool by default. */
  actor?: string;
}

/** An onboarding record as the operator sees it (the proof's signature and the link tokens stay in the database). */
function kycRecordView(r: KycInvestorRecord) {
  return {
    email: r.email,
    keyId: r.apiKeyId,
    status: r.status,
    needKyc: r.needKyc,
    firstName: r.firstName,
    lastName: r.lastName,
    country: r.country,
    walletAddress: r.walletAddress,
    signedMessage: r.proofMessage,
    submittedAt: r.submittedAt,
    reviewedBy: r.reviewedBy,
    decidedBy: r.decidedBy,
    reviewedAt: r.reviewedAt,
    reason: r.reviewReason,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/**
 * For whom a signers command acts: one key (--key-id, which must exist), or every key (--all-keys, the operator's
 * explicit choice of a deployment-wide whitelist); exactly one of them.
 */
async function signerScope(stores: AdminStores, cmd: { keyId?: string; allKeys?: boolean }): Promise<SignerScope> {
  if (cmd.allKeys && cmd.keyId !== undefined) throw badRequest("give keyId or allKeys, not both", { field: "keyId" });
  if (cmd.allKeys) return "all-keys";
  if (cmd.keyId === undefined)
    throw badRequest(
      "keyId is required: the key that may prepare with this signer (or allKeys: every key, and payers without one)",
      { field: "keyId" },
    );
  if (!(await stores.apiKeys.get(cmd.keyId))) throw notFound(`No key with id ${cmd.keyId}`, { field: "keyId" });
  return { keyId: cmd.keyId };
}

/**
 * Runs one operator command (printed as JSON by the admin tool; the console calls the same commands). A command that
 * changes something is written to the audit log with what it changed, before and after (audit.ts), once it
 * succeeded.
 */
export async function runAdminCommand(
  stores: AdminStores,
  cmd: AdminCommand,
  context: AdminContext = { operations: [] },
): Promise<unknown> {
  const change = auditOf(cmd);
  if (!change) return commandResult(stores, cmd, context);
  const before = await change.before(stores);
  const result = await commandResult(stores, cmd, context);
  await stores.auditLog.record({
    actor: context.actor ?? ADMIN_TOOL_ACTOR,
    action: cmd.command,
    target: change.target,
    before,
    after: change.after(result),
  });
  return result;
}

/** What one command does and answers (runAdminCommand audits it). */
async function commandResult(stores: AdminStores, cmd: AdminCommand, context: AdminContext): Promise<unknown> {
  switch (cmd.command) {
    case "operators.add":
    case "operators.list":
    case "operators.remove":
    case "operators.link":
    case "operators.password":
    case "operators.revoke-sessions":
    case "audit.list":
      if (!context.console)
        throw badRequest(
          "operators commands need the console's base URL and link lifetime (the service's configuration)",
          { field: "command" },
        );
      return runOperatorCommand(stores, cmd, context.console);
    case "relayer-keys.list":
    case "relayer-keys.add":
    case "relayer-keys.drain":
    case "relayer-keys.remove":
      if (!context.relayer)
        throw badRequest("relayer-keys commands need the service's relayer configuration", { field: "command" });
      return runRelayerKeyCommand(stores.relayerKeys, cmd, context.relayer);
    case "keys.create": {
      if (!/^[^@\s]+@[^@\s]+$/.test(cmd.email ?? ""))
        throw badRequest("--email must be an e-mail address", { field: "email" });
      if (!PLANS.includes(cmd.plan as Plan))
        throw badRequest(`--plan must be one of ${PLANS.join(", ")}`, { field: "plan" });
      const { key, record } = await stores.apiKeys.create({ email: cmd.email, plan: cmd.plan as Plan });
      return {
        ...record,
        apiKey: key,
        credits: await stores.credits.balances(record.id),
        note: "the key is shown once; only its hash is stored",
      };
    }
    case "keys.list": {
      const keys = await stores.apiKeys.list();
      return Promise.all(keys.map(async (k) => ({ ...k, credits: await stores.credits.balances(k.id) })));
    }
    case "keys.revoke": {
      if (!(await stores.apiKeys.revoke(cmd.keyId))) throw notFound(`No key with id ${cmd.keyId}`, { field: "keyId" });
      return stores.apiKeys.get(cmd.keyId);
    }
    case "keys.bind-email":
    case "keys.unbind-email": {
      if (!(await stores.apiKeys.get(cmd.keyId))) throw notFound(`No key with id ${cmd.keyId}`, { field: "keyId" });
      if (!/^[^@\s]+@[^@\s]+$/.test(cmd.email ?? ""))
        throw badRequest("--email must be an e-mail address", { field: "email" });
      if (cmd.command === "keys.bind-email") {
        await stores.tokens.bindEmail(cmd.email, cmd.keyId);
        return {
          keyId: cmd.keyId,
          email: cmd.email.toLowerCase(),
          bound: true,
          keys: await stores.tokens.emailKeys(cmd.email),
        };
      }
      if (!(await stores.tokens.unbindEmail(cmd.email, cmd.keyId)))
        throw notFound(`${cmd.email} is not bound to key ${cmd.keyId}`, { field: "email" });
      return {
        keyId: cmd.keyId,
        email: cmd.email.toLowerCase(),
        bound: false,
        keys: await stores.tokens.emailKeys(cmd.email),
      };
    }
    case "credits.add": {
      if (!(await stores.apiKeys.get(cmd.keyId))) throw notFound(`No key with id ${cmd.keyId}`, { field: "keyId" });
      if (!CREDIT_METHODS.includes(cmd.method))
        throw badRequest(`--method must be one of ${CREDIT_METHODS.join(", ")}`, { field: "method" });
      if (!Number.isInteger(cmd.amount) || cmd.amount <= 0)
        throw badRequest("--amount must be a positive integer", { field: "amount" });
      const balance = await stores.credits.add(cmd.keyId, cmd.method, cmd.amount);
      return { keyId: cmd.keyId, method: cmd.method, balance };
    }
    case "signers.add":
    case "signers.remove": {
      if (!isAddress(cmd.address ?? ""))
        throw badRequest("address must be a 0x-prefixed 20-byte hex address", { field: "address" });
      const address = getAddress(cmd.address.toLowerCase());
      const scope = await signerScope(stores, cmd);
      const shown = scope === "all-keys" ? { allKeys: true } : { keyId: scope.keyId };
      if (cmd.command === "signers.add") {
        await stores.signers.add(address, scope);
        return { address, ...shown, whitelisted: true };
      }
      if (!(await stores.signers.remove(address, scope))) {
        throw notFound(
          `${address} is not a whitelisted signer ${scope === "all-keys" ? "for every key" : `of key ${scope.keyId}`}`,
          { field: "address" },
        );
      }
      return { address, ...shown, whitelisted: false };
    }
    case "signers.list":
      if (cmd.keyId !== undefined && !(await stores.apiKeys.get(cmd.keyId)))
        throw notFound(`No key with id ${cmd.keyId}`, { field: "keyId" });
      return (await stores.signers.list({ keyId: cmd.keyId })).map((e) =>
        e.keyId ? { address: e.address, keyId: e.keyId } : { address: e.address, allKeys: true },
      );
    case "prices.set": {
      if (!context.operations.includes(cmd.operation))
        throw badRequest(`--operation must be one of ${context.operations.join(", ")}`, { field: "operation" });
      if (!/^\d+(\.\d{1,6})?$/.test(cmd.amount ?? ""))
        throw badRequest("--amount must be a USDC amount with at most 6 decimals", { field: "amount" });
      const amount = await stores.prices.set(cmd.operation, cmd.amount);
      return { operation: cmd.operation, amount: cmd.amount, amountRaw: amount.toString() };
    }
    case "prices.list":
      return { defaults: DEFAULT_PRICES, overrides: await stores.prices.overrides() };
    case "rams.executors.record": {
      // The chain steps ran in the CLI (setupExecutor); this records the principal's default executor.
      for (const field of ["executor", "registry", "principal", "owner"] as const) {
        if (!isAddress(cmd[field] ?? ""))
          throw badRequest(`${field} must be a 0x-prefixed 20-byte hex address`, { field });
      }
      if (!Number.isInteger(cmd.chainId) || cmd.chainId <= 0)
        throw badRequest("chainId must be a positive integer", { field: "chainId" });
      return stores.ramsExecutors.record(cmd);
    }
    case "rams.executors.list":
      return stores.ramsExecutors.list(cmd.chainId);
    case "kyc.list": {
      if (cmd.status !== undefined && !KYC_STATUSES.includes(cmd.status as KycStatus)) {
        throw badRequest(`--status must be one of ${KYC_STATUSES.join(", ")}`, { field: "status" });
      }
      const records = await stores.kyc.list({
        status: cmd.status as KycStatus | undefined,
        email: cmd.email,
        keyId: cmd.keyId,
      });
      return records.map(kycRecordView);
    }
    case "kyc.approve":
    case "kyc.reject": {
      // The operator's provider; a vendor's provider would call the same transition from its webhook.
      const provider = new OperatorKycProvider(stores.db, stores.kyc, stores.kycLinks);
      const by = context.actor ?? ADMIN_TOOL_ACTOR;
      const decision =
        cmd.command === "kyc.approve"
          ? ({ decision: "approve", by } as const)
          : ({ decision: "reject", reason: cmd.reason, by } as const);
      return kycRecordView(await provider.decide({ email: cmd.email, keyId: cmd.keyId }, decision));
    }
  }
}
