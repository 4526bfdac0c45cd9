/** Column values as rows hand them back (PGlite and pg differ: a Date or a string, an array or its text form). */

/** A timestamp column as an ISO 8601 string. */
export const iso = (v: Date | string) => new Date(v).toISOString();

/** A nullable timestamp column as an ISO 8601 string or null. */
export const isoOrNull = (v: Date | string | null) => (v === null ? null : iso(v));

/** A text[] column, whether the driver parsed it or left it as `{a,b}`. */
export const arrayColumn = (v: string[] | string): string[] =>
  Array.isArray(v)
    ? v
    : v
        .replace(/^\{|\}$/g, "")
        .split(",")
        .filter(Boolean);
