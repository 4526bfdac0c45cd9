import type { RequestListener } from "node:http";
import type { Config } from "../config";
import { NEVER_SEND_A_KEY } from "../http/input-guard";
import { httpCallOf, toolError, toolResultOf, type CallToolResult } from "./calls";
import { dispatch, dispatchStream, type Origin } from "./dispatch";
import { waitForEvent } from "./event-wait";
import { ConfigureInput, DEFAULT_WAIT_SECONDS, WaitInput, type ConfigView } from "./session-tools";
import type { RouteTool } from "./tool";

/** What configure and get_config see of an HTTP session: the service, where the MCP request reached it, its key. */
export interface HttpSession {
  config: Config;
  /** The scheme and host the MCP request reached the service at. */
  reachedAt: string;
  presentedKey?: string;
}

/** Told to whoever offers this service a private key. */
export const USE_THE_STDIO_SERVER =
  `privateKey: ${NEVER_SEND_A_KEY}. This endpoint never takes one; to sign and pay with your own wallet, run the stdio server on your machine ` +
  "(npm run --silent mcp, or node bin/run.js mcp in an install) with TAK_BASE_URL and TAK_PRIVATE_KEY: it signs there and sends only signed transactions";

function baseUrlOf(session: HttpSession): string {
  return (session.config.PUBLIC_BASE_URL ?? session.reachedAt).replace(/\/$/, "");
}

function view(session: HttpSession): ConfigView {
  return {
    env: session.config.ENVIRONMENT,
    baseUrl: baseUrlOf(session),
    hasApiKey: session.presentedKey !== undefined,
    hasPrivateKey: false,
  };
}

const answer = (value: ConfigView): CallToolResult => ({
  structuredContent: value,
  content: [{ type: "text", text: JSON.stringify(value) }],
});

/**
 * configure (and get_config, `args` empty) over HTTP: a private key is refused (the service never takes one); the
 * rest is checked against what the connection is (this endpoint keeps no session) and the configuration answered.
 */
export function configureOverHttp(session: HttpSession, args: Record<string, unknown>): CallToolResult {
  // The key is neither kept nor echoed: the refusal names the argument only.
  if (args.privateKey !== undefined)
    return toolError("BAD_REQUEST", USE_THE_STDIO_SERVER, "privateKey", { field: "privateKey" });
  const parsed = ConfigureInput.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".");
    return toolError("BAD_REQUEST", `${field} ${issue.message}`, field, { field });
  }
  const current = view(session);
  const { env, baseUrl, apiKey } = parsed.data;
  if (env !== undefined && env !== current.env) {
    return toolError(
      "BAD_REQUEST",
      `env: this is the ${current.env} deployment, not ${env}: connect to that deployment's /mcp (credentials of one do not work on the other)`,
      "env",
      { field: "env" },
    );
  }
  if (baseUrl !== undefined && baseUrl.replace(/\/$/, "") !== current.baseUrl) {
    return toolError(
      "BAD_REQUEST",
      `baseUrl: this endpoint is ${current.baseUrl}; to use another service, connect your MCP client to its /mcp`,
      "baseUrl",
      { field: "baseUrl" },
    );
  }
  if (apiKey !== undefined && (apiKey || undefined) !== session.presentedKey) {
    return toolError(
      "BAD_REQUEST",
      "apiKey: over HTTP the API key is the x-api-key (or Authorization: Bearer) header of the MCP connection, set in your client's configuration; this endpoint keeps no session to hold another",
      "apiKey",
      { field: "apiKey" },
    );
  }
  return answer(current);
}

/**
 * wait_for_transaction: the batch's events through GET /events (the same gate as any client's stream: the key's own
 * batch, or a batch prepared without a key with its streamToken) until batch.completed or the timeout, then GET
 * /get-transaction-status.
 */
export async function waitForTransaction(
  app: RequestListener,
  statusTool: RouteTool,
  args: Record<string, unknown>,
  credentials: Record<string, string>,
  origin: Origin,
): Promise<CallToolResult> {
  const parsed = WaitInput.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".");
    return toolError("BAD_REQUEST", `${field} ${issue.message}`, field, { field });
  }
  const { txId, streamToken, timeoutSeconds = DEFAULT_WAIT_SECONDS } = parsed.data;
  const query = new URLSearchParams({ txId, types: "batch.completed", ...(streamToken ? { streamToken } : {}) });
  const stream = await dispatchStream(
    app,
    { method: "GET", url: `/events?${query.toString()}`, headers: { accept: "text/event-stream", ...credentials } },
    "wait_for_transaction",
    origin,
  );
  if (stream.status !== 200) {
    const chunks: Buffer[] = [];
    for await (const chunk of stream.body) chunks.push(Buffer.from(chunk as Buffer));
    return toolResultOf({
      status: stream.status,
      headers: stream.headers,
      text: Buffer.concat(chunks).toString("utf8"),
    });
  }
  try {
    await waitForEvent(stream.body, "batch.completed", timeoutSeconds * 1000);
  } finally {
    stream.close();
  }
  return toolResultOf(
    await dispatch(app, httpCallOf(statusTool, { txId }, undefined, credentials), "wait_for_transaction", origin),
  );
}
