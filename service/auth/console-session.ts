import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { forbidden, unauthorized } from "../errors";
import { roleAllows, type OperatorRecord, type OperatorRole } from "../store/operators";
import type { OperatorSessions } from "../store/operator-sessions";
import type { RequestHeaders, RequestHost } from "../wire/request";

/**
 * The console's session: a random token in a cookie that is HttpOnly (no script reads it), SameSite=Strict (no other
 * site's page sends it) and Secure (HTTPS only) whenever the request came over HTTPS, kept in the database only as its
 * hash. It ends at its expiry, at sign-out, or once unused for the idle timeout. Every
 * change also carries the CSRF token in a header: an HMAC of the session token, so it is never stored, differs per
 * session and cannot be made without the cookie.
 */
export const SESSION_COOKIE = "tak_console";
export const CSRF_HEADER = "x-csrf-token";

/** 32 random bytes, base64url: a session token, or a one-time sign-in link's token. */
export const newConsoleToken = (): string => randomBytes(32).toString("base64url");

/** The CSRF token of a session (what its pages carry and its changes must send in x-csrf-token). */
export const csrfTokenOf = (sessionToken: string): string =>
  createHmac("sha256", sessionToken).update("tak-console-csrf").digest("base64url");

/**
 * Set-Cookie for a new session, sent only to `path` (the console's, /console), Secure when the request came over
 * HTTPS: its protocol as the service saw it, or as a proxy TRUST_PROXY trusts says (X-Forwarded-Proto). Never the
 * Host header, which any client names as it likes.
 */
export function sessionCookie(
  req: Pick<RequestHost, "protocol">,
  token: string,
  maxAgeSeconds: number,
  path = "/console",
): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    `Path=${path}`,
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    ...(req.protocol === "https" ? ["Secure"] : []),
  ].join("; ");
}

/** Set-Cookie that removes the session cookie (sign-out). */
export function clearedSessionCookie(req: Pick<RequestHost, "protocol">, path = "/console"): string {
  return sessionCookie(req, "", 0, path);
}

/** The session token a request's Cookie header carries, if any. */
export function sessionTokenOf(req: RequestHeaders): string | undefined {
  for (const part of (req.header("cookie") ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE && value.join("=")) return value.join("=");
  }
  return undefined;
}

/** A signed-in operator, as a console request knows it. */
export interface SignedIn {
  operator: OperatorRecord;
  /** The session's cookie token (never logged, never shown). */
  token: string;
  csrfToken: string;
  expiresAt: string;
  /** How the session was opened, and when (a fresh one-time link stands in for the current password). */
  via: "password" | "link";
  createdAt: string;
}

/** A session's use is written at most this often (a page's requests come in bursts): the idle timeout's grain. */
const TOUCH_EVERY_MS = 15_000;

/** Why a request has no usable session: its page sends the browser to the sign-in page, its JSON answer says 401. */
export type SessionProblem = "no_session" | "unknown_session" | "revoked" | "expired" | "idle";

const PROBLEMS: Record<SessionProblem, string> = {
  no_session: "Sign in to the console first",
  unknown_session: "This console session is not known (it may belong to another deployment): sign in again",
  revoked:
    "This console session was ended (signed out, the password changed, or revoked by an administrator): sign in again",
  expired: "This console session has expired: sign in again",
  idle: "This console session ended after a while without use: sign in again",
};

/**
 * The operator a console request comes from, checked: a live session (401 otherwise, `details.reason` saying why:
 * also a session unused for `idleMs`), a role that allows `needed` (403), and for a change (`change`) the session's
 * CSRF token in x-csrf-token and no Origin but the service's own (as the request reached it, or PUBLIC_BASE_URL's:
 * `publicOrigin`) (403). A request that passes counts as the session's use (its idle time starts again).
 */
export async function authenticate(
  sessions: Pick<OperatorSessions, "find" | "touch">,
  req: RequestHeaders & RequestHost,
  needed: OperatorRole,
  options: { change: boolean; idleMs: number; publicOrigin?: string },
): Promise<SignedIn> {
  const token = sessionTokenOf(req);
  const refuse = (reason: SessionProblem) => unauthorized(PROBLEMS[reason], { reason });
  if (!token) throw refuse("no_session");
  const session = await sessions.find(token);
  if (!session) throw refuse("unknown_session");
  if (session.revokedAt) throw refuse("revoked");
  if (Date.parse(session.expiresAt) <= Date.now()) throw refuse("expired");
  if (Date.parse(session.lastSeenAt) + options.idleMs <= Date.now()) throw refuse("idle");
  const csrfToken = csrfTokenOf(token);
  if (options.change) {
    assertSameOrigin(req, options.publicOrigin);
    const given = Buffer.from(req.header(CSRF_HEADER) ?? "");
    const expected = Buffer.from(csrfToken);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw forbidden(`A console change needs the page's CSRF token in ${CSRF_HEADER}`, {
        field: CSRF_HEADER,
        in: "header",
      });
    }
  }
  if (!roleAllows(session.operator.role, needed)) {
    throw forbidden(`This needs the ${needed} role; ${session.operator.email} is a ${session.operator.role}`, {
      role: session.operator.role,
      needed,
    });
  }
  if (Date.now() - Date.parse(session.lastSeenAt) >= TOUCH_EVERY_MS) await sessions.touch(token);
  const { operator, expiresAt, via, createdAt } = session;
  return { operator, token, csrfToken, expiresAt, via, createdAt };
}

/**
 * A request a browser sent from another site's page is refused (403 naming origin): console changes, and the sign-in
 * (no other site can sign a browser in to an account of its choosing). Requests without Origin (not from a page) pass.
 */
export function assertSameOrigin(
  req: RequestHeaders & Pick<RequestHost, "protocol" | "host">,
  publicOrigin?: string,
): void {
  const origin = req.header("origin");
  if (origin && origin !== `${req.protocol}://${req.host}` && origin !== publicOrigin) {
    throw forbidden(`A console request must come from the console's own pages, not from ${origin}`, {
      field: "origin",
      in: "header",
    });
  }
}
