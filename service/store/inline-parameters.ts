import { escapeLiteral } from "pg";
import { parameterText } from "./parameter-text";

/**
 * `sql` with each parameter ($1, $2…) written in as a quoted literal (`literal`: the text
 * node-postgres would send for it), so that statements can travel several to one text in PostgreSQL's simple query
 * protocol: one trip instead of one per statement. A quoted literal is of unknown type until its context types it, as an
 * untyped parameter is. Placeholders inside quoted strings, quoted names, dollar-quoted bodies and comments are left
 * alone; a `$` inside a name (a$1) is part of the name.
 */
export function inlineParameters(sql: string, params: readonly unknown[]): string {
  if (!params.length) return sql;
  let out = "";
  let from = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') i = quotedEnd(sql, i, c);
    else if (c === "-" && sql[i + 1] === "-") i = endOf(sql, "\n", i + 2);
    else if (c === "/" && sql[i + 1] === "*") i = endOf(sql, "*/", i + 2);
    else if (c === "$" && /[0-9]/.test(sql[i + 1] ?? "") && !/[\w$]/.test(sql[i - 1] ?? "")) {
      let j = i + 1;
      while (/[0-9]/.test(sql[j] ?? "")) j++;
      const n = Number(sql.slice(i + 1, j));
      if (n < 1 || n > params.length) throw new Error(`no parameter $${n}: ${params.length} given`);
      out += sql.slice(from, i) + literal(params[n - 1]);
      from = i = j;
    } else if (c === "$" && !/[\w$]/.test(sql[i - 1] ?? "")) {
      const tag = /^\$[A-Za-z_]\w*\$|^\$\$/.exec(sql.slice(i));
      i = tag ? endOf(sql, tag[0], i + tag[0].length) : i + 1;
    } else i++;
  }
  return out + sql.slice(from);
}

/** Where a string or name opened by `quote` at `start` ends (a doubled quote is one quote; E'…' escapes with \). */
function quotedEnd(sql: string, start: number, quote: string): number {
  const escapes = quote === "'" && /[eE]/.test(sql[start - 1] ?? "") && !/\w/.test(sql[start - 2] ?? "");
  for (let i = start + 1; i < sql.length; i++) {
    if (escapes && sql[i] === "\\") i++;
    else if (sql[i] === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i++;
    }
  }
  return sql.length;
}

function endOf(sql: string, closing: string, from: number): number {
  const at = sql.indexOf(closing, from);
  return at < 0 ? sql.length : at + closing.length;
}

/** A parameter as a SQL literal: what node-postgres would send as its text form, quoted. */
export function literal(value: unknown): string {
  const text = parameterText(value);
  return text === null ? "NULL" : escapeLiteral(text);
}
