import { z, type ZodType } from "zod";
import { wireOnlyFields } from "../wire/field-aliases";

export type Json = Record<string, unknown>;

/** A JSON Schema in parts: the root and the named schemas its $refs point to (#/$defs/<id>). */
export interface SchemaParts {
  root: Json;
  defs: Record<string, Json>;
}

/** Marks, during the conversion, a field kept for existing clients only (removed with its property). */
const WIRE_ONLY = "x-tak-wire-only";

/**
 * A zod schema as the JSON Schema of a tool (zod 4's own conversion, as /openapi.json uses it, then made compact): what
 * a client sends ("input") or receives ("output"). A schema with an id (`.meta({ id })`) is referenced from the root
 * by zod; its body is inlined at the root here, so that the root says what it is (MCP wants `type: "object"` there).
 *
 * A tool's schema is read by a model on every turn, so it says each thing once: an input lists one name per field
 * (the second names of field aliases are left out), the type a field is sent as (a field documented
 * as `type: "string"` that also takes a number loses its `anyOf`), no OpenAPI `example`; an output keeps the shape
 * (types, properties, required, enums, descriptions) and drops what only validates input (lengths, patterns, bounds).
 */
export function schemaParts(type: ZodType, io: "input" | "output"): SchemaParts {
  const converted = z.toJSONSchema(type, {
    io,
    unrepresentable: "any",
    target: "draft-2020-12",
    override: (ctx) => {
      if (io === "input" && wireOnlyFields.has(ctx.zodSchema)) (ctx.jsonSchema as Json)[WIRE_ONLY] = true;
    },
  }) as Json;
  delete converted.$schema;
  const defs = Object.fromEntries(
    Object.entries((converted.$defs ?? {}) as Record<string, Json>).map(([id, def]) => [id, compact(def, io)]),
  );
  delete converted.$defs;
  const { $ref, ...rest } = compact(converted, io);
  const root =
    typeof $ref === "string" && $ref.startsWith("#/$defs/")
      ? { ...defs[$ref.slice("#/$defs/".length)], ...rest }
      : { ...rest, ...($ref === undefined ? {} : { $ref }) };
  return { root, defs };
}

/** Keywords an output schema leaves out: they constrain what a client sends, not what it reads. */
const INPUT_ONLY = [
  "pattern",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "format",
  "default",
  "additionalProperties",
];

/**
 * Keywords an input schema leaves out: lengths and counts a model rarely reaches, which the API checks anyway (a value
 * out of bounds is a tool error naming the field).
 */
const LENGTHS = ["minLength", "maxLength", "maxItems"];

/** The bounds zod writes for any safe integer: they say nothing a model needs. */
const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;

function compact(schema: Json, io: "input" | "output"): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "example" || key === "examples" || key === WIRE_ONLY) continue;
    if (io === "output" && INPUT_ONLY.includes(key)) continue;
    if (io === "input" && LENGTHS.includes(key)) continue;
    if ((key === "maximum" && value === SAFE_INTEGER_BOUND) || (key === "minimum" && value === -SAFE_INTEGER_BOUND))
      continue;
    // {} (anything) and { type: "string" } property names are what JSON allows anyway.
    if (key === "additionalProperties" && isEmpty(value)) continue;
    if (key === "propertyNames") continue;
    out[key] = compactValue(key, value, io);
  }
  // A field documented with the one type to send it as, and an anyOf of every form it is taken in: the type says it.
  if (typeof out.type === "string" && Array.isArray(out.anyOf)) delete out.anyOf;
  // A value taken in several simple forms (a chain id as a string or a number): the list of types says it.
  const types = simpleTypes(out.anyOf);
  if (types) {
    delete out.anyOf;
    out.type = types;
  }
  // An e-mail's format says what its (long) pattern says.
  if (out.format !== undefined && out.pattern !== undefined) delete out.pattern;
  if (out.properties && typeof out.properties === "object") withoutWireOnly(out, schema);
  return out;
}

function compactValue(key: string, value: unknown, io: "input" | "output"): unknown {
  if (key === "properties" || key === "$defs" || key === "patternProperties") {
    return Object.fromEntries(Object.entries(value as Record<string, Json>).map(([k, v]) => [k, compact(v, io)]));
  }
  if (key === "enum" || key === "const" || key === "default" || key === "required") return value;
  if (Array.isArray(value)) return value.map((v) => (isSchema(v) ? compact(v, io) : v));
  return isSchema(value) ? compact(value, io) : value;
}

/** Drops the properties the conversion marked as kept for existing clients only, and their `required` entries. */
function withoutWireOnly(out: Json, original: Json): void {
  const properties = original.properties as Record<string, Json>;
  const dropped = Object.keys(properties).filter((name) => properties[name]?.[WIRE_ONLY] === true);
  if (!dropped.length) return;
  const kept = { ...(out.properties as Record<string, Json>) };
  for (const name of dropped) delete kept[name];
  out.properties = kept;
  if (Array.isArray(out.required)) {
    const required = (out.required as string[]).filter((name) => !dropped.includes(name));
    if (required.length) out.required = required;
    else delete out.required;
  }
}

/** The types of an anyOf whose branches are bare types (after the lengths and bounds are gone), else undefined. */
function simpleTypes(anyOf: unknown): string[] | undefined {
  if (!Array.isArray(anyOf) || anyOf.length < 2) return undefined;
  const bounds = ["exclusiveMinimum", "minimum"];
  const types = anyOf.map((branch: Json) =>
    typeof branch.type === "string" && Object.keys(branch).every((k) => k === "type" || bounds.includes(k))
      ? branch.type
      : undefined,
  );
  return types.every((t): t is string => t !== undefined) ? [...new Set(types)] : undefined;
}

const isSchema = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) => isSchema(v) && Object.keys(v).length === 0;

/** A plain object schema (properties, required, additionalProperties and words that describe it, nothing that combines). */
function isPlainObject(schema: Json): boolean {
  return (
    schema.type === "object" &&
    Object.keys(schema).every((k) =>
      ["type", "properties", "required", "additionalProperties", "description", "title"].includes(k),
    )
  );
}

/** The names of the $defs a schema refers to, directly or through other $defs. */
function referencedDefs(schema: unknown, defs: Record<string, Json>, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) referencedDefs(item, defs, into);
  else if (isSchema(schema)) {
    for (const [key, value] of Object.entries(schema)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")) {
        const id = value.slice("#/$defs/".length);
        if (!into.has(id) && defs[id]) {
          into.add(id);
          referencedDefs(defs[id], defs, into);
        }
      } else if (key !== "$defs") referencedDefs(value, defs, into);
    }
  }
  return into;
}

/**
 * One object schema of several parts (a route's query, body and path parameters; a tool's possible answers), with
 * the named schemas its parts refer to in one $defs at the root (none that nothing refers to). Plain objects whose
 * every part must hold are merged into one (properties and required lists side by side); otherwise `allOf` (every
 * part holds) or `anyOf` (one of them does). `properties` are added at the root (the Idempotency-Key a tool takes as
 * an argument).
 */
export function objectSchema(
  parts: SchemaParts[],
  combine: "allOf" | "anyOf",
  properties: Record<string, Json> = {},
): Json {
  const defs: Record<string, Json> = {};
  for (const part of parts) Object.assign(defs, part.defs);
  const withDefs = (schema: Json) => {
    const used = referencedDefs(schema, defs);
    return used.size ? { ...schema, $defs: Object.fromEntries([...used].sort().map((id) => [id, defs[id]])) } : schema;
  };
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
