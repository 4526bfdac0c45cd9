import { esc, field, html, raw, type Html } from "./html";

/** A filter the list refused: the message, and the field it is about. */
export interface FilterError {
  field?: string;
  message: string;
}

export interface FilterField {
  name: string;
  label: string;
  kind: "text" | "select" | "time" | "checkbox";
  /** A select's choices ("" is any). */
  options?: (string | [string, string])[];
  placeholder?: string;
}

/** The id of the message that says why a filter was refused. */
const ERROR_ID = "filter-error";

/**
 * A list's filter form: a GET form, so the filters are stated in the URL (a link, a bookmark, the back button keep
 * them). A refused filter is said above the form and marked on its field (aria-invalid), the values kept as sent.
 */
export function filterForm(options: {
  action: string;
  label: string;
  fields: FilterField[];
  values: Record<string, string | undefined>;
  error?: FilterError;
}): Html {
  const { error, values } = options;
  const fields = options.fields.map((f) => {
    const id = `f-${f.name}`;
    const invalid = error?.field === f.name ? ERROR_ID : undefined;
    const value = values[f.name] ?? "";
    if (f.kind === "checkbox")
      return html`<div class="check"><input type="checkbox" id="${id}" name="${f.name}" value="1"${raw(value === "1" ? " checked" : "")}${raw(invalid ? ` aria-invalid="true" aria-describedby="${ERROR_ID}"` : "")}><label for="${id}">${f.label}</label></div>`;
    if (f.kind === "time")
      return field(id, `${f.label} (UTC)`, { name: f.name, type: "datetime-local", value: localTime(value), invalid });
    return field(id, f.label, { name: f.name, value, options: f.options, placeholder: f.placeholder, invalid });
  });
  const refused = error
    ? html`<p class="notice error" role="alert" id="${ERROR_ID}">This filter cannot be used: ${error.message}</p>`
    : "";
  return html`${refused}<form method="get" action="${options.action}" class="inline filters" role="search" aria-label="${options.label}">
${fields}<button type="submit">Filter</button> <a href="${options.action}">Clear</a></form>`;
}

/** An ISO time as a datetime-local field shows it (UTC, to the second); anything else as it was sent. */
function localTime(value: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value) ? value.slice(0, 19) : value;
}

/** The filters of a list as its pager keeps them in its links (empty ones left out). */
export function kept(values: Record<string, string | undefined>, names: string[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((n) => [n, typeof values[n] === "string" ? values[n] : undefined]));
}

/** "Filtered by …" in words, for the list's heading (read by screen readers with the result count). */
export function filteredBy(values: Record<string, string | undefined>, labels: Record<string, string>): Html {
  const parts = Object.entries(labels)
    .filter(([name]) => values[name])
    .map(([name, label]) => `${label} ${values[name] === "1" ? "" : values[name]}`.trim());
  return parts.length ? html` <span class="muted">(${raw(esc(parts.join(", ")))})</span>` : html``;
}
