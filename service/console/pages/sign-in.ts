import type { SignedIn } from "../../auth/console-session";
import { LINK_FRESH_MS } from "../sign-in";
import { actionForm, field, html, time } from "./html";
import { barePage, page, type PageContext } from "./layout";

/**
 * The sign-in page: e-mail and password, or, opened from a one-time link, a button that uses the link (a link is used
 * only by that POST, never by opening the page: link checkers and previews cannot spend it).
 */
export function signInPage(base: string, next: string, linkToken?: string, reason?: string): string {
  const redirect = next.startsWith(`${base}/console`) ? next : `${base}/console`;
  const why = reason ? html`<p class="notice error" role="alert">${reason}</p>` : "";
  const form = linkToken
    ? html`<p>This one-time link signs you in once.</p>${actionForm({ action: `${base}/console/api/session`, label: "Sign in with this link", hidden: { token: linkToken }, redirect })}`
    : actionForm({
        action: `${base}/console/api/session`,
        label: "Sign in",
        className: "stack",
        redirect,
        fields: html`${field("email", "E-mail", { name: "email", type: "email", required: true, autocomplete: "username" })}${field("password", "Password", { name: "password", type: "password", required: true, autocomplete: "current-password" })}`,
      });
  return barePage(
    "Sign in to the operator console",
    base,
    html`${why}${form}<p class="muted">No account? An administrator creates one with <code>npm run admin -- operators add</code>.</p>`,
  );
}

/**
 * The account page: who is signed in and until when, and the password: changing it needs the current one (but right
 * after a one-time link: LINK_FRESH_MS) and ends the operator's other sessions.
 */
export function accountPage(ctx: PageContext, session: SignedIn, idleMs: number): string {
  const { base } = ctx;
  const needsCurrent =
    ctx.operator.hasPassword && !(session.via === "link" && Date.now() - Date.parse(session.createdAt) < LINK_FRESH_MS);
  const fields = html`${needsCurrent ? field("current-password", "Current password", { name: "currentPassword", type: "password", required: true, autocomplete: "current-password" }) : ""}${field("new-password", "New password (at least 12 characters, hard to guess: several unrelated words work well)", { name: "password", type: "password", required: true, autocomplete: "new-password" })}`;
  return page(
    ctx,
    "account",
    "Account",
    html`<section><p>Signed in as <strong>${ctx.operator.email}</strong> (${ctx.operator.role}); this session ends at ${time(session.expiresAt)}, or after ${Math.round(idleMs / 60_000)} minutes without use.</p>
<h2>${ctx.operator.hasPassword ? "Change your password" : "Set a password"}</h2>
<p class="muted">Your other sessions (other browsers, other devices) end when you save a new password.</p>
${actionForm({ action: `${base}/console/api/password`, label: "Save password", className: "stack", done: "Your password is saved; your other sessions were ended.", fields })}
</section>`,
  );
}
