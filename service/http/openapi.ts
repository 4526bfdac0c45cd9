import { z, type ZodType } from "zod";
import type { RouteDefinition } from "./route";

/** JSON Schema of what a client sends (input side of transforms). */
function schemaOf(type: ZodType): Record<string, unknown> {
  const schema = z.toJSONSchema(type, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

const securitySchemes = {
  apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
  x402: {
    type: "apiKey",
    in: "header",
    name: "X-PAYMENT",
    description: "Base64 x402 v2 payment payload (also accepted: X-Payment, x-payment, payment-signature).",
  },
};

function security(auth: RouteDefinition["auth"]) {
  switch (auth) {
    case "apiKey":
      return [{ apiKey: [] }];
    case "apiKeyOrPayment":
      return [{ apiKey: [] }, { x402: [] }, {}];
    case "payment":
      return [{ x402: [] }];
    default:
      return [];
  }
}

const errorSchema = {
  type: "object",
  required: ["error", "message"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" }, details: { type: "object" } },
    },
    message: { type: "string" },
  },
};

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApi(routes: RouteDefinition<any, any>[], info: { version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: route.tags,
      security: security(route.auth),
      responses: {
        "200": { description: "Success" },
        "4XX": { description: "Client error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      },
    };
    if (route.description) operation.description = route.description;
    const parameters: unknown[] = [];
    for (const match of route.path.matchAll(/\{(\w+)\}/g)) {
      parameters.push({ name: match[1], in: "path", required: true, schema: { type: "string" } });
    }
    if (route.query) {
      const schema = schemaOf(route.query);
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const [name, propertySchema] of Object.entries(properties)) {
        parameters.push({ name, in: "query", required: required.has(name), schema: propertySchema });
      }
    }
    if (parameters.length) operation.parameters = parameters;
    if (route.multipartFiles) {
      const documented = route.body ?? route.documentedBody;
      const body = documented ? schemaOf(documented) : { type: "object", properties: {} };
      const properties = { ...((body.properties as object) ?? {}) } as Record<string, unknown>;
      for (const file of route.multipartFiles) properties[file] = { type: "string", format: "binary" };
      operation.requestBody = { required: true, content: { "multipart/form-data": { schema: { ...body, properties } } } };
    } else if (route.body ?? route.documentedBody) {
      const schema = schemaOf((route.body ?? route.documentedBody)!);
      operation.requestBody = { required: true, content: { "application/json": { schema } } };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Tokenized-Asset Transaction API", version: info.version },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: { securitySchemes, schemas: { Error: errorSchema } },
  };
}
