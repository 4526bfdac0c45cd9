import type { ApiKeys } from "../store/api-keys";
import type { Credits } from "../store/credits";
import type { KycStore } from "../store/kyc";
import type { Operators } from "../store/operators";
import type { Prices } from "../payments/pricing";
import type { RelayerKeys } from "../store/relayer-keys";
import type { Signers } from "../store/signers";
import type { Tokens } from "../store/tokens";

/** What the audit of an admin command reads to know what it is about to change. */
export interface AuditedStores {
  apiKeys: ApiKeys;
  credits: Credits;
  signers: Signers;
  prices: Prices;
  tokens: Tokens;
  kyc: KycStore;
  relayerKeys: RelayerKeys;
  operators: Operators;
}

/** How one change is written to the audit log: what it is about, what it was before, what of its answer to keep. */
export interface AuditedChange {
  target: string | null;
  before(stores: AuditedStores): Promise<unknown>;
  after(result: unknown): unknown;
}

type Command = { command: string } & Record<string, any>;

const nothing = async () => null;
const as = (result: unknown) => result;
/** The answer without what only its caller may see: an API key, a sign-in link (each shown once, never kept). */
const withoutSecrets = (result: unknown) => {
  if (!result || typeof result !== "object") return result;
  const { apiKey: _key, signInLink, ...rest } = result as Record<string, unknown>;
  return {
    ...rest,
    ...(signInLink ? { signInLink: { expiresAt: (signInLink as { expiresAt: string }).expiresAt } } : {}),
  };
};
/**
 * An investor's onboarding as the audit keeps it: its record's id, key and status, never its e-mail, names, wallet or
 * a rejection's reason (KYC details stay sealed in their record: issue 41).
 */
const kycStates = (s: AuditedStores, c: Command) =>
  s.kyc
    .list({ email: c.email, keyId: c.keyId })
    .then((r) => r.map((i) => ({ investorId: i.id, keyId: i.apiKeyId, status: i.status })));
const kycOutcome = (result: unknown) => {
  const { keyId, status, reviewedBy, reviewedAt } = (result ?? {}) as Record<string, unknown>;
  return { keyId, status, reviewedBy, reviewedAt };
};
const signerEntries = (s: AuditedStores, c: Command) =>
  s.signers
    .list(c.keyId ? { keyId: c.keyId } : {})
    .then((l) => l.filter((e) => e.address.toLowerCase() === String(c.address).toLowerCase()));

/**
 * The audit of each admin command that changes something (undefined: it reads only). The "before" is read just before
 * the command runs, the "after" is its answer (secrets left out); the actor is the console's operator or the admin tool.
 */
export function auditOf(cmd: Command): AuditedChange | undefined {
  switch (cmd.command) {
    case "keys.create":
      return { target: cmd.email, before: nothing, after: withoutSecrets };
    case "keys.revoke":
      return { target: cmd.keyId, before: (s) => s.apiKeys.get(cmd.keyId).then((k) => k ?? null), after: as };
    case "keys.bind-email":
    case "keys.unbind-email":
      return { target: cmd.keyId, before: (s) => s.tokens.emailKeys(cmd.email), after: as };
    case "credits.add":
      return {
        target: cmd.keyId,
        before: (s) => s.credits.balances(cmd.keyId).then((b) => ({ method: cmd.method, balance: b[cmd.method] ?? 0 })),
        after: as,
      };
    case "signers.add":
    case "signers.remove":
      return { target: cmd.address, before: (s) => signerEntries(s, cmd), after: as };
    case "prices.set":
      return {
        target: cmd.operation,
        before: (s) => s.prices.overrides().then((o) => o.find((p) => p.operation === cmd.operation) ?? null),
        after: as,
      };
    case "kyc.approve":
    case "kyc.reject":
      return { target: cmd.keyId ?? null, before: (s) => kycStates(s, cmd), after: kycOutcome };
    case "rams.executors.record":
      return { target: cmd.principal, before: nothing, after: as };
    case "relayer-keys.add":
    case "relayer-keys.drain":
    case "relayer-keys.remove":
      return { target: cmd.address ?? null, before: (s) => s.relayerKeys.list(), after: as };
    case "operators.add":
    case "operators.remove":
    case "operators.link":
    case "operators.password":
    case "operators.revoke-sessions":
      return {
        target: cmd.email,
        before: (s) => s.operators.byEmail(cmd.email ?? "").then((o) => o ?? null),
        after: withoutSecrets,
      };
    default:
      return undefined;
  }
}
