import type { ZodType } from "zod";
import { successResponses } from "../http/openapi";
import type { RouteDefinition } from "../http/route";
import { schemaParts, type Json } from "./json-schema";

/**
 * A tool's output schema: the shape of the route's answer as a model reads it, kept short. The answer's own schema
 * (every success of the route), with what only validates input left out (json-schema.ts), named schemas inlined, and
 * objects below OUTPUT_DEPTH levels said to be objects without their fields (the result shows them).
 *
 * A tool that fails answers `isError` with the API's error body or, unpaid, x402's PaymentRequired: both are described
 * once, in the server's instructions, not in every tool. They still validate against every output schema (a client
 * such as the official SDK's validates an error's structured content too): no `required` at the root, and no root
 * property named like one of theirs with another type (test/service/mcp-catalogue.test.ts holds it).
 */

/** Levels of objects whose fields an output schema names: the answer's own (nested objects are said to be objects). */
export const OUTPUT_DEPTH = 1;

/** Root fields of an answer that an error's body has too, with another type: such an answer lets errors through. */
const ERROR_FIELDS = ["error", "message", "x402Version", "accepts", "resource"];
const ERRORS = {
  description: "isError: the API's error or x402's PaymentRequired (see the instructions)",
  anyOf: [{ required: ["error"] }, { required: ["x402Version"] }],
};

/**
 * The output schema of a route's tool. A prepare tool's answer is the same for every method (txId, transactions, info,
 * executionMode…): it is described once in the instructions, and its tools name its fields only (`bare`).
 */
export function outputSchemaOf(route: RouteDefinition<any, any>, bare = false): Json {
  const types = new Set<ZodType>();
  for (const doc of Object.values(successResponses(route))) if (doc?.schema) types.add(doc.schema);
  return answersSchema([...types], bare);
}

/** The output schema of a tool that answers one of `types`. */
export function answersSchema(types: ZodType[], bare = false): Json {
  const answers = types.map((type) => {
    const { root, defs } = schemaParts(type, "output");
    const answer = lenient(limited(root, defs, 0));
    return bare ? withoutDescriptions(answer) : answer;
  });
  // One answer that is itself one of several shapes is those shapes.
  const shapes = answers.flatMap((a) => (Array.isArray(a.anyOf) && !a.properties ? (a.anyOf as Json[]) : [a]));
  const schema = shapes.length === 1 && shapes[0].type === "object" ? shapes[0] : { type: "object", anyOf: shapes };
  if (!answers.some(namesAnErrorField)) return schema;
  return { type: "object", anyOf: [...((schema.anyOf as Json[] | undefined) ?? [schema]), ERRORS] };
}

function namesAnErrorField(answer: Json): boolean {
  const names = Object.keys(answer.properties ?? {});
  if (names.some((name) => ERROR_FIELDS.includes(name))) return true;
  return ((answer.anyOf ?? answer.oneOf ?? []) as Json[]).some(namesAnErrorField);
}

function withoutDescriptions(schema: Json): Json {
  const { description: _description, ...rest } = schema;
  if (rest.properties)
    rest.properties = Object.fromEntries(
      Object.entries(rest.properties as Record<string, Json>).map(([k, v]) => [k, withoutDescriptions(v)]),
    );
  if (rest.items && typeof rest.items === "object") rest.items = withoutDescriptions(rest.items as Json);
  return rest;
}

/** The root of an answer without `required`, nor in any of the alternatives it may be. */
function lenient(schema: Json): Json {
  const { required: _required, ...rest } = schema;
  for (const key of ["anyOf", "oneOf"] as const)
    if (Array.isArray(rest[key])) rest[key] = (rest[key] as Json[]).map(lenient);
  return rest;
}

/** `schema` with its $refs inlined and the fields of objects deeper than OUTPUT_DEPTH left out. */
function limited(schema: Json, defs: Record<string, Json>, depth: number): Json {
  const ref = typeof schema.$ref === "string" ? schema.$ref.replace("#/$defs/", "") : undefined;
  if (ref !== undefined) {
    const { $ref: _ref, ...rest } = schema;
    return limited({ ...(defs[ref] ?? {}), ...rest }, defs, depth);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      if (depth >= OUTPUT_DEPTH) continue;
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([k, v]) => [k, limited(v, defs, depth + 1)]),
      );
    } else if (key === "required" && depth >= OUTPUT_DEPTH) continue;
    else if (key === "items" || key === "additionalProperties") {
      out[key] = typeof value === "object" && value !== null ? limited(value as Json, defs, depth) : value;
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf") {
      out[key] = (value as Json[]).map((v) => limited(v, defs, depth));
    } else out[key] = value;
  }
  return out;
}
