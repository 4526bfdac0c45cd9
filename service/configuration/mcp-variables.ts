import { z } from "zod";
import { variable } from "./variable-docs";
import { list } from "./value-rules";

/**
 * The variables of the Model Context Protocol: the one the service reads for POST /mcp (`mcpVariables`, joined with
 * the others in service/configuration/variables.ts), and those of the stdio server (`stdioVariables`: `npm run mcp`,
 * on the user's machine, reads them; the service does not, so a user's wallet key is never part of its
 * configuration). docs/configuration.md lists both.
 */

const originElement = (text: string): string => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("not an origin such as https://app.example.com");
  }
  if (!/^https?:$/.test(url.protocol) || url.origin !== text.replace(/\/$/, ""))
    throw new Error("not an origin (scheme, host and port only) such as https://app.example.com");
  return url.origin;
};

export const mcpVariables = {
  MCP_ALLOWED_ORIGINS: variable(list(originElement, "comma-separated origins (https://app.example.com)").optional(), {
    group: "mcp",
    rule: "comma-separated origins (scheme, host and port)",
    about:
      "Web pages (their origins) that may call POST /mcp from a browser besides the service's own (PUBLIC_BASE_URL, or the address it listens on). A request with another Origin is refused with 403 (DNS rebinding); requests without Origin (non-browser clients) always pass.",
  }),
};

/** An amount of USDC with at most 6 decimals (the stdio server counts it in base units: settings.ts). */
export const usdcAmount = z
  .string()
  .trim()
  .regex(/^\d+(\.\d{1,6})?$/, "must be an amount of USDC such as 0.5 (at most 6 decimals)");

/** An amount of gwei with at most 9 decimals. */
export const gweiAmount = z
  .string()
  .trim()
  .regex(/^\d+(\.\d{1,9})?$/, "must be an amount of gwei such as 2 or 0.05 (at most 9 decimals)");

const rpcElement = (text: string): { chainId: number; url: string } => {
  const match = /^(\d+)=(https?:\/\/\S+)$/.exec(text);
  if (!match || !Number.isSafeInteger(Number(match[1])) || Number(match[1]) <= 0)
    throw new Error("not <chainId>=<http(s) URL>");
  return { chainId: Number(match[1]), url: match[2] };
};

export const stdioVariables = {
  TAK_BASE_URL: variable(z.string().trim().url("must be a URL such as http://127.0.0.1:3000"), {
    group: "mcp",
    about: "stdio server: the service it serves the tools of (its POST /mcp). Required.",
  }),
  TAK_API_KEY: variable(z.string().trim().optional(), {
    group: "mcp",
    about: "stdio server: the API key its calls carry; without one, paid tools are paid with x402.",
    secret: true,
  }),
  TAK_PRIVATE_KEY: variable(z.string().trim().optional(), {
    group: "mcp",
    about:
      "stdio server: the wallet that signs prepared transactions and x402 payments on this machine (never sent anywhere); 64 hex characters, with or without 0x.",
    secret: true,
  }),
  TAK_MAX_PAYMENT: variable(usdcAmount.default("1"), {
    group: "mcp",
    rule: "USDC, at most 6 decimals",
    about: "stdio server: the most it pays for one tool call, every payment of the call counted (USDC).",
  }),
  TAK_MAX_SPEND: variable(usdcAmount.default("5"), {
    group: "mcp",
    rule: "USDC, at most 6 decimals",
    about:
      "stdio server: the most it pays in one session, all calls together (USDC); a call that would pass it is refused.",
  }),
  TAK_MAX_FEE_GWEI: variable(gweiAmount.optional(), {
    group: "mcp",
    rule: "gwei, at most 9 decimals",
    about:
      "stdio server: the highest maxFeePerGas it signs (gwei). Without it: 3 times the chain's latest base fee, read from TAK_RPC_URLS, plus the tip; without either, 100 gwei.",
  }),
  TAK_RPC_URLS: variable(list(rpcElement, "comma-separated <chainId>=<URL>").optional(), {
    group: "mcp",
    rule: "comma-separated `<chainId>=<http(s) URL>`",
    about:
      "stdio server: its own RPC per chain (84532=https://sepolia.base.org,…), to read the base fee its fee cap is a multiple of: the service's word is not taken for it.",
  }),
  TAK_TOOLSETS: variable(z.string().trim().default("default"), {
    group: "mcp",
    rule: "comma-separated toolset names",
    about:
      "stdio server: the toolsets listed (comma separated, `all`, `default`); the model may list and enable others during the session (list_toolsets, enable_toolset).",
  }),
  TAK_READONLY: variable(z.enum(["true", "false", "1", "0", ""]).default("false"), {
    group: "mcp",
    rule: "`1` / `true` or `0` / `false`",
    about: "stdio server: `1` or `true` lists no write and refuses one, whatever toolset is enabled.",
  }),
  TAK_CONFIRM: variable(z.enum(["value-moving", "all", "none"]).default("value-moving"), {
    group: "mcp",
    about:
      "stdio server: which writes it shows decoded to the person for confirmation before signing, where the client supports elicitation: those that move value or rights (`value-moving`), `all`, or `none`.",
  }),
  TAK_DEPLOYMENTS_DIR: variable(z.string().trim().optional(), {
    group: "mcp",
    rule: "a directory",
    about:
      "stdio server: the deployment files (<chainId>.json) whose contract addresses it pins for those chains. Default: the package's deployments/; on other chains the first addresses the service answers are pinned for the session.",
  }),
};

export type StdioVariable = keyof typeof stdioVariables;
