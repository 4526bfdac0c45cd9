import { z, type ZodType } from "zod";

export type Json = Record<string, unknown>;

/** A JSON Schema in parts: the root and the named schemas its $refs point to (#/$defs/<id>). */
export interface SchemaParts {
  root: Json;
  defs: Record<string, Json>;
}

/**
 * A zod schema as JSON Schema (zod 4's own conversion, as /openapi.json uses it): what a client sends ("input") or
 * receives ("output"). A schema with an id (`.meta({ id })`) is referenced from the root by zod; its body is inlined at
 * the root here, so that the root says what it is (MCP wants `type: "object"` there).
 */
export function schemaParts(type: ZodType, io: "input" | "output"): SchemaParts {
  const converted = z.toJSONSchema(type, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;
  delete converted.$schema;
  const defs = { ...((converted.$defs ?? {}) as Record<string, Json>) };
  delete converted.$defs;
  const { $ref, ...rest } = converted;
  const root =
    typeof $ref === "string" && $ref.startsWith("#/$defs/")
      ? { ...defs[$ref.slice("#/$defs/".length)], ...rest }
      : converted;
  return { root, defs };
}

/** A plain object schema (properties, required, additionalProperties and words that describe it, nothing that combines). */
function isPlainObject(schema: Json): boolean {
  return (
    schema.type === "object" &&
    Object.keys(schema).every((k) =>
      ["type", "properties", "required", "additionalProperties", "description", "title"].includes(k),
    )
  );
}

/**
 * One object schema of several parts (a route's query, body and path parameters; a tool's possible answers), with
 * every part's named schemas in one $defs at the root. Plain objects whose every part must hold are merged into one
 * (properties and required lists side by side); otherwise `allOf` (every part holds) or `anyOf` (one of them does).
 * `properties` are added at the root (the Idempotency-Key a tool takes as an argument).
 */
export function objectSchema(
  parts: SchemaParts[],
  combine: "allOf" | "anyOf",
  properties: Record<string, Json> = {},
): Json {
  const defs: Record<string, Json> = {};
  for (const part of parts) Object.assign(defs, part.defs);
  const withDefs = (schema: Json) => (Object.keys(defs).length ? { ...schema, $defs: defs } : schema);
  const roots = parts.map((p) => p.root);
  if (roots.length && (roots.length === 1 || combine === "allOf") && roots.every(isPlainObject)) {
    const merged: Json = {
      ...roots[0],
      type: "object",
      properties: Object.assign({}, ...roots.map((r) => r.properties ?? {}), properties),
    };
    const required = [...new Set(roots.flatMap((r) => (r.required as string[] | undefined) ?? []))];
    if (required.length) merged.required = required;
    else delete merged.required;
    if (roots.some((r) => r.additionalProperties !== false)) delete merged.additionalProperties;
    else merged.additionalProperties = false;
    return withDefs(merged);
  }
  return withDefs({ type: "object", ...(Object.keys(properties).length ? { properties } : {}), [combine]: roots });
}
