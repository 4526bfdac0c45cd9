import { roleAllows } from "../../store/operators";
import type { KeysView } from "../../wire/console-changes";
import { actionForm, badge, code, field, html, table, time } from "./html";
import { page, type PageContext } from "./layout";

/** API keys (create, revoke, credits, signers) and x402 prices, each change through the admin command's checks. */
export function keysPage(ctx: PageContext, v: KeysView): string {
  const { base } = ctx;
  const api = `${base}/console/api`;
  const admin = roleAllows(ctx.operator.role, "admin");
  const create = html`<section aria-labelledby="create"><h2 id="create">Create a key</h2>
${actionForm({
  action: `${api}/keys`,
  label: "Create key",
  className: "stack",
  secret: "new-key",
  done: "The key was created.",
  fields: html`${field("key-email", "Owner's e-mail", { name: "email", type: "email", required: true })}${field("key-plan", "Plan", { name: "plan", options: v.plans, value: v.plans[0] })}`,
})}
<output id="new-key" class="secret mono" hidden aria-live="polite"></output></section>`;
  const keys = v.items.map((k) => {
    const credits = Object.entries(k.credits).map(([method, n]) => [method, n]);
    const manage = html`<h3>Change</h3>
${actionForm({ action: `${api}/keys/${k.id}/credits`, label: "Add credits", done: "Credits added.", fields: html`${field(`m-${k.id}`, "Method", { name: "method", options: v.creditMethods })}${field(`n-${k.id}`, "Amount", { name: "amount", type: "number", required: true, dataType: "number" })}` })}
${actionForm({ action: `${api}/keys/${k.id}/signers`, label: "Whitelist signer", done: "Signer whitelisted.", fields: field(`s-${k.id}`, "Signer address", { name: "address", required: true, placeholder: "0x…" }) })}
${k.signers.map((s) => actionForm({ action: `${api}/keys/${k.id}/signers/remove`, label: `Remove ${s}`, hidden: { address: s }, confirm: `Remove signer ${s} from key ${k.id}? It can no longer prepare for it.`, done: "Signer removed." }))}
${actionForm({ action: `${api}/keys/${k.id}/revoke`, label: "Revoke key", danger: true, confirm: `Revoke key ${k.id} (${k.email})? Every call with it is refused from now on.`, done: "The key is revoked." })}`;
    return html`<section aria-labelledby="key-${k.id}"><h2 id="key-${k.id}">${k.email} ${code(k.id)} ${k.revokedAt ? badge("revoked") : badge("active")}</h2>
<p>Plan ${k.plan}, created ${time(k.createdAt)}${k.revokedAt ? html`, revoked ${time(k.revokedAt)}` : ""}.</p>
<details><summary>Credits left per method (${credits.reduce((n, [, c]) => n + Number(c), 0)} in all)</summary>${table(`Credits of key ${k.id}`, ["Method", "Credits left"], credits)}</details>
<p>Signers: ${k.signers.length ? k.signers.map((s) => html`${code(s)} `) : html`<span class="muted">none of its own</span>`}</p>
${admin && !k.revokedAt ? manage : ""}</section>`;
  });
  const prices = table(
    "Prices per operation",
    ["Operation", "Tier", "Price", "Set by"],
    v.prices.map((p) => [p.operation, p.tier, `${p.amount} USDC`, p.overridden ? "the operator" : "default"]),
  );
  const setPrice = admin
    ? actionForm({
        action: `${api}/prices`,
        label: "Set price",
        confirm: "Change this operation's x402 price? New quotes use it at once.",
        done: "The price is set.",
        fields: html`${field("price-op", "Operation", { name: "operation", options: v.prices.map((p) => p.operation) })}${field("price-amount", "USDC", { name: "amount", required: true, placeholder: "0.25" })}`,
      })
    : "";
  return page(
    ctx,
    "keys",
    "Keys and money",
    html`${admin ? create : ""}${keys.length ? keys : html`<p class="muted">No API key yet.</p>`}
<section aria-labelledby="all"><h2 id="all">Signers of every key</h2><p>${v.allKeysSigners.length ? v.allKeysSigners.map((s) => html`${code(s)} `) : html`<span class="muted">none</span>`}</p></section>
<section aria-labelledby="prices"><h2 id="prices">x402 prices</h2>${prices}${setPrice}</section>`,
  );
}
