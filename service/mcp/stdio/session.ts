import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { PAYMENT_META, PAYMENT_RESPONSE_META, paymentRequiredOf, toolError, type CallToolResult } from "../calls";
import type { ConfigView, ToolListing } from "../session-tools";
import { selectionOf, selects, toolsetOf, TOOLSETS, type Selection } from "../toolsets";
import { ChainReads } from "./chain-reads";
import { configureOverStdio, LOCAL_TOOLS, ok, toolsetsView } from "./local-tools";
import { CallBudget, Payer, PaymentRefused, type Requirement } from "./payer";
import { Pins } from "./pins";
import { RemoteService } from "./remote";
import type { StdioSettings } from "./settings";
import { runWrite, type WriteSession } from "./write";

/** An x402 payment this server signed during a call. */
interface PaymentMade {
  tool: string;
  amount: string;
  network: string;
  payTo: string;
  settlement?: unknown;
}

/** What the session asks of the MCP server it answers through (main.ts). */
export interface SessionHooks {
  /** Shows the person a message and asks to go on: true, false (declined), undefined (the client cannot ask). */
  confirm(message: string): Promise<boolean | undefined>;
  /** The tool list changed (a toolset was enabled): notifications/tools/list_changed. */
  toolsChanged(): void;
}

const PREPARES_META = "tak/prepares";

/**
 * The stdio server's session: the service's tools (its /mcp, every toolset) listed as the session's toolsets and
 * read-only mode choose, configure and get_config answered here, x402 payments signed here when a wallet is configured
 * (payer.ts), and a prepare tool with a wallet run to its end (write.ts) instead of answering unsigned transactions.
 */
export class StdioSession {
  private readonly remote: RemoteService;
  private readonly pins: Pins;
  private readonly chain: ChainReads;
  private readonly payer?: Payer;
  private readonly enabled: Set<string>;
  private tools?: ToolListing[];
  private readonly payments = new WeakMap<CallBudget, PaymentMade[]>();

  constructor(
    private readonly settings: StdioSettings,
    version: string,
    private readonly warn: (message: string) => void,
    private readonly hooks: SessionHooks,
  ) {
    this.remote = new RemoteService(settings.baseUrl, settings.apiKey, version);
    this.enabled = new Set(selectionOf({ toolsets: settings.toolsets }, new Set()).toolsets);
    this.pins = new Pins(async (tool, args) => {
      const result = await this.remote.call(tool, args);
      if (result.isError) throw new Error(`${tool}: ${result.content.map((c) => c.text).join(" ")}`);
      return result.structuredContent ?? {};
    }, settings.deploymentsDir);
    this.chain = new ChainReads(settings.rpcUrls, settings.maxFee);
    if (settings.wallet) this.payer = new Payer(settings.wallet, this.pins, settings);
  }

  private get selection(): Selection {
    return { toolsets: this.enabled, tools: new Set(), readOnly: this.settings.readOnly };
  }

  /** The service's tools (all of them, once); a prepare tool with a wallet answers the write's end (no output schema). */
  private async serviceTools(): Promise<ToolListing[]> {
    if (this.tools) return this.tools;
    const listed = await this.remote.listTools();
    this.tools = listed
      .filter((t) => !LOCAL_TOOLS.some((l) => l.name === t.name))
      .map((t) => {
        if (!this.settings.wallet || typeof t._meta?.[PREPARES_META] !== "string") return t;
        const { outputSchema: _answers, ...rest } = t;
        return rest;
      });
    return this.tools;
  }

  async listTools(): Promise<ToolListing[]> {
    let remote: ToolListing[];
    try {
      remote = await this.serviceTools();
    } catch (error) {
      this.warn(`${(error as Error).message}: only this server's own tools are listed (is TAK_BASE_URL right?)`);
      return LOCAL_TOOLS;
    }
    return [
      ...LOCAL_TOOLS,
      ...remote.filter((t) =>
        selects(this.selection, { name: t.name, readOnly: t.annotations?.readOnlyHint === true }),
      ),
    ];
  }

  async call(name: string, args: Record<string, unknown>, meta: Record<string, unknown>): Promise<CallToolResult> {
    if (LOCAL_TOOLS.some((t) => t.name === name)) return this.local(name, args);
    let tools: ToolListing[];
    try {
      tools = await this.serviceTools();
    } catch (error) {
      return toolError("UNAVAILABLE", (error as Error).message);
    }
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name} (tools/list lists them)`);
    const readOnly = tool.annotations?.readOnlyHint === true;
    if (this.settings.readOnly && !readOnly)
      throw new McpError(ErrorCode.InvalidParams, `${name} writes, and this server is read-only (TAK_READONLY)`);
    if (!selects(this.selection, { name, readOnly }))
      throw new McpError(
        ErrorCode.InvalidParams,
        `${name} is in the toolset ${toolsetOf(name)}, which is not enabled: enable_toolset { "toolset": "${toolsetOf(name)}" }`,
      );
    try {
      const prepares = tool._meta?.[PREPARES_META];
      const budget = new CallBudget();
      if (this.settings.wallet && typeof prepares === "string" && meta[PAYMENT_META] === undefined)
        return await runWrite(this.writeSession(), name, prepares, args);
      // Only the caller's own payment goes on to the service (a progress token would name a request it never saw).
      const own = meta[PAYMENT_META] === undefined ? {} : { [PAYMENT_META]: meta[PAYMENT_META] };
      return await this.paying(name, args, budget, own);
    } catch (error) {
      return toolError("UNAVAILABLE", (error as Error).message);
    }
  }

  private async local(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (name === "list_toolsets") return ok(toolsetsView(this.enabled, this.settings.readOnly));
    if (name === "enable_toolset") {
      const toolset = TOOLSETS.find((t) => t.name === args.toolset);
      if (!toolset)
        return toolError("BAD_REQUEST", `toolset: one of ${TOOLSETS.map((t) => t.name).join(", ")}`, "toolset", {
          field: "toolset",
        });
      const added = !this.enabled.has(toolset.name);
      this.enabled.add(toolset.name);
      if (added) this.hooks.toolsChanged();
      return ok({ enabled: [...this.enabled], tools: [...toolset.tools] });
    }
    const view = await this.view();
    return name === "get_config" ? ok({ ...view }) : configureOverStdio(args, view);
  }

  private async view(): Promise<ConfigView> {
    const remote = await this.remote.call("get_config", {}).catch(() => undefined);
    const env = (remote?.structuredContent as { env?: string } | undefined)?.env ?? "unknown";
    return {
      env,
      baseUrl: this.settings.baseUrl,
      hasApiKey: this.settings.apiKey !== undefined,
      hasPrivateKey: this.settings.wallet !== undefined,
      ...(this.settings.wallet ? { walletAddress: this.settings.wallet.address } : {}),
    };
  }

  /**
   * Signs a payment for `requirement` within `budget` (payer.ts), recording it for the call's result; the refusal as
   * the tool's error.
   */
  private async pay(
    tool: string,
    requirement: Requirement,
    budget: CallBudget,
  ): Promise<Record<string, unknown> | CallToolResult> {
    try {
      const payment = await this.payer!.sign(requirement, budget);
      const made = this.payments.get(budget) ?? [];
      made.push({ tool, amount: requirement.amount, network: requirement.network, payTo: requirement.payTo });
      this.payments.set(budget, made);
      return payment;
    } catch (error) {
      if (!(error instanceof PaymentRefused)) throw error;
      return toolError("PAYMENT_REQUIRED", `Not paid: ${error.message}`, undefined, { requirement });
    }
  }

  /**
   * Calls a tool, paying with the local wallet the x402 payment it asks for (once), unless the caller paid itself.
   * `prepaid`: a payment already signed for this call (the send of a batch whose price the prepare answered), sent
   * with it; a service that asks again is not paid twice.
   */
  private async paying(
    name: string,
    args: Record<string, unknown>,
    budget: CallBudget,
    meta: Record<string, unknown> = {},
    prepaid?: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const result = await this.remote.call(name, args, prepaid ? { ...meta, [PAYMENT_META]: prepaid } : meta);
    this.settled(budget, name, result);
    const required = paymentRequiredOf(result);
    if (!required || !this.payer || prepaid || meta[PAYMENT_META] !== undefined) return result;
    const requirement = required.accepts[0] as unknown as Requirement | undefined;
    if (!requirement) return result;
    const payment = await this.pay(name, requirement, budget);
    if ("content" in payment)
      return {
        ...(payment as CallToolResult),
        structuredContent: { ...(payment as CallToolResult).structuredContent, paymentRequired: required },
      };
    const paid = await this.remote.call(name, args, { ...meta, [PAYMENT_META]: payment });
    this.settled(budget, name, paid);
    return paid;
  }

  /** Adds a settlement the service answered to the payment of `tool` it settles. */
  private settled(budget: CallBudget, tool: string, result: CallToolResult): void {
    const settlement = result._meta?.[PAYMENT_RESPONSE_META];
    const made = [...(this.payments.get(budget) ?? [])]
      .reverse()
      .find((p) => p.tool === tool && p.settlement === undefined);
    if (settlement && made) made.settlement = settlement;
  }

  private writeSession(): WriteSession {
    return {
      wallet: this.settings.wallet!,
      pins: this.pins,
      chain: this.chain,
      confirmPolicy: this.settings.confirm,
      confirm: (message) => this.hooks.confirm(message),
      paying: (name, args, budget, prepaid) => this.paying(name, args, budget, {}, prepaid),
      pay: (tool, requirement, budget) => this.pay(tool, requirement, budget),
      call: (name, args) => this.remote.call(name, args),
      paymentsOf: (budget) => this.payments.get(budget) ?? [],
    };
  }

  async close(): Promise<void> {
    this.chain.close();
    await this.remote.close();
  }
}
