import { randomBytes } from "node:crypto";
import type { KycInvestorRecord } from "../store/kyc";
import { countryOptions } from "./countries";

/**
 * The investor's page: plain HTML and one small inline script, served by the service (no framework, nothing fetched
 * from elsewhere). The script asks the browser wallet (EIP-1193, `window.ethereum`) for an account, has the service
 * issue the sign-in message for the details typed in, asks the wallet to sign it (`personal_sign`) and submits.
 */

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** JSON inside a <script> element: `<` is escaped so no value can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

export interface RenderedPage {
  html: string;
  /** Content-Security-Policy for this response (its inline script and style carry this nonce). */
  csp: string;
}

const STYLE = `
  body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  main { max-width: 34rem; margin: 3rem auto; background: #fff; border-radius: 10px; padding: 2rem 2.25rem; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  p.lead { color: #4a5262; margin: 0 0 1.5rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
  input, select { width: 100%; box-sizing: border-box; padding: .55rem .65rem; font-size: 1rem; border: 1px solid #c4c9d4; border-radius: 6px; }
  input[readonly] { background: #f0f2f5; color: #4a5262; }
  button { margin-top: 1.5rem; width: 100%; padding: .75rem; font-size: 1rem; font-weight: 600; border: 0; border-radius: 6px; background: #2f5bea; color: #fff; cursor: pointer; }
  button:disabled { background: #9aa9d8; cursor: default; }
  .note { font-size: .85rem; color: #5b6475; margin-top: 1rem; }
  #status { margin-top: 1.25rem; padding: .75rem; border-radius: 6px; display: none; white-space: pre-wrap; word-break: break-word; }
  #status.info, #status.error, #status.success { display: block; }
  #status.info { background: #eef2ff; }
  #status.error { background: #fdecec; color: #8a1c1c; }
  #status.success { background: #e8f7ee; color: #145c32; }
`;

function layout(title: string, body: string, script?: string): RenderedPage {
  const nonce = randomBytes(16).toString("base64");
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
${script ? script.replace(/<script/g, `<script nonce="${nonce}"`) : ""}
</body>
</html>
`;
  return { html, csp };
}

const SCRIPT = `
<script>
(() => {
  const data = JSON.parse(document.getElementById("kyc-data").textContent);
  const form = document.getElementById("kyc-form");
  const button = document.getElementById("submit");
  const status = document.getElementById("status");
  const show = (text, kind) => { status.textContent = text; status.className = kind; };
  const hex = (text) => "0x" + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(json.message || "The service answered " + response.status);
    return json;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wallet = window.ethereum;
    if (!wallet || typeof wallet.request !== "function") {
      show("No browser wallet was found. Enable a wallet extension (for example MetaMask) and reload this page.", "error");
      return;
    }
    button.disabled = true;
    try {
      show("Connecting to your wallet…", "info");
      const accounts = await wallet.request({ method: "eth_requestAccounts" });
      if (!accounts || !accounts.length) throw new Error("The wallet did not share an account.");
      const walletAddress = accounts[0];
      const chainId = parseInt(await wallet.request({ method: "eth_chainId" }), 16);
      const details = { firstName: form.firstName.value, lastName: form.lastName.value, country: form.country.value };
      const issued = await post(data.messageUrl, { token: data.token, ...details, walletAddress, chainId });
      show("Sign the message in your wallet to confirm that it is yours…", "info");
      const signature = await wallet.request({ method: "personal_sign", params: [hex(issued.message), walletAddress] });
      const done = await post(data.submitUrl, { token: data.token, ...details, walletAddress, message: issued.message, signature });
      form.hidden = true;
      show("Thank you. Your details and your wallet " + done.walletAddress + " were submitted for review. You can close this page.", "success");
    } catch (error) {
      show((error && error.message) || String(error), "error");
      button.disabled = false;
    }
  });
})();
</script>`;

/** The form of a live link. */
export function onboardingPage(input: {
  token: string;
  email: string;
  expiresAt: string;
  basePath: string;
}): RenderedPage {
  const options = countryOptions()
    .map((c) => `<option value="${c.code}">${escapeHtml(c.name)} (${c.code})</option>`)
    .join("");
  const data = {
    token: input.token,
    messageUrl: `${input.basePath}/kyc/message`,
    submitUrl: `${input.basePath}/kyc/submit`,
  };
  const body = `
<h1>Investor onboarding</h1>
<p class="lead">Enter your details and confirm your wallet. Your wallet will ask you to sign a message; signing is free and sends no transaction.</p>
<form id="kyc-form" autocomplete="on">
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" value="${escapeHtml(input.email)}" readonly>
  <label for="firstName">First name</label>
  <input id="firstName" name="firstName" required maxlength="100" autocomplete="given-name">
  <label for="lastName">Last name</label>
  <input id="lastName" name="lastName" required maxlength="100" autocomplete="family-name">
  <label for="country">Country of residence</label>
  <select id="country" name="country" required><option value="">Choose…</option>${options}</select>
  <button id="submit" type="submit">Connect wallet and sign</button>
  <p class="note">This link works once and expires on ${escapeHtml(new Date(input.expiresAt).toUTCString())}.</p>
</form>
<div id="status" role="status" aria-live="polite"></div>
<script type="application/json" id="kyc-data">${scriptJson(data)}</script>`;
  return layout("Investor onboarding", body, SCRIPT);
}

/** The page shown for a link that cannot be used (unknown, expired, used, replaced). */
export function linkProblemPage(title: string, message: string): RenderedPage {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p class="lead">${escapeHtml(message)}</p>`);
}

/**
 * What a used link shows the investor who opens it again: where its onboarding stands (waiting for review, approved,
 * or rejected with the operator's reason), as the operator decided it.
 */
export function outcomePage(
  investor: Pick<KycInvestorRecord, "status" | "email" | "walletAddress" | "reviewReason" | "reviewedAt">,
): RenderedPage {
  const wallet = investor.walletAddress ? ` Your wallet ${investor.walletAddress} was verified.` : "";
  const when = investor.reviewedAt ? ` (${new Date(investor.reviewedAt).toUTCString()})` : "";
  const pages = {
    submitted: [
      "Your details are being reviewed",
      `Your details and wallet were submitted for ${investor.email}.${wallet} Come back to this link to see the decision.`,
    ],
    approved: [
      "Your onboarding is approved",
      `${investor.email} is approved${when}.${wallet} Your issuer can now whitelist your wallet.`,
    ],
    rejected: [
      "Your onboarding was not approved",
      `${investor.email} was not approved${when}. Reason: ${investor.reviewReason ?? "none given"}. Ask your issuer for a new onboarding link.`,
    ],
  } as const;
  const [title, message] = pages[investor.status as keyof typeof pages] ?? ["This link has already been used", ""];
  return layout(
    title,
    `<h1 id="outcome" data-status="${escapeHtml(investor.status)}">${escapeHtml(title)}</h1>\n<p class="lead">${escapeHtml(message)}</p>`,
  );
}
