import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createSandbox } from "../scripts/lib/sandbox";
import { TOOLSETS } from "../service/mcp/toolsets";
import { serviceEnv } from "./reads";
import { startServiceProcess } from "./service-process";

/** The budget an agent can load by default (issue 49): at most 40 tools and 48 KB of tools/list JSON, about 12k tokens. */
export const MCP_TARGET = { tools: 40, bytes: 48 * 1024 };

export interface McpListRow {
  transport: "http" | "stdio";
  /** The toolsets asked for ("default" when none), with " (read-only)" for read-only. */
  toolsets: string;
  tools: number;
  /** The JSON-RPC answer to tools/list as it travels (the HTTP body; over stdio, the line the server writes). */
  bytes: number;
  /** bytes / 4: what a model's tokenizer makes of JSON, roughly. */
  estimatedTokens: number;
  /** Only the default list has a target. */
  pass?: boolean;
}

const row = (transport: McpListRow["transport"], toolsets: string, tools: number, bytes: number): McpListRow => ({
  transport,
  toolsets,
  tools,
  bytes,
  estimatedTokens: Math.round(bytes / 4),
  ...(toolsets === "default" ? { pass: tools <= MCP_TARGET.tools && bytes <= MCP_TARGET.bytes } : {}),
});

/** tools/list over HTTP as a client without a session sends it: the body's size, and how many tools. */
async function httpList(url: string, query: string): Promise<{ tools: number; bytes: number }> {
  const res = await fetch(`${url}/mcp${query}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`tools/list${query} answered ${res.status}: ${text.slice(0, 200)}`);
  return {
    tools: (JSON.parse(text) as { result: { tools: unknown[] } }).result.tools.length,
    bytes: Buffer.byteLength(text),
  };
}

/** tools/list over stdio: the stdio server (bin/run.js mcp) with a wallet, each toolset asked for at start. */
async function stdioList(url: string, env: Record<string, string>): Promise<{ tools: number; bytes: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(__dirname, "..", "bin", "run.js"), "mcp"],
    cwd: path.join(__dirname, ".."),
    env: { TAK_BASE_URL: url, ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = await client.listTools();
    // The line the server wrote: the SDK's stdio transport serializes each message as JSON, one per line.
    return { tools: result.tools.length, bytes: Buffer.byteLength(JSON.stringify({ result, jsonrpc: "2.0", id: 1 })) };
  } finally {
    await client.close();
  }
}

/**
 * tools/list as an agent loads it: by default, per toolset, everything, and read-only, over HTTP (POST /mcp of the
 * service in its own process) and over stdio (the stdio server with a wallet, as an agent that signs runs it).
 */
export async function measureMcp(hre: HardhatRuntimeEnvironment): Promise<McpListRow[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-bench-mcp-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const service = await startServiceProcess(serviceEnv(sandbox, path.join(dir, "data"), "embedded"));
  const asked: [string, string, Record<string, string>][] = [
    ["default", "", {}],
    ...TOOLSETS.map((t): [string, string, Record<string, string>] => [
      t.name,
      `?toolsets=${t.name}`,
      { TAK_TOOLSETS: t.name },
    ]),
    ["all", "?toolsets=all", { TAK_TOOLSETS: "all" }],
    ["all (read-only)", "?toolsets=all&readonly=true", { TAK_TOOLSETS: "all", TAK_READONLY: "1" }],
  ];
  const rows: McpListRow[] = [];
  try {
    for (const [name, query] of asked) {
      const { tools, bytes } = await httpList(service.url, query);
      rows.push(row("http", name, tools, bytes));
    }
    const wallet = { TAK_PRIVATE_KEY: sandbox.accounts[5].privateKey };
    for (const [name, , env] of asked) {
      const { tools, bytes } = await stdioList(service.url, { ...wallet, ...env });
      rows.push(row("stdio", name, tools, bytes));
    }
  } finally {
    await service.stop();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
