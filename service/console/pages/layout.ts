import type { OperatorRecord } from "../../store/operators";
import { actionForm, html, type Html } from "./html";

/** What every signed-in page knows: who, the session's CSRF token, and where the console is (a path prefix). */
export interface PageContext {
  operator: OperatorRecord;
  csrfToken: string;
  /** The service's path prefix (PUBLIC_BASE_URL's path), "" at the root. */
  base: string;
}

export const NAV = [
  ["overview", "Overview", "/console"],
  ["transactions", "Transactions", "/console/transactions"],
  ["payments", "Payments", "/console/payments"],
  ["refunds", "Refunds", "/console/refunds"],
  ["webhooks", "Webhooks", "/console/webhooks"],
  ["kyc", "KYC review", "/console/kyc"],
  ["keys", "Keys and money", "/console/keys"],
  ["audit", "Audit log", "/console/audit"],
  ["account", "Account", "/console/account"],
] as const;

export type Section = (typeof NAV)[number][0];

/**
 * The Content-Security-Policy of every console page: nothing but this service's own script, styles and JSON; no
 * frames, no inline script or style, forms only to itself.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

function head(title: string, base: string, csrfToken?: string): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${csrfToken ? html`<meta name="csrf-token" content="${csrfToken}">` : ""}
<title>${title} · Operator console</title>
<link rel="stylesheet" href="${base}/console/assets/console.css">
<script src="${base}/console/assets/console.js" defer></script>
</head>`;
}

const confirmDialog = html`<dialog id="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-text">
<h2 id="confirm-title">Please confirm</h2>
<p id="confirm-text"></p>
<div class="buttons"><button type="button" id="confirm-cancel" class="secondary">Cancel</button><button type="button" id="confirm-ok" class="danger">Confirm</button></div>
</dialog>`;

/** A signed-in page: the navigation (the current section marked), who is signed in, the page's content. */
export function page(ctx: PageContext, section: Section, title: string, body: Html): string {
  const { base } = ctx;
  return `<!doctype html>\n${
    html`<html lang="en">
${head(title, base, ctx.csrfToken)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<span class="brand">Operator console</span>
<nav aria-label="Console sections"><ul>${NAV.map(([id, label, path]) => html`<li><a href="${base}${path}"${id === section ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul></nav>
<div class="who"><span>${ctx.operator.email} (${ctx.operator.role})</span>${actionForm({ action: `${base}/console/api/session`, method: "DELETE", label: "Sign out", redirect: `${base}/console/sign-in` })}</div>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
<div id="notice" class="notice" tabindex="-1" hidden></div>
${body}
</main>
${confirmDialog}
</body>
</html>`.text
  }\n`;
}

/** A page without a session (sign-in). */
export function barePage(title: string, base: string, body: Html): string {
  return `<!doctype html>\n${
    html`<html lang="en">
${head(title, base)}
<body>
<main id="main" class="sign-in">
<h1>${title}</h1>
<div id="notice" class="notice" tabindex="-1" hidden></div>
${body}
</main>
</body>
</html>`.text
  }\n`;
}
