/**
 * Toolsets: the tools in named groups, so that an agent loads the few it needs (a tool list is context the agent pays
 * for on every turn). A connection chooses them with `?toolsets=` on the /mcp URL or the X-MCP-Toolsets header (the
 * stdio server: TAK_TOOLSETS); `all` is every toolset, `default` the defaults (what an agent needs for its own day:
 * its identity, its token, its mandates, its transactions). Single tools are added with `?tools=` / X-MCP-Tools.
 * Read-only (`?readonly=true`, X-MCP-Readonly, TAK_READONLY=1) lists no write and refuses one, whatever was asked.
 *
 * Every tool is in exactly one toolset: the catalogue refuses a tool none names (a new route is a tool someone must
 * place), and a toolset naming a tool that does not exist.
 */

export interface Toolset {
  name: string;
  description: string;
  tools: readonly string[];
  /** Listed when a connection names no toolset. */
  default?: true;
}

export const TOOLSETS: readonly Toolset[] = [
  {
    name: "context",
    description: "The session and the networks: configuration, contract addresses of a chain",
    tools: ["configure", "get_config", "get_network_info"],
    default: true,
  },
  {
    name: "transactions",
    description: "Send what a tool prepared and follow it: send_transactions, status, wait",
    tools: ["send_transactions", "get_transaction_status", "wait_for_transaction"],
    default: true,
  },
  {
    name: "agents",
    description: "ERC-8004 agents: register, profile, wallet, ownership, reputation; agent reads",
    tools: [
      "agent_register",
      "agent_set_uri",
      "agent_set_metadata",
      "agent_set_wallet",
      "agent_transfer_ownership",
      "agent_give_feedback",
      "agent_revoke_feedback",
      "agent_append_feedback_response",
      "get_agents",
      "get_agent_info",
      "get_agent_transactions",
      "agents_registration_json",
    ],
    default: true,
  },
  {
    name: "agent_tokens",
    description: "An agent's own ERC-20: create, mint, burn, transfer, approve",
    tools: [
      "agent_create_token",
      "agent_mint_token",
      "agent_burn_token",
      "agent_transfer_token",
      "agent_transfer_from_token",
      "agent_approve_token",
    ],
    default: true,
  },
  {
    name: "rams",
    description: "ERC-8226 for the agent: execute under a mandate, and the reads that say whether it may",
    tools: ["rams_execute", "rams_can_execute", "rams_mandate", "rams_status", "rams_compliance_status"],
    default: true,
  },
  {
    name: "rams_mandates",
    description: "ERC-8226 for the principal: grant, revoke, extend mandates, operators, and the typed data to sign",
    tools: [
      "rams_grant_mandate",
      "rams_revoke_mandate",
      "rams_extend_mandate",
      "rams_set_operator",
      "rams_invalidate_nonces",
      "rams_typed_data_grant_mandate",
      "rams_typed_data_revoke_mandate",
      "rams_typed_data_extend_mandate",
      "rams_typed_data_set_operator",
    ],
  },
  {
    name: "rams_admin",
    description: "ERC-8226 roles: compliance (principals), executor actions, the enforcer's freeze",
    tools: [
      "rams_grant_principal",
      "rams_revoke_principal",
      "rams_set_executor_action",
      "rams_executor_action",
      "rams_freeze_agent",
      "rams_unfreeze_agent",
    ],
  },
  {
    name: "tokens",
    description: "Security tokens: tokenize, mint, burn, transfer, approve, whitelist; token and holder reads",
    tools: [
      "create_tokenization",
      "mint_tokens",
      "burn_tokens",
      "transfer_tokens",
      "transfer_from",
      "approve_tokens",
      "whitelist_investor",
      "get_token_info",
      "get_tokenizer_info",
      "get_balance_whitelist",
      "get_whitelist_status",
      "get_allowance",
      "get_investor_info",
      "get_investors",
      "get_holders",
      "check_transfer",
    ],
  },
  {
    name: "issuer_controls",
    description:
      "A token issuer's controls: freezes, forced transfer, wallet recovery (request, cancel, execute), pause, roles, the tokenizer's handover, upgrades",
    tools: [
      "freeze_tokens",
      "unfreeze_tokens",
      "freeze_address",
      "forced_transfer",
      "recover_wallet",
      "cancel_wallet_recovery",
      "execute_wallet_recovery",
      "pause_token",
      "unpause_token",
      "grant_token_role",
      "revoke_token_role",
      "transfer_tokenizer",
      "accept_tokenizer",
      "cancel_tokenizer_transfer",
      "schedule_token_upgrade",
      "cancel_token_upgrade",
      "execute_token_upgrade",
      "get_token_controls",
    ],
  },
  {
    name: "offerings",
    description: "Security token offerings (STOs): open, invest, claim, close, resolve; offering reads",
    tools: [
      "create_sto",
      "invest_in_sto",
      "claim_sto",
      "close_sto",
      "resolve_offering_claim",
      "withdraw_proceeds",
      "get_stos",
      "get_sto_by_id",
      "get_investments_by_sto_id",
      "get_sto_balance",
    ],
  },
  {
    name: "dividends",
    description: "Dividends of a security token: distribute, claim, read",
    tools: ["distribute_dividend", "claim_dividends", "get_dividend_info"],
  },
  {
    name: "kyc",
    description: "Investor onboarding: KYC links and the investor's own steps",
    tools: ["create_kyc_link", "kyc", "kyc_message", "kyc_submit"],
  },
  {
    name: "events",
    description: "Webhooks: endpoints, deliveries, tests and redeliveries",
    tools: [
      "create_webhook",
      "list_webhooks",
      "get_webhook",
      "update_webhook",
      "delete_webhook",
      "rotate_webhook_secret",
      "send_webhook_test",
      "list_webhook_deliveries",
      "redeliver_webhook",
    ],
  },
  {
    name: "payments",
    description: "x402: the paid resources and their prices, the sandbox's governance-token faucet",
    tools: ["well_known_x402", "faucet_bkn"],
  },
  {
    name: "prepare",
    description: "prepare_transactions: any method by its name (every method also has a tool of its own)",
    tools: ["prepare_transactions"],
  },
];

export const DEFAULT_TOOLSETS: readonly string[] = TOOLSETS.filter((t) => t.default).map((t) => t.name);

const byTool = new Map(TOOLSETS.flatMap((set) => set.tools.map((tool) => [tool, set.name] as const)));

/** The toolset a tool is in. */
export function toolsetOf(tool: string): string | undefined {
  return byTool.get(tool);
}

/** A toolset selection that names what does not exist: the names it does not know, and the ones it could mean. */
export class SelectionError extends Error {
  constructor(
    message: string,
    readonly field: "toolsets" | "tools",
  ) {
    super(message);
  }
}

/** What a connection lists and may call. */
export interface Selection {
  toolsets: ReadonlySet<string>;
  /** Single tools added to the toolsets. */
  tools: ReadonlySet<string>;
  readOnly: boolean;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The selection a connection asks for: `toolsets` (comma separated names, `all`, `default`; none: the defaults),
 * `tools` (comma separated tool names, added), `readOnly`. A name that is no toolset or tool is refused, with the
 * names there are: a misspelt toolset silently left out would look like a tool that does not exist.
 */
export function selectionOf(
  asked: { toolsets?: string; tools?: string; readOnly?: boolean },
  knownTools: ReadonlySet<string>,
): Selection {
  const names = list(asked.toolsets);
  const toolsets = new Set<string>();
  for (const name of names.length ? names : ["default"]) {
    if (name === "all") TOOLSETS.forEach((t) => toolsets.add(t.name));
    else if (name === "default") DEFAULT_TOOLSETS.forEach((t) => toolsets.add(t));
    else if (TOOLSETS.some((t) => t.name === name)) toolsets.add(name);
    else
      throw new SelectionError(
        `toolsets: no toolset named ${JSON.stringify(name)}; toolsets: ${TOOLSETS.map((t) => t.name).join(", ")}, all, default`,
        "toolsets",
      );
  }
  const tools = new Set<string>();
  for (const name of list(asked.tools)) {
    if (!knownTools.has(name))
      throw new SelectionError(
        `tools: no tool named ${JSON.stringify(name)} (tools/list with toolsets=all lists them)`,
        "tools",
      );
    tools.add(name);
  }
  return { toolsets, tools, readOnly: asked.readOnly === true };
}

/** Whether a selection lists (and lets one call) `tool`, whose toolset is `toolset`. */
export function selects(selection: Selection, tool: { name: string; readOnly: boolean }): boolean {
  if (selection.readOnly && !tool.readOnly) return false;
  const toolset = toolsetOf(tool.name);
  return (toolset !== undefined && selection.toolsets.has(toolset)) || selection.tools.has(tool.name);
}

/** A yes/no setting as a header, query parameter or variable gives it (1, true, yes; 0, false, no, empty). */
export function flag(value: string | undefined): boolean {
  return /^(1|true|yes|on)$/i.test((value ?? "").trim());
}
