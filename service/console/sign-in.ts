import { csrfTokenOf, newConsoleToken, type SignedIn } from "../auth/console-session";
import { hashPassword, passwordProblem, verifyPassword } from "../auth/operator-passwords";
import { SignInLimiter, SignInLockedOut } from "../auth/sign-in-limits";
import { badRequest, unauthorized } from "../errors";
import type { LinkRefusal, OperatorRecord } from "../store/operators";
import type { Services } from "../usecases/services";
import type { ClientAddress } from "../wire/request";

/** A session just opened: what the sign-in answers, and the token its cookie carries. */
export interface Opened {
  operator: OperatorRecord;
  token: string;
  csrfToken: string;
  expiresAt: string;
}

const LINK_REFUSALS: Record<LinkRefusal, string> = {
  unknown:
    "This sign-in link is not valid: check that you copied all of it, or ask for a new one (npm run admin -- operators link <email>)",
  used: "This sign-in link was used already: each link signs in once; ask for a new one (npm run admin -- operators link <email>)",
  expired: "This sign-in link has expired: ask for a new one (npm run admin -- operators link <email>)",
};

/** How long after signing in with a one-time link a password may be set without the current one (the link was the proof). */
export const LINK_FRESH_MS = 10 * 60_000;

/** The audit log's actor for a sign-in whose e-mail is not known (a link nobody was given). */
const UNKNOWN_ACTOR = "unknown";

const limiters = new WeakMap<Services, SignInLimiter>();
const limiterOf = (services: Services) => {
  let limiter = limiters.get(services);
  if (!limiter) limiters.set(services, (limiter = new SignInLimiter(services.db)));
  return limiter;
};

/**
 * One authentication event in the audit log (console.sign-in, console.sign-in-failed, console.lockout,
 * console.sign-out): the e-mail it was for and the client's address as TRUST_PROXY names it; never a password or a
 * token.
 */
function auditAccess(
  services: Services,
  actor: string,
  action: string,
  client: ClientAddress,
  facts: Record<string, unknown> = {},
): Promise<void> {
  return services.auditLog.record({
    actor: actor.toLowerCase(),
    action,
    target: actor === UNKNOWN_ACTOR ? null : actor.toLowerCase(),
    after: { clientAddress: client.ip ?? null, ...facts },
  });
}

/** The limiter's admission; a refusal that begins a lockout is audited before it is answered. */
async function admitted(services: Services, client: ClientAddress, email: string | undefined): Promise<void> {
  try {
    await limiterOf(services).admit(client, email);
  } catch (error) {
    if (error instanceof SignInLockedOut && error.beginsLockout)
      await auditAccess(services, email ?? UNKNOWN_ACTOR, "console.lockout", client, { limit: error.limit });
    throw error;
  }
}

/**
 * Signs an operator in with its e-mail and password, or with a one-time link's token, and opens a session that ends
 * after CONSOLE_SESSION_TTL (or CONSOLE_SESSION_IDLE_TIMEOUT without use). Attempts are rate-limited
 * (sign-in limits); a wrong password and a wrong e-mail are refused alike, in the same time. Every sign-in, refusal
 * and lockout is in the audit log with the e-mail and the client's address; neither the password nor any token is
 * ever logged.
 */
export async function signIn(
  services: Services,
  client: ClientAddress,
  body: { email: string; password: string } | { token: string },
): Promise<Opened> {
  const limiter = limiterOf(services);
  const ttlMs = services.config.CONSOLE_SESSION_TTL;
  const token = newConsoleToken();
  if ("token" in body) {
    await admitted(services, client, undefined);
    const used = await services.db.transaction(async (q) => {
      const operator = await services.operators.useLink(q, body.token);
      if ("refused" in operator) return operator;
      return { operator, ...(await services.operatorSessions.open(q, operator.id, token, "link", ttlMs)) };
    });
    if ("refused" in used) {
      const lockout = await limiter.refusedLink(client);
      const actor = used.email ?? UNKNOWN_ACTOR;
      await auditAccess(services, actor, "console.sign-in-failed", client, { via: "link", reason: used.refused });
      if (lockout) await auditAccess(services, actor, "console.lockout", client, { via: "link", ...lockout });
      throw unauthorized(LINK_REFUSALS[used.refused], { field: "token", reason: used.refused });
    }
    services.logger.info({ operator: used.operator.email, via: "link" }, "operator signed in to the console");
    await auditAccess(services, used.operator.email, "console.sign-in", client, { via: "link" });
    return { operator: used.operator, token, csrfToken: csrfTokenOf(token), expiresAt: used.expiresAt };
  }
  await admitted(services, client, body.email);
  const found = await services.operators.withPassword(body.email);
  if (!(await verifyPassword(body.password, found?.passwordHash)) || !found) {
    const lockout = await limiter.refusedPassword(body.email);
    await auditAccess(services, body.email, "console.sign-in-failed", client, {
      via: "password",
      reason: found ? "wrong password" : "no such operator",
    });
    if (lockout) await auditAccess(services, body.email, "console.lockout", client, { via: "password", ...lockout });
    throw unauthorized("Wrong e-mail or password", { field: "password" });
  }
  const { expiresAt } = await services.operatorSessions.open(services.db, found.record.id, token, "password", ttlMs);
  services.logger.info({ operator: found.record.email, via: "password" }, "operator signed in to the console");
  await auditAccess(services, found.record.email, "console.sign-in", client, { via: "password" });
  return { operator: found.record, token, csrfToken: csrfTokenOf(token), expiresAt };
}

/** Ends the request's session (audited). */
export async function signOut(services: Services, signedIn: SignedIn, client: ClientAddress): Promise<void> {
  await services.operatorSessions.revoke(signedIn.token);
  await auditAccess(services, signedIn.operator.email, "console.sign-out", client);
}

/**
 * The signed-in operator sets its password (after signing in with a link, or to change it). An operator who has a
 * password gives the current one (a stolen session cannot make itself an account), unless this session was opened by
 * a one-time link within LINK_FRESH_MS (the link proved who it is: a forgotten password). The new one must be hard to
 * guess. Every other session of the operator ends with the change. Audited without either
 * password.
 */
export async function setOwnPassword(
  services: Services,
  signedIn: SignedIn,
  body: { password: string; currentPassword?: string },
  client: ClientAddress,
): Promise<{ operator: OperatorRecord; sessionsEnded: number }> {
  const { operator } = signedIn;
  const freshLink = signedIn.via === "link" && Date.now() - Date.parse(signedIn.createdAt) < LINK_FRESH_MS;
  if (operator.hasPassword && !freshLink) {
    if (!body.currentPassword)
      throw badRequest("currentPassword is required to change a password", { field: "currentPassword" });
    // Guesses of the current password count as refused sign-ins of this operator (the same lockout).
    await admitted(services, client, operator.email);
    const stored = await services.operators.withPassword(operator.email);
    if (!(await verifyPassword(body.currentPassword, stored?.passwordHash))) {
      const lockout = await limiterOf(services).refusedPassword(operator.email);
      await auditAccess(services, operator.email, "console.sign-in-failed", client, {
        via: "password change",
        reason: "wrong current password",
      });
      if (lockout) await auditAccess(services, operator.email, "console.lockout", client, lockout);
      throw badRequest("currentPassword is not the current password", { field: "currentPassword" });
    }
  }
  const problem = await passwordProblem(body.password, [operator.email]);
  if (problem) throw badRequest(`password ${problem}`, { field: "password" });
  const hash = await hashPassword(body.password);
  const sessionsEnded = await services.db.transaction(async (q) => {
    await services.operators.setPassword(operator.id, hash, q);
    return services.operatorSessions.revokeAll(operator.id, signedIn.token, q);
  });
  await services.auditLog.record({
    actor: operator.email,
    action: "operators.password",
    target: operator.email,
    before: { hasPassword: operator.hasPassword },
    after: { hasPassword: true, otherSessionsEnded: sessionsEnded, clientAddress: client.ip ?? null },
  });
  return { operator: { ...operator, hasPassword: true }, sessionsEnded };
}
