import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Every tool the issue names (the hosted server's list), plus what this API adds (RAMS, KYC, webhooks, events). */
export const HOSTED_TOOLS = [
  "configure",
  "get_config",
  "prepare_transactions",
  "send_transactions",
  "get_transaction_status",
  "create_tokenization",
  "create_sto",
  "invest_in_sto",
  "claim_sto",
  "close_sto",
  "mint_tokens",
  "whitelist_investor",
  "burn_tokens",
  "transfer_tokens",
  "approve_tokens",
  "distribute_dividend",
  "get_network_info",
  "get_token_info",
  "get_tokenizer_info",
  "get_stos",
  "get_sto_by_id",
  "get_investments_by_sto_id",
  "get_investor_info",
  "get_allowance",
  "get_whitelist_status",
  "get_balance_whitelist",
  "get_sto_balance",
  "get_dividend_info",
  "agent_register",
  "agent_set_uri",
  "agent_set_metadata",
  "agent_set_wallet",
  "agent_give_feedback",
  "agent_revoke_feedback",
  "agent_append_feedback_response",
  "agent_create_token",
  "agent_mint_token",
  "agent_burn_token",
  "agent_transfer_token",
  "agent_transfer_from_token",
  "agent_approve_token",
];
export const ADDED_TOOLS = [
  "rams_grant_mandate",
  "rams_extend_mandate",
  "rams_revoke_mandate",
  "rams_execute",
  "rams_can_execute",
  "rams_compliance_status",
  "rams_status",
  "create_kyc_link",
  "create_webhook",
  "list_webhooks",
  "wait_for_transaction",
];

/** An MCP client (the official SDK's) connected to `url` (…/mcp) over Streamable HTTP with `headers` on every request. */
export async function httpClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "tak-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A tool result's structured content, after checking it is not an error. */
export function structured<T = any>(answer: unknown): T {
  const result = answer as { isError?: unknown; structuredContent?: unknown; content?: unknown };
  expect(result.isError, JSON.stringify(result.content)).to.not.equal(true);
  return result.structuredContent as T;
}

/** A tool error's API error body, after checking it is one. */
export function toolErrorOf(answer: unknown): { code: string; message: string; param?: string } {
  const result = answer as { isError?: unknown; structuredContent?: unknown };
  expect(result.isError, JSON.stringify(result.structuredContent)).to.equal(true);
  return (result.structuredContent as { error: { code: string; message: string; param?: string } }).error;
}
