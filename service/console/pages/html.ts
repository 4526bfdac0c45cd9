/**
 * The console's HTML building blocks: every value escaped, no inline script or style (the pages' CSP allows neither),
 * tables with header cells, times as <time> elements, change forms that console.js sends to their JSON endpoint.
 */

/** Markup that is already safe (built by these helpers). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export const esc = (value: string | number | boolean | null | undefined): string =>
  String(value ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/** A template whose values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return esc(typeof value === "object" ? JSON.stringify(value) : (value as string | number | boolean));
}

export const raw = (text: string) => new Html(text);

/** A time in UTC, readable, with its ISO value in datetime. */
export function time(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z")
    .replace(/Z$/, " UTC")}</time>`;
}

export const code = (text: string | null | undefined) =>
  text ? html`<code>${text}</code>` : html`<span class="muted">—</span>`;

const BADGES: Record<string, string> = {
  success: "ok",
  confirmed: "ok",
  settled: "ok",
  delivered: "ok",
  approved: "ok",
  active: "ok",
  healthy: "ok",
  rejected: "bad",
  reverted: "bad",
  refused: "bad",
  failed: "bad",
  released: "warn",
  refunded: "ok",
  owed: "bad",
  revoked: "bad",
  disabled: "bad",
  sending: "warn",
  failing: "warn",
  cancelling: "warn",
  cancelled: "bad",
  paused: "warn",
  delivering: "warn",
  reserved: "neutral",
  pending: "warn",
  settling: "warn",
  submitted: "warn",
  broadcast: "warn",
  signed: "warn",
};

export const badge = (status: string) => html`<span class="badge ${BADGES[status] ?? "neutral"}">${status}</span>`;

/** A table with a caption (read by screen readers), header cells, and a scroll container that takes focus. */
export function table(caption: string, headers: string[], rows: unknown[][], empty = "Nothing to show."): Html {
  if (!rows.length) return html`<p class="muted">${empty}</p>`;
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${caption}"><table><caption class="sr-only">${caption}</caption>
<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table></div>`;
}

/** Facts as a definition list. */
export const facts = (entries: [string, unknown][]) =>
  html`<dl class="facts">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;

/** Where a list page stands, as the JSON lists say it (ListPage). */
export interface PageInfo {
  next: string | null;
  previous: string | null;
  total: number;
  first: number;
  items: unknown[];
}

/**
 * The pager of a list: newer and older pages (the list's other parameters kept), and where this page stands
 * ("51–100 of 10,000").
 */
export function pager(path: string, params: Record<string, string | undefined>, page: PageInfo): Html {
  const link = (extra: Record<string, string>) => {
    const query = new URLSearchParams(
      Object.entries({ ...params, ...extra }).filter((e): e is [string, string] => !!e[1]),
    ).toString();
    return `${path}${query ? `?${query}` : ""}`;
  };
  const count = page.items.length
    ? `${number(page.first)}–${number(page.first + page.items.length - 1)} of ${number(page.total)}`
    : `0 of ${number(page.total)}`;
  return html`<nav class="pager" aria-label="Pages">
${page.previous ? html`<a href="${link({})}">Newest</a><a rel="prev" href="${link({ after: page.previous })}">← Newer</a>` : html`<span class="muted">Newest page</span>`}
<span class="count" aria-live="polite">${count}</span>
${page.next ? html`<a rel="next" href="${link({ before: page.next })}">Older →</a>` : html`<span class="muted">Oldest page</span>`}
</nav>`;
}

/** The link to the next (older) page of a list paged by offset (the KYC queue). */
export function olderPager(path: string, params: Record<string, string | undefined>, next: string | null): Html {
  if (!next) return html``;
  const query = new URLSearchParams(
    Object.entries({ ...params, before: next }).filter((e): e is [string, string] => !!e[1]),
  ).toString();
  return html`<nav class="pager" aria-label="Pages"><a href="${path}?${query}">Older entries</a></nav>`;
}

/** A whole number with thousands separators. */
export const number = (n: number) => n.toLocaleString("en-US");

/**
 * A hash or an address, shortened (0x1234…abcd) unless `full`, the whole value in its title, a button that copies it,
 * and a link to the chain's block explorer when there is one.
 */
export function hashOf(
  value: string | null | undefined,
  options: { explorer?: string | null; kind?: "tx" | "address" | "block"; full?: boolean; href?: string } = {},
): Html {
  if (!value) return html`<span class="muted">—</span>`;
  const shown = options.full || value.length <= 14 ? value : `${value.slice(0, 6)}…${value.slice(-4)}`;
  const text = options.href
    ? html`<a href="${options.href}"><code title="${value}">${shown}</code></a>`
    : html`<code title="${value}">${shown}</code>`;
  const explorer =
    options.explorer && options.kind
      ? html` <a class="explorer" href="${options.explorer}/${options.kind}/${value}" rel="noopener noreferrer" target="_blank" aria-label="${value} on the block explorer (new tab)">explorer</a>`
      : "";
  return html`<span class="hash">${text}<button type="button" class="copy" data-copy="${value}" aria-label="Copy ${value}">copy</button>${explorer}</span>`;
}

/** A signal's or a wallet's state: colour, a symbol and a word (never colour alone). */
export function stateBadge(state: "ok" | "warn" | "bad"): Html {
  const [symbol, word] = { ok: ["●", "OK"], warn: ["▲", "Warning"], bad: ["■", "Failing"] }[state];
  return html`<span class="badge state-${state}"><span aria-hidden="true">${symbol}</span> ${word}</span>`;
}

export interface ActionForm {
  /** The JSON endpoint (POST unless `method`). */
  action: string;
  method?: "POST" | "DELETE";
  label: string;
  /** Asked in the confirmation dialog before anything is sent. */
  confirm?: string;
  /** Said once it is done (the page reloads). */
  done?: string;
  danger?: boolean;
  /** Hidden fields sent with it. */
  hidden?: Record<string, string | number>;
  /** Visible fields before the button. */
  fields?: Html;
  className?: string;
  /** The element that shows the created secret (instead of reloading). */
  secret?: string;
  redirect?: string;
}

/** A form console.js sends as JSON to its endpoint, with the session's CSRF token. */
export function actionForm(f: ActionForm): Html {
  const hidden = Object.entries(f.hidden ?? {}).map(
    ([name, value]) =>
      html`<input type="hidden" name="${name}" value="${value}"${raw(typeof value === "number" ? ' data-type="number"' : "")}>`,
  );
  return html`<form class="${f.className ?? "inline"}" data-action="${f.action}"${raw(f.method ? ` data-method="${f.method}"` : "")}${raw(f.confirm ? ` data-confirm="${esc(f.confirm)}"` : "")}${raw(
    f.done ? ` data-done="${esc(f.done)}"` : "",
  )}${raw(f.secret ? ` data-secret="${esc(f.secret)}"` : "")}${raw(f.redirect ? ` data-redirect="${esc(f.redirect)}"` : "")}>${hidden}${f.fields ?? ""}<button type="submit"${raw(
    f.danger ? ' class="danger"' : "",
  )}>${f.label}</button></form>`;
}

/** A labelled input (its id derived from the form's purpose, so labels and fields pair up). */
export function field(
  id: string,
  label: string,
  input: {
    name: string;
    type?: string;
    required?: boolean;
    value?: string;
    placeholder?: string;
    dataType?: "number" | "time";
    /** A select's choices: values, or [value, label] pairs; "" is "any". */
    options?: (string | [string, string])[];
    autocomplete?: string;
    /** The id of the message saying why its value was refused. */
    invalid?: string;
  },
): Html {
  const invalid = input.invalid ? raw(` aria-invalid="true" aria-describedby="${esc(input.invalid)}"`) : "";
  const common = html`id="${id}" name="${input.name}"${raw(input.required ? " required" : "")}${raw(input.dataType ? ` data-type="${input.dataType}"` : "")}${invalid}`;
  const choice = (o: string | [string, string]) => (typeof o === "string" ? [o, o || "any"] : o);
  const control = input.options
    ? html`<select ${common}>${input.options.map(choice).map(([v, l]) => html`<option value="${v}"${raw(v === input.value ? " selected" : "")}>${l}</option>`)}</select>`
    : input.type === "textarea"
      ? html`<textarea ${common} rows="2">${input.value ?? ""}</textarea>`
      : html`<input ${common} type="${input.type ?? "text"}" value="${input.value ?? ""}"${raw(input.type === "datetime-local" ? ' step="1"' : "")}${raw(input.placeholder ? ` placeholder="${esc(input.placeholder)}"` : "")}${raw(
          input.autocomplete ? ` autocomplete="${esc(input.autocomplete)}"` : "",
        )}>`;
  return html`<div><label for="${id}">${label}</label>${control}</div>`;
}
