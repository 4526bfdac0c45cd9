/** A parameter as PostgreSQL's text form (what node-postgres sends for it); null for SQL NULL. */
export function parameterText(value: unknown): string | null {
  return value === null || value === undefined ? null : textOf(value);
}

function textOf(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "bigint") text = String(value);
  else if (typeof value === "boolean") text = value ? "true" : "false";
  else if (value instanceof Date) text = value.toISOString();
  else if (value instanceof Uint8Array) text = "\\x" + Buffer.from(value).toString("hex");
  else if (Array.isArray(value)) text = arrayText(value);
  else text = JSON.stringify(value);
  // A NUL cannot be in PostgreSQL text (in a quoted literal it would end the statement early): refused as the server
  // refuses it.
  if (text.includes("\0"))
    throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: "22021" });
  return text;
}

/** PostgreSQL's array input form: {"a","b",NULL}, each element quoted and escaped. */
function arrayText(values: unknown[]): string {
  const element = (v: unknown): string => {
    if (v === null || v === undefined) return "NULL";
    if (Array.isArray(v)) return arrayText(v);
    return `"${textOf(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  };
  return `{${values.map(element).join(",")}}`;
}
