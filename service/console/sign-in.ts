import { csrfTokenOf, newConsoleToken, type SignedIn } from "../auth/console-session";
import { hashPassword, passwordProblem, verifyPassword } from "../auth/operator-passwords";
import { SignInLimiter } from "../auth/sign-in-limits";
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

const limiters = new WeakMap<Services, SignInLimiter>();
const limiterOf = (services: Services) => {
  let limiter = limiters.get(services);
  if (!limiter) limiters.set(services, (limiter = new SignInLimiter(services.db)));
  return limiter;
};

/**
 * Signs an operator in with its e-mail and password, or with a one-time link's token, and opens a session that ends
 * after CONSOLE_SESSION_TTL. Attempts are rate-limited (auth/sign-in-limits.ts); a wrong password and a wrong e-mail
 * are refused alike, in the same time. Neither the password nor any token is ever logged.
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
    await limiter.admit(client);
    const used = await services.db.transaction(async (q) => {
      const operator = await services.operators.useLink(q, body.token);
      if (typeof operator === "string") return operator;
      return { operator, ...(await services.operatorSessions.open(q, operator.id, token, "link", ttlMs)) };
    });
    if (typeof used === "string") {
      await limiter.refusedLink(client);
      throw unauthorized(LINK_REFUSALS[used], { field: "token", reason: used });
    }
    services.logger.info({ operator: used.operator.email, via: "link" }, "operator signed in to the console");
    return { operator: used.operator, token, csrfToken: csrfTokenOf(token), expiresAt: used.expiresAt };
  }
  await limiter.admit(client, body.email);
  const found = await services.operators.withPassword(body.email);
  if (!(await verifyPassword(body.password, found?.passwordHash)) || !found) {
    await limiter.refusedPassword(body.email);
    throw unauthorized("Wrong e-mail or password", { field: "password" });
  }
  const { expiresAt } = await services.operatorSessions.open(services.db, found.record.id, token, "password", ttlMs);
  services.logger.info({ operator: found.record.email, via: "password" }, "operator signed in to the console");
  return { operator: found.record, token, csrfToken: csrfTokenOf(token), expiresAt };
}

/** Ends the request's session. */
export async function signOut(services: Services, signedIn: SignedIn): Promise<void> {
  await services.operatorSessions.revoke(signedIn.token);
}

/** The signed-in operator sets its password (after signing in with a link, or to change it); audited without it. */
export async function setOwnPassword(
  services: Services,
  signedIn: SignedIn,
  password: string,
): Promise<OperatorRecord> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest(`password ${problem}`, { field: "password" });
  await services.operators.setPassword(signedIn.operator.id, await hashPassword(password));
  await services.auditLog.record({
    actor: signedIn.operator.email,
    action: "operators.password",
    target: signedIn.operator.email,
    before: { hasPassword: signedIn.operator.hasPassword },
    after: { hasPassword: true },
  });
  return { ...signedIn.operator, hasPassword: true };
}
