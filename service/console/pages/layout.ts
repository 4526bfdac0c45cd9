import type { OperatorRecord } from "../../store/operators";
import { actionForm, html, type Html } from "./html";

/** What every signed-in page knows: who, the session's CSRF token, and where the console is (a path prefix). */
export interface PageContext {
  operator: OperatorRecord;
  csrfToken: string;
  /** The service's path prefix (PUBLIC_BASE_URL's path), "" at the root. */
  base: string;
  /** The block explorer of each served chain that has one (explorerOf): links go there. */
  explorers?: Record<number, string>;
}

/** One entry of the navigation: its section id (a page marks itself with it), its label and its path. */
export interface NavEntry {
  id: string;
  label: string;
  path: string;
}

/**
 * The console's sections, in the navigation's order. A new page adds its entry here (and passes its id to `page`);
 * at 390 px wide the navigation folds behind a Menu button, so the list may grow.
 */
export const NAV: NavEntry[] = [
  { id: "overview", label: "Overview", path: "/console" },
  { id: "transactions", label: "Transactions", path: "/console/transactions" },
  { id: "payments", label: "Payments", path: "/console/payments" },
  { id: "refunds", label: "Refunds", path: "/console/refunds" },
  { id: "webhooks", label: "Webhooks", path: "/console/webhooks" },
  { id: "kyc", label: "KYC review", path: "/console/kyc" },
  { id: "keys", label: "Keys and money", path: "/console/keys" },
  { id: "audit", label: "Audit log", path: "/console/audit" },
  { id: "account", label: "Account", path: "/console/account" },
];

export type Section = string;

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

export interface PageOptions {
  /**
   * The page shows live state: it listens to the console's event stream and reads itself again (its #live part) when
   * something happens, and every LIVE_EVERY_MS in any case (ages and thresholds move with time alone).
   */
  live?: boolean;
}

/** A signed-in page: the navigation (the current section marked), who is signed in, the page's content. */
export function page(ctx: PageContext, section: Section, title: string, body: Html, options: PageOptions = {}): string {
  const { base } = ctx;
  const live = options.live ? html` data-live="${base}/console/api/events"` : html``;
  return `<!doctype html>\n${
    html`<html lang="en">
${head(title, base, ctx.csrfToken)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<span class="brand">Operator console</span>
<button type="button" class="menu" id="menu-button" aria-expanded="false" aria-controls="menu">Menu</button>
<div class="menu-panel" id="menu">
<nav aria-label="Console sections"><ul>${NAV.map(({ id, label, path }) => html`<li><a href="${base}${path}"${id === section ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul></nav>
<div class="who"><span>${ctx.operator.email} (${ctx.operator.role})</span>${actionForm({ action: `${base}/console/api/session`, method: "DELETE", label: "Sign out", redirect: `${base}/console/sign-in` })}</div>
</div>
</header>
<main id="main" tabindex="-1"${live}>
<h1>${title}</h1>
<div id="notice" class="notice" tabindex="-1" hidden></div>
${options.live ? html`<p class="live-status muted" id="live-status" aria-live="off">Updates by itself.</p>` : ""}
<div id="live">
${body}
</div>
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
