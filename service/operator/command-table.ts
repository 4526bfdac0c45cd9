import { isAddress } from "ethers";
import { z } from "zod";
import { CREDIT_METHODS, type AdminCommand } from "./commands";
import { PLANS } from "../model/plans";
import { KYC_STATUSES } from "../store/kyc";
import { OPERATOR_ROLES } from "../store/operators";
import { keySourceOf, passwordOf, signerScopeOf } from "./flag-values";

/**
 * The admin tool's commands: each one's flags, each flag's rule (zod), and what the command becomes. The parser and the
 * help text (arguments.ts) both read this one table.
 */

/** `rams setup-executor` runs its chain steps in the tool itself (keys of this process) before recording through the store. */
export interface SetupExecutorCommand {
  command: "rams.setup-executor";
  flags: Record<string, string>;
  selectors: string[];
}
export type CliCommand = AdminCommand | SetupExecutorCommand;

interface Flag {
  schema: z.ZodType;
  /** Shown in the usage line: `--email E`. */
  placeholder: string;
  required?: boolean;
  /** May be given several times (collected in order). */
  repeated?: boolean;
  /** A switch: given without a value (`--all-keys`), true when present. */
  boolean?: boolean;
}

export interface CommandSpec {
  name: string;
  about: string;
  flags: Record<string, Flag>;
  /** The flag a bare argument stands for (`keys revoke <keyId>` is `--key-id`). */
  positional?: string;
  build(values: Record<string, unknown>): CliCommand;
}

const oneOf = (values: readonly string[], what: string) =>
  z
    .string()
    .refine((v) => values.includes(v), { message: `must be one of ${values.join(", ")}${what ? ` (${what})` : ""}` });
const email = z.string().regex(/^[^@\s]+@[^@\s]+$/, "must be an e-mail address");
const keyId = z.string().regex(/^[0-9a-f]{16}$/, "must be a key id: 16 hex characters, as `keys list` shows them");
const address = z.string().refine((v) => isAddress(v), "must be a 0x-prefixed 20-byte hex address");
const positiveInteger = z
  .string()
  .regex(/^[1-9]\d{0,15}$/, "must be a positive whole number")
  .transform(Number);
const usdc = z.string().regex(/^\d+(\.\d{1,6})?$/, "must be a USDC amount with at most 6 decimals (e.g. 0.25)");
const text = z.string().min(1, "must not be empty");

/** The admin tool's commands; `operations` are the names with a price (app.ts pricedOperations). */
export function commandTable(operations: string[]): CommandSpec[] {
  const flag = (schema: z.ZodType, placeholder: string, more: Partial<Flag> = {}): Flag => ({
    schema,
    placeholder,
    ...more,
  });
  return [
    {
      name: "keys create",
      about: "create an API key (shown once)",
      flags: {
        email: flag(email, "E", { required: true }),
        plan: flag(oneOf(PLANS, ""), PLANS.join("|"), { required: true }),
      },
      build: (v) => ({ command: "keys.create", email: v.email as string, plan: v.plan as string }),
    },
    {
      name: "keys list",
      about: "list the keys with their credits (never the keys themselves)",
      flags: {},
      build: () => ({ command: "keys.list" }),
    },
    {
      name: "keys revoke",
      about: "revoke a key",
      flags: { "key-id": flag(keyId, "K", { required: true }) },
      positional: "key-id",
      build: (v) => ({ command: "keys.revoke", keyId: v["key-id"] as string }),
    },
    {
      name: "keys bind-email",
      about: "let key K act on the tokens of tokenizer e-mail E too",
      flags: { "key-id": flag(keyId, "K", { required: true }), email: flag(email, "E", { required: true }) },
      build: (v) => ({ command: "keys.bind-email", keyId: v["key-id"] as string, email: v.email as string }),
    },
    {
      name: "keys unbind-email",
      about: "undo a bind-email",
      flags: { "key-id": flag(keyId, "K", { required: true }), email: flag(email, "E", { required: true }) },
      build: (v) => ({ command: "keys.unbind-email", keyId: v["key-id"] as string, email: v.email as string }),
    },
    {
      name: "credits add",
      about: "top up one method's credits of a key",
      flags: {
        "key-id": flag(keyId, "K", { required: true }),
        method: flag(oneOf(CREDIT_METHODS, ""), "M", { required: true }),
        amount: flag(positiveInteger, "N", { required: true }),
      },
      build: (v) => ({
        command: "credits.add",
        keyId: v["key-id"] as string,
        method: v.method as string,
        amount: v.amount as number,
      }),
    },
    {
      name: "signers add",
      about: "whitelist a signer wallet for one key (--key-id), or for every key and payers without one (--all-keys)",
      flags: {
        address: flag(address, "A", { required: true }),
        "key-id": flag(keyId, "K"),
        "all-keys": flag(z.literal(true), "", { boolean: true }),
      },
      positional: "address",
      build: (v) => ({ command: "signers.add", address: v.address as string, ...signerScopeOf("signers add", v) }),
    },
    {
      name: "signers remove",
      about: "remove a signer from a key's whitelist (--key-id), or from the deployment-wide one (--all-keys)",
      flags: {
        address: flag(address, "A", { required: true }),
        "key-id": flag(keyId, "K"),
        "all-keys": flag(z.literal(true), "", { boolean: true }),
      },
      positional: "address",
      build: (v) => ({
        command: "signers.remove",
        address: v.address as string,
        ...signerScopeOf("signers remove", v),
      }),
    },
    {
      name: "signers list",
      about: "the whitelisted signers, each with its key (or allKeys); --key-id: those one key may use",
      flags: { "key-id": flag(keyId, "K") },
      build: (v) => ({ command: "signers.list", keyId: v["key-id"] as string | undefined }),
    },
    {
      name: "prices set",
      about: "set an operation's x402 price in this ENVIRONMENT",
      flags: {
        operation: flag(oneOf(operations, ""), "OP", { required: true }),
        amount: flag(usdc, "USDC", { required: true }),
      },
      build: (v) => ({ command: "prices.set", operation: v.operation as string, amount: v.amount as string }),
    },
    {
      name: "prices list",
      about: "the default prices and the stored overrides",
      flags: {},
      build: () => ({ command: "prices.list" }),
    },
    {
      name: "kyc list",
      about: "investors' onboarding records",
      flags: {
        status: flag(oneOf(KYC_STATUSES, ""), KYC_STATUSES.join("|")),
        email: flag(email, "E"),
        "key-id": flag(keyId, "K"),
      },
      build: (v) => ({
        command: "kyc.list",
        status: v.status as string | undefined,
        email: v.email as string | undefined,
        keyId: v["key-id"] as string | undefined,
      }),
    },
    {
      name: "kyc approve",
      about: "approve an investor",
      flags: { email: flag(email, "E", { required: true }), "key-id": flag(keyId, "K") },
      positional: "email",
      build: (v) => ({ command: "kyc.approve", email: v.email as string, keyId: v["key-id"] as string | undefined }),
    },
    {
      name: "kyc reject",
      about: "reject an investor, with the reason",
      flags: {
        email: flag(email, "E", { required: true }),
        reason: flag(text, '"why"', { required: true }),
        "key-id": flag(keyId, "K"),
      },
      positional: "email",
      build: (v) => ({
        command: "kyc.reject",
        email: v.email as string,
        reason: v.reason as string,
        keyId: v["key-id"] as string | undefined,
      }),
    },
    {
      name: "rams setup-executor",
      about: "deploy and set up a principal's AgentExecutor (chain steps with the RAMS_* keys), then record it",
      flags: {
        principal: flag(address, "P", { required: true }),
        selector: flag(text, "transferFrom:2", { required: true, repeated: true }),
        owner: flag(address, "O"),
        asset: flag(address, "A"),
        allowance: flag(z.string().regex(/^\d+$/, "must be a whole number of the asset's smallest unit"), "N"),
        enforcer: flag(address, "E"),
        "identity-ref": flag(z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes of hex"), "R"),
        "expires-at": flag(z.string().regex(/^\d+$/, "must be a unix time in seconds"), "T"),
        executor: flag(address, "X"),
        "chain-id": flag(z.string().regex(/^\d+$/, "must be a decimal chain id"), "11155111"),
        registry: flag(address, "R"),
        compliance: flag(address, "C"),
      },
      build: (v) => ({
        command: "rams.setup-executor",
        selectors: v.selector as string[],
        flags: Object.fromEntries(
          Object.entries(v).filter(([name, value]) => name !== "selector" && value !== undefined),
        ) as Record<string, string>,
      }),
    },
    {
      name: "rams executors",
      about: "the recorded executors",
      flags: { "chain-id": flag(positiveInteger, "N") },
      build: (v) => ({ command: "rams.executors.list", chainId: v["chain-id"] as number | undefined }),
    },
    {
      name: "operators add",
      about:
        "create an operator of the console (/console) with a role; prints a one-time sign-in link unless --password-file gives its password",
      flags: {
        email: flag(email, "E", { required: true }),
        role: flag(oneOf(OPERATOR_ROLES, ""), OPERATOR_ROLES.join("|"), { required: true }),
        "password-file": flag(text, "FILE"),
      },
      build: (v) => ({ command: "operators.add", email: v.email as string, role: v.role as string, ...passwordOf(v) }),
    },
    {
      name: "operators list",
      about: "the console's operators and their roles",
      flags: {},
      build: () => ({ command: "operators.list" }),
    },
    {
      name: "operators remove",
      about: "remove an operator: its sessions end at once",
      flags: { email: flag(email, "E", { required: true }) },
      positional: "email",
      build: (v) => ({ command: "operators.remove", email: v.email as string }),
    },
    {
      name: "operators link",
      about: "print a new one-time sign-in link for an operator (CONSOLE_SIGN_IN_LINK_TTL)",
      flags: { email: flag(email, "E", { required: true }) },
      positional: "email",
      build: (v) => ({ command: "operators.link", email: v.email as string }),
    },
    {
      name: "operators password",
      about: "set an operator's password from a file (at least 12 characters)",
      flags: { email: flag(email, "E", { required: true }), "password-file": flag(text, "FILE", { required: true }) },
      positional: "email",
      build: (v) => ({ command: "operators.password", email: v.email as string, password: passwordOf(v).password! }),
    },
    {
      name: "operators revoke-sessions",
      about: "sign an operator out everywhere",
      flags: { email: flag(email, "E", { required: true }) },
      positional: "email",
      build: (v) => ({ command: "operators.revoke-sessions", email: v.email as string }),
    },
    {
      name: "audit list",
      about: "the audit log: every change operators made (console and this tool), newest first",
      flags: {
        limit: flag(positiveInteger, "N"),
        actor: flag(text, "E"),
        before: flag(z.string().regex(/^\d{1,18}$/, "must be an entry id"), "ID"),
      },
      build: (v) => ({
        command: "audit.list",
        limit: v.limit as number | undefined,
        actor: v.actor as string | undefined,
        before: v.before as string | undefined,
      }),
    },
    {
      name: "relayer-keys list",
      about: "the relayer's keys per chain: state (active, draining), origin, work left",
      flags: {},
      build: () => ({ command: "relayer-keys.list" }),
    },
    {
      name: "relayer-keys add",
      about:
        "add a relayer key on the running service (every instance takes it up within seconds): from a keystore, or on a PKCS#11 token",
      flags: {
        keystore: flag(text, "FILE"),
        "password-file": flag(text, "FILE"),
        "pkcs11-module": flag(text, "LIB"),
        "token-label": flag(text, "T"),
        "key-label": flag(text, "K"),
        "pin-file": flag(text, "FILE"),
        "chain-id": flag(positiveInteger, "N"),
      },
      build: (v) => ({
        command: "relayer-keys.add",
        source: keySourceOf(v),
        chainId: v["chain-id"] as number | undefined,
      }),
    },
    {
      name: "relayer-keys drain",
      about: "stop preparing new operations for a relayer key; what it has in flight is finished",
      flags: { address: flag(address, "A", { required: true }), "chain-id": flag(positiveInteger, "N") },
      positional: "address",
      build: (v) => ({
        command: "relayer-keys.drain",
        address: v.address as string,
        chainId: v["chain-id"] as number | undefined,
      }),
    },
    {
      name: "relayer-keys remove",
      about: "let go of a drained relayer key once it has no work left (refused, with the count, before)",
      flags: { address: flag(address, "A", { required: true }), "chain-id": flag(positiveInteger, "N") },
      positional: "address",
      build: (v) => ({
        command: "relayer-keys.remove",
        address: v.address as string,
        chainId: v["chain-id"] as number | undefined,
      }),
    },
  ];
}
