import { z } from "zod";
import { TransactionStatus } from "../wire/responses";
import { objectSchema, schemaParts, type Json } from "./json-schema";
import { answersSchema } from "./output-schema";
import type { ToolAnnotations } from "./tool";

/**
 * The tools that are not routes: the session's configuration (configure, get_config, the names the hosted server
 * uses) and wait_for_transaction, which follows a batch on the event stream (GET /events) until it ends and then
 * answers what GET /get-transaction-status answers.
 */

/** How a tool is listed (tools/list). */
export interface ToolListing {
  name: string;
  title?: string;
  description: string;
  inputSchema: Json;
  outputSchema?: Json;
  annotations?: ToolAnnotations | Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export const ConfigView = z
  .object({
    env: z.string().meta({ description: "sandbox or production" }),
    baseUrl: z.string().meta({ description: "Where the API answers" }),
    hasApiKey: z.boolean(),
    hasPrivateKey: z.boolean().meta({ description: "A local wallet signs and pays (stdio server only)" }),
    walletAddress: z.string().optional().meta({ description: "That wallet's address" }),
  })
  .meta({ description: "The session's configuration, never a secret" });
export type ConfigView = z.infer<typeof ConfigView>;

/**
 * configure's arguments. Only `env` is checked against the deployment; the service, the API key and the wallet come
 * from where the session was set up (the connection's headers, the stdio server's environment), never from a tool
 * call: a model cannot be talked into pointing the session elsewhere. The other names the hosted server takes are
 * answered with where to set them.
 */
export const ConfigureInput = z.object({
  env: z.string().optional().meta({ description: "The environment expected (sandbox or production)" }),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  privateKey: z.string().optional(),
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
    description: "A batch prepared without an API key: the streamToken its prepare answered",
  }),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .meta({ description: `Default ${DEFAULT_WAIT_SECONDS}; then the status as it is` }),
});

const object = (type: z.ZodType, io: "input" | "output") => objectSchema([schemaParts(type, io)], "allOf");

const CONFIGURE_DESCRIPTION = {
  http: "Checks env against this deployment and answers the configuration (as get_config). The API key is the x-api-key (or Authorization: Bearer) header of the connection; a private key is never taken here (the stdio server, npm run --silent mcp, signs with one on your machine).",
  stdio:
    "Checks env against the service and answers the configuration (as get_config). The service, the API key and the wallet are this server's environment (TAK_BASE_URL, TAK_API_KEY, TAK_PRIVATE_KEY): no tool call changes them.",
};

const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** configure, get_config and wait_for_transaction as listed by the HTTP endpoint or the stdio server. */
export function sessionTools(transport: "http" | "stdio"): ToolListing[] {
  const { baseUrl: _b, apiKey: _a, privateKey: _p, ...configureShape } = ConfigureInput.shape;
  const configView = answersSchema([ConfigView]);
  return [
    {
      name: "configure",
      description: CONFIGURE_DESCRIPTION[transport],
      inputSchema: object(z.object(configureShape), "input"),
      outputSchema: configView,
      annotations: READ,
    },
    {
      name: "get_config",
      description: `The session's configuration: env, baseUrl, hasApiKey, hasPrivateKey${transport === "stdio" ? ", walletAddress" : ""} (never a secret).`,
      inputSchema: { type: "object", properties: {} },
      outputSchema: configView,
      annotations: READ,
    },
    {
      name: "wait_for_transaction",
      description:
        "Follows a batch on the event stream until it ends (success or rejected) or the timeout, then answers its status as get_transaction_status does. A keyed batch needs its key; a keyless one the streamToken its prepare answered.",
      inputSchema: object(WaitInput, "input"),
      outputSchema: answersSchema([TransactionStatus]),
      annotations: { ...READ, openWorldHint: true },
    },
  ];
}
