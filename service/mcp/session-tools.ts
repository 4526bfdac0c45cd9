import { z } from "zod";
import { TransactionStatus } from "../wire/responses";
import { objectSchema, schemaParts, type Json } from "./json-schema";
import { ToolError } from "./tool";

/**
 * The tools that are not routes: the session's configuration (configure, get_config, the names the hosted server
 * uses) and wait_for_transaction, which follows a batch on the event stream (GET /events) until it ends and then
 * answers what GET /get-transaction-status answers.
 */

/** How a tool is listed (tools/list). */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: Json;
  outputSchema?: Json;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export const ConfigView = z
  .object({
    env: z.string().meta({ description: "The deployment's environment (sandbox or production)" }),
    baseUrl: z.string().meta({ description: "Where the API answers" }),
    hasApiKey: z.boolean().meta({ description: "Calls carry an API key" }),
    hasPrivateKey: z
      .boolean()
      .meta({ description: "A local wallet signs transactions and pays x402 (stdio server only)" }),
  })
  .meta({ description: "The session's configuration, never a secret" });
export type ConfigView = z.infer<typeof ConfigView>;

export const ConfigureInput = z.object({
  env: z
    .string()
    .optional()
    .meta({ description: "The environment expected (sandbox or production): refused when the service is another" }),
  baseUrl: z
    .string()
    .optional()
    .meta({ description: "stdio server only: the service to talk to (default TAK_BASE_URL)" }),
  apiKey: z.string().optional().meta({ description: 'The API key; "" to call without one (x402 pays)' }),
  privateKey: z
    .string()
    .optional()
    .meta({ description: "stdio server only: the wallet that signs and pays locally (never sent anywhere)" }),
});
export type ConfigureInput = z.infer<typeof ConfigureInput>;

/** The longest wait_for_transaction waits (MCP clients time requests out: the SDK's default is 60 s). */
export const MAX_WAIT_SECONDS = 600;
export const DEFAULT_WAIT_SECONDS = 45;

export const WaitInput = z.object({
  txId: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex characters")
    .meta({ description: "The txId a prepare answered" }),
  streamToken: z.string().max(100).optional().meta({
    description:
      "For a batch prepared without an API key: the streamToken its prepare answered (the proof that lets its events be followed)",
  }),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .meta({
      description: `Give up after this long and answer the batch's status as it is then (default ${DEFAULT_WAIT_SECONDS}; raise the client's request timeout to wait longer)`,
    }),
});

const object = (type: z.ZodType, io: "input" | "output") => objectSchema([schemaParts(type, io)], "allOf");
const answers = (...types: z.ZodType[]) =>
  objectSchema(
    types.map((t) => schemaParts(t, "output")),
    "anyOf",
  );

const CONFIGURE_DESCRIPTION = {
  http: "Checks the session's configuration and answers it (as get_config). Over HTTP the API key is the x-api-key (or Authorization: Bearer) header of the MCP connection, and a private key is never accepted: to sign and pay with a local wallet, run the stdio server (npm run --silent mcp) with TAK_PRIVATE_KEY on your own machine.",
  stdio:
    'Changes this stdio server\'s configuration for the rest of the session: the service (baseUrl), the API key (apiKey, "" for none) and the local wallet (privateKey: it signs prepared transactions and x402 payments here, and is never sent to the service).',
};

/** configure, get_config and wait_for_transaction as listed by the HTTP endpoint or the stdio server. */
export function sessionTools(transport: "http" | "stdio"): ToolListing[] {
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  return [
    {
      name: "configure",
      title: "Configure the session",
      description: CONFIGURE_DESCRIPTION[transport],
      inputSchema: object(ConfigureInput, "input"),
      outputSchema: answers(ConfigView, ToolError),
      annotations: {
        title: "Configure the session",
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: "get_config",
      title: "The session's configuration",
      description: "The session's configuration: env, baseUrl, hasApiKey, hasPrivateKey (never a secret).",
      inputSchema: { type: "object", properties: {} },
      outputSchema: answers(ConfigView, ToolError),
      annotations: { title: "The session's configuration", ...readOnly },
    },
    {
      name: "wait_for_transaction",
      title: "Wait until a batch ends",
      description:
        "Follows the batch's events on the event stream (GET /events?txId=…) until it ends (success or rejected) or the timeout passes, then answers its status as get_transaction_status does. A batch prepared under an API key needs that key; one prepared without a key, the streamToken its prepare answered.",
      inputSchema: object(WaitInput, "input"),
      outputSchema: answers(TransactionStatus, ToolError),
      annotations: { title: "Wait until a batch ends", ...readOnly, openWorldHint: true },
    },
  ];
}
