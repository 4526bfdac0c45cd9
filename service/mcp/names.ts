/**
 * Tool names. A generated name is the snake_case of the route's operationId (getTokenInfo → get_token_info) or of the
 * method a route prepares (agentSetURI → agent_set_uri). Where the hosted MCP server of the API we are modelled on
 * published another name for the same operation, the tool takes that name (HOSTED_NAMES): an agent written for it finds
 * its tools here under the names it knows.
 */

/** camelCase (acronyms included) → snake_case: agentSetURI → agent_set_uri, getApiNetworkInfo → get_api_network_info. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_|_$/g, "")
    .toLowerCase();
}

/** Generated name → the hosted server's name for the same operation (its public tool list, docs/mcp in the reference). */
export const HOSTED_NAMES: Readonly<Record<string, string>> = {
  new_tokenization: "create_tokenization",
  new_sto: "create_sto",
  new_invest: "invest_in_sto",
  claim_tokens: "claim_sto",
  close_offer: "close_sto",
  mint_token: "mint_tokens",
  whitelist: "whitelist_investor",
  burn_token: "burn_tokens",
  transfer_to: "transfer_tokens",
  approve: "approve_tokens",
  dividend_distribution: "distribute_dividend",
  get_dividend_distribution: "get_dividend_info",
};

/** The name a tool is listed under: the hosted name of its generated name, if there is one. */
export function toolName(generated: string): string {
  return HOSTED_NAMES[generated] ?? generated;
}
