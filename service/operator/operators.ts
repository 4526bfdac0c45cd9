import { hashPassword, passwordProblem } from "../auth/operator-passwords";
import { newConsoleToken } from "../auth/console-session";
import { badRequest, conflict, notFound } from "../errors";
import type { AuditLog } from "../store/audit-log";
import type { OperatorSessions } from "../store/operator-sessions";
import { OPERATOR_ROLES, type OperatorRecord, type OperatorRole, type Operators } from "../store/operators";

export type OperatorCommand =
  | { command: "operators.add"; email: string; role: string; password?: string }
  | { command: "operators.list" }
  | { command: "operators.remove"; email: string }
  | { command: "operators.link"; email: string }
  | { command: "operators.password"; email: string; password: string }
  | { command: "operators.revoke-sessions"; email: string }
  | { command: "audit.list"; limit?: number; before?: string; actor?: string };

/** Where sign-in links point and how long they last (the service's PUBLIC_BASE_URL and CONSOLE_SIGN_IN_LINK_TTL). */
export interface ConsoleLinkContext {
  /** The service's base URL: links are <baseUrl>/console/sign-in?token=… */
  baseUrl: string;
  linkTtlMs: number;
}

export type OperatorStores = { operators: Operators; operatorSessions: OperatorSessions; auditLog: AuditLog };

const EMAIL = /^[^@\s]+@[^@\s]+$/;

/**
 * `operators add|list|remove|link|password|revoke-sessions` and `audit list`: the console's accounts. An operator signs
 * in with a password (kept as an scrypt hash; one easy to guess is refused) or with a one-time link this command prints
 * (kept as its hash; it works once, until it expires). Removing an operator, revoking its sessions or setting its
 * password signs it out everywhere at once.
 */
export async function runOperatorCommand(
  stores: OperatorStores,
  cmd: OperatorCommand,
  links: ConsoleLinkContext,
): Promise<unknown> {
  switch (cmd.command) {
    case "operators.list":
      return stores.operators.list();
    case "audit.list":
      return stores.auditLog.list({ limit: cmd.limit ?? 50, before: cmd.before, actor: cmd.actor });
    case "operators.add": {
      const email = checkedEmail(cmd.email);
      if (!OPERATOR_ROLES.includes(cmd.role as OperatorRole))
        throw badRequest(`role must be one of ${OPERATOR_ROLES.join(", ")}`, { field: "role" });
      const passwordHash =
        cmd.password === undefined ? null : await hashPassword(await checkedPassword(cmd.password, email));
      const added = await stores.operators.add({ email, role: cmd.role as OperatorRole, passwordHash });
      if (!added)
        throw conflict(`An operator ${email} exists already (operators list); remove it first to change its role`, {
          field: "email",
        });
      return { ...added, ...(passwordHash ? {} : { signInLink: await signInLink(stores, added, links) }) };
    }
    case "operators.remove": {
      const removed = await stores.operators.remove(checkedEmail(cmd.email));
      if (!removed) throw notFound(`No operator ${cmd.email}`, { field: "email" });
      return { ...removed, removed: true };
    }
    case "operators.link":
      return {
        ...(await known(stores, cmd.email)),
        signInLink: await signInLink(stores, await known(stores, cmd.email), links),
      };
    case "operators.password": {
      // A password set for the operator (forgotten, or taken): whoever was signed in with the old one is signed out.
      const operator = await known(stores, cmd.email);
      await stores.operators.setPassword(
        operator.id,
        await hashPassword(await checkedPassword(cmd.password, operator.email)),
      );
      return { ...operator, hasPassword: true, sessionsRevoked: await stores.operatorSessions.revokeAll(operator.id) };
    }
    case "operators.revoke-sessions": {
      const operator = await known(stores, cmd.email);
      return { ...operator, sessionsRevoked: await stores.operatorSessions.revokeAll(operator.id) };
    }
  }
}

function checkedEmail(email: string): string {
  if (!EMAIL.test(email ?? "")) throw badRequest("email must be an e-mail address", { field: "email" });
  return email.toLowerCase();
}

/** A new password that is long and hard enough to guess, the operator's e-mail aside. */
async function checkedPassword(password: string, email: string): Promise<string> {
  const problem = await passwordProblem(password ?? "", [email]);
  if (problem) throw badRequest(`password ${problem}`, { field: "password" });
  return password;
}

async function known(stores: OperatorStores, email: string): Promise<OperatorRecord> {
  const operator = await stores.operators.byEmail(checkedEmail(email));
  if (!operator) throw notFound(`No operator ${email}`, { field: "email" });
  return operator;
}

/** A new one-time sign-in link for `operator` (its token is stored only as a hash: this answer is the one place it is). */
async function signInLink(
  stores: OperatorStores,
  operator: OperatorRecord,
  links: ConsoleLinkContext,
): Promise<{ url: string; expiresAt: string }> {
  const token = newConsoleToken();
  const expiresAt = new Date(Date.now() + links.linkTtlMs);
  await stores.operators.addLink(operator.id, token, expiresAt);
  return {
    url: `${links.baseUrl.replace(/\/$/, "")}/console/sign-in?token=${token}`,
    expiresAt: expiresAt.toISOString(),
  };
}
