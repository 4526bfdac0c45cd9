import { toolError, type CallToolResult } from "../calls";
import { ConfigureInput, sessionTools, type ConfigView, type ToolListing } from "../session-tools";
import { TOOLSETS } from "../toolsets";

/**
 * The tools the stdio server answers itself: configure and get_config (the session's configuration, which no tool call
 * changes), and the toolsets a model may list and enable during the session (dynamic discovery: enabling one announces
 * the new list with notifications/tools/list_changed).
 */

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const LOCAL_TOOLS: ToolListing[] = [
  ...sessionTools("stdio").filter((t) => t.name !== "wait_for_transaction"),
  {
    name: "list_toolsets",
    description: "The toolsets of this server: each one's tools, and whether it is enabled (listed).",
    inputSchema: { type: "object", properties: {} },
    annotations: READ,
  },
  {
    name: "enable_toolset",
    description: "Lists the tools of a toolset from now on (list_toolsets names them); the tool list changes at once.",
    inputSchema: {
      type: "object",
      properties: { toolset: { type: "string", enum: TOOLSETS.map((t) => t.name) } },
      required: ["toolset"],
    },
    // It changes only what this server lists, nothing of the world: a read-only session may enable toolsets too.
    annotations: READ,
  },
];

export const ok = (value: Record<string, unknown>): CallToolResult => ({
  structuredContent: value,
  content: [{ type: "text", text: JSON.stringify(value) }],
});

const WHERE: Record<string, string> = {
  baseUrl: "TAK_BASE_URL",
  apiKey: "TAK_API_KEY",
  privateKey: "TAK_PRIVATE_KEY",
};

/**
 * configure over stdio: `env` is checked against the service; the service, the key and the wallet are the server's
 * environment and no tool call changes them (the refusal names the variable, never echoes a value).
 */
export function configureOverStdio(args: Record<string, unknown>, view: ConfigView): CallToolResult {
  const parsed = ConfigureInput.safeParse(args);
  if (!parsed.success) {
    const field = parsed.error.issues[0].path.join(".");
    return toolError("BAD_REQUEST", `${field} ${parsed.error.issues[0].message}`, field, { field });
  }
  for (const [field, variable] of Object.entries(WHERE))
    if (parsed.data[field as keyof ConfigureInput] !== undefined)
      return toolError(
        "BAD_REQUEST",
        `${field}: this server's ${field} is ${variable} in its environment, set where the server is configured; no tool call changes it`,
        field,
        { field },
      );
  const { env } = parsed.data;
  if (env !== undefined && env !== view.env)
    return toolError(
      "BAD_REQUEST",
      `env: the service at ${view.baseUrl} is the ${view.env} deployment, not ${env}`,
      "env",
      {
        field: "env",
      },
    );
  return ok({ ...view });
}

/** list_toolsets' answer. */
export function toolsetsView(enabled: ReadonlySet<string>, readOnly: boolean): Record<string, unknown> {
  return {
    readOnly,
    toolsets: TOOLSETS.map((t) => ({
      name: t.name,
      description: t.description,
      enabled: enabled.has(t.name),
      tools: t.tools,
    })),
  };
}
