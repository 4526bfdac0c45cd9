import { z, type ZodType } from "zod";

/**
 * Request fields the API accepts for the clients that already send them, and does not offer to new ones: the second
 * name of a field (tokenName beside name, spender beside spenderAddress), or a field that only says what the request
 * already says (a prepare body's `method` on /prepare-transactions/{method}). The REST API keeps taking them
 * (docs/wire-conventions.md); the MCP tools list one name per field (their JSON Schema leaves these out).
 */
export interface WireOnly {
  /** The field this one is another name of. */
  aliasOf?: string;
  /** Why else a new client has no use for it. */
  reason?: string;
}

export const wireOnlyFields = z.registry<WireOnly>();

/** `schema` as the second name of the field `canonical` (the first wins when a request sends both). */
export function aliasOf<T extends ZodType>(schema: T, canonical: string): T {
  wireOnlyFields.add(schema, { aliasOf: canonical });
  return schema;
}

/** `schema` as a field kept for existing clients only, with the reason. */
export function wireOnly<T extends ZodType>(schema: T, reason: string): T {
  wireOnlyFields.add(schema, { reason });
  return schema;
}
