import type { Wallet } from "ethers";
import { parseChainId } from "../../chains/networks";
import { PAYMENT_META, PAYMENT_RESPONSE_META, paymentRequiredOf, toolError, type CallToolResult } from "../calls";
import { ConfigureInput, sessionTools, type ConfigView, type ToolListing } from "../session-tools";
import { PaymentRefused, signPayment, type Requirement } from "./payer";
import { RemoteService } from "./remote";
import { parseBaseUrl, SettingsError, walletOf, type StdioSettings } from "./settings";
import { addressesIn, verifyPrepared, VerificationError, type DecodedCall, type PreparedTransaction } from "./verify";

/** An x402 payment this server signed during a call. */
interface PaymentMade {
  tool: string;
  amount: string;
  network: string;
  payTo: string;
  settlement?: unknown;
}

const PREPARES_META = "tak/prepares";
/** How long a write waits for its batch after the send answered it pending. */
const WAIT_SECONDS = 120;

const WITH_A_KEY =
  "\n\nThis stdio server has a wallet (TAK_PRIVATE_KEY): it checks each prepared transaction against the request (chain, sender, target, every address it names), signs it here, sends it, pays x402 when asked and waits for the batch; the result is { prepared, signed, sent, status, payments }. executionMode service-relayed lets the service's relayer send it (paid with x402).";

const ok = (value: Record<string, unknown>): CallToolResult => ({
  structuredContent: value,
  content: [{ type: "text", text: JSON.stringify(value) }],
});

/** A step's error, saying which step of a write it ended (the prepare, the checks, the send). */
function atStep(result: CallToolResult, step: string): CallToolResult {
  return { ...result, content: [...result.content, { type: "text", text: `(at ${step})` }] };
}

/**
 * The stdio server's session: the service's tools (its /mcp), with configure and get_config answered here, x402
 * payments signed here when a wallet is configured, and a prepare tool with a wallet run to its end (check, sign,
 * send, wait) instead of answering unsigned transactions.
 */
export class StdioSession {
  private remote: RemoteService;
  private prepares = new Map<string, string>();

  constructor(
    private settings: StdioSettings,
    private readonly version: string,
    private readonly warn: (message: string) => void,
  ) {
    this.remote = new RemoteService(settings.baseUrl, settings.apiKey, version);
  }

  async listTools(): Promise<ToolListing[]> {
    const local = sessionTools("stdio").filter((t) => t.name !== "wait_for_transaction");
    let remote: ToolListing[];
    try {
      remote = await this.remote.listTools();
    } catch (error) {
      this.warn(
        `${(error as Error).message}: only configure and get_config are listed (configure a baseUrl that answers)`,
      );
      return local;
    }
    this.prepares = new Map(
      remote
        .filter((t) => typeof t._meta?.[PREPARES_META] === "string")
        .map((t) => [t.name, t._meta![PREPARES_META] as string]),
    );
    const mine = new Set(local.map((t) => t.name));
    const theirs = remote
      .filter((t) => !mine.has(t.name))
      .map((t) => (this.prepares.has(t.name) ? this.asWrite(t) : t));
    return [...local, ...theirs];
  }

  /** A prepare tool as listed here: its answer is the write's whole course when a wallet signs (so no output schema). */
  private asWrite(tool: ToolListing): ToolListing {
    const { outputSchema: _answers, ...rest } = tool;
    return { ...rest, description: tool.description + WITH_A_KEY };
  }

  async call(name: string, args: Record<string, unknown>, meta: Record<string, unknown>): Promise<CallToolResult> {
    try {
      if (name === "get_config") return ok({ ...(await this.view()) });
      if (name === "configure") return await this.configure(args);
      if (!this.prepares.size) await this.listTools();
      if (this.settings.wallet && this.prepares.has(name) && meta[PAYMENT_META] === undefined)
        return await this.write(name, this.prepares.get(name)!, args, this.settings.wallet);
      // Only the caller's own payment goes on to the service (a progress token would name a request it never saw).
      return await this.paying(
        name,
        args,
        meta[PAYMENT_META] === undefined ? {} : { [PAYMENT_META]: meta[PAYMENT_META] },
        [],
      );
    } catch (error) {
      return toolError("UNAVAILABLE", (error as Error).message);
    }
  }

  private async view(): Promise<ConfigView> {
    const remote = await this.remote.call("get_config", {});
    const env = (remote.structuredContent as { env?: string } | undefined)?.env ?? "unknown";
    return {
      env,
      baseUrl: this.settings.baseUrl,
      hasApiKey: this.settings.apiKey !== undefined,
      hasPrivateKey: this.settings.wallet !== undefined,
    };
  }

  private async configure(args: Record<string, unknown>): Promise<CallToolResult> {
    const parsed = ConfigureInput.safeParse(args);
    if (!parsed.success) {
      const field = parsed.error.issues[0].path.join(".");
      return toolError("BAD_REQUEST", `${field} ${parsed.error.issues[0].message}`, field, { field });
    }
    const { baseUrl, apiKey, privateKey, env } = parsed.data;
    const next: StdioSettings = { ...this.settings };
    try {
      if (baseUrl !== undefined) next.baseUrl = parseBaseUrl(baseUrl, "baseUrl");
      if (privateKey !== undefined) next.wallet = privateKey ? walletOf(privateKey, "privateKey") : undefined;
    } catch (error) {
      const field = (error as Error).message.split(" ")[0];
      if (error instanceof SettingsError) return toolError("BAD_REQUEST", error.message, field, { field });
      throw error;
    }
    if (apiKey !== undefined) next.apiKey = apiKey || undefined;
    if (next.baseUrl !== this.settings.baseUrl || next.apiKey !== this.settings.apiKey) {
      await this.remote.close();
      this.remote = new RemoteService(next.baseUrl, next.apiKey, this.version);
      this.prepares.clear();
    }
    this.settings = next;
    const view = await this.view();
    if (env !== undefined && env !== view.env)
      return toolError(
        "BAD_REQUEST",
        `env: the service at ${view.baseUrl} is the ${view.env} deployment, not ${env}`,
        "env",
        { field: "env" },
      );
    return ok({ ...view });
  }

  /** Calls a tool, paying the x402 payment it asks for with the local wallet (once), unless the caller paid itself. */
  private async paying(
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    payments: PaymentMade[],
  ): Promise<CallToolResult> {
    const result = await this.remote.call(name, args, meta);
    const required = paymentRequiredOf(result);
    const wallet = this.settings.wallet;
    if (!required || !wallet || meta[PAYMENT_META] !== undefined) return result;
    const requirement = required.accepts[0] as unknown as Requirement | undefined;
    if (!requirement) return result;
    let payment: Record<string, unknown>;
    try {
      payment = await signPayment(wallet, requirement, this.settings.maxPayment);
    } catch (error) {
      if (!(error instanceof PaymentRefused)) throw error;
      return toolError("PAYMENT_REQUIRED", `Not paid: ${error.message}`, undefined, { paymentRequired: required });
    }
    const paid = await this.remote.call(name, args, { ...meta, [PAYMENT_META]: payment });
    const settlement = paid._meta?.[PAYMENT_RESPONSE_META];
    if (!paid.isError)
      payments.push({
        tool: name,
        amount: requirement.amount,
        network: requirement.network,
        payTo: requirement.payTo,
        ...(settlement ? { settlement } : {}),
      });
    return paid;
  }

  /**
   * A write with the local wallet: prepared (paid if asked), checked against the request, signed here, sent (paid if
   * asked), followed to its end. Relayed, the service's relayer signs: only the payment is signed here.
   */
  private async write(
    tool: string,
    prepares: string,
    args: Record<string, unknown>,
    wallet: Wallet,
  ): Promise<CallToolResult> {
    const mode = (typeof args.executionMode === "string" ? args.executionMode : "client-signed").replace(
      "brickken-relayed",
      "service-relayed",
    );
    if (mode === "client-broadcast")
      return toolError(
        "BAD_REQUEST",
        "executionMode client-broadcast: this server sends through the service; use client-signed (the default) or service-relayed",
        "executionMode",
      );
    const relayed = mode === "service-relayed";
    const request: Record<string, unknown> = { ...args };
    const chainId = parseChainId(request.chainId);
    if (!relayed) {
      const signer = request.signerAddress;
      if (signer === undefined) request.signerAddress = wallet.address;
      else if (typeof signer !== "string" || signer.toLowerCase() !== wallet.address.toLowerCase()) {
        return toolError(
          "BAD_REQUEST",
          `signerAddress ${JSON.stringify(signer)} is not this server's wallet ${wallet.address}: it signs only with its own key`,
          "signerAddress",
        );
      }
      if (chainId === undefined)
        return toolError(
          "BAD_REQUEST",
          "chainId is required: this server signs only for the chain the request names",
          "chainId",
        );
    }
    const payments: PaymentMade[] = [];
    const prepared = await this.paying(tool, request, {}, payments);
    if (prepared.isError)
      return atStep(prepared, `${tool}: the prepare of ${prepares === "*" ? String(request.method) : prepares}`);
    const answer = prepared.structuredContent as {
      txId: string;
      transactions: PreparedTransaction[];
      streamToken?: string;
    };
    let signed: DecodedCall[] = [];
    let send: Record<string, unknown> = { txId: answer.txId };
    if (!relayed) {
      try {
        signed = verifyPrepared(answer.transactions, {
          wallet: wallet.address,
          chainId: chainId!,
          known: await this.knownAddresses(request),
        });
      } catch (error) {
        if (!(error instanceof VerificationError)) throw error;
        return toolError(
          "TRANSACTION_MISMATCH",
          `The prepared transactions do not match the request: ${error.message}`,
          `transactions.${error.transactionIndex}.${error.field}`,
          {
            txId: answer.txId,
            transactionIndex: error.transactionIndex,
            field: error.field,
          },
        );
      }
      const signedTransactions: string[] = [];
      for (const tx of answer.transactions) signedTransactions.push(await wallet.signTransaction(tx));
      send = { txId: answer.txId, signedTransactions };
    }
    const sent = await this.paying("send_transactions", send, {}, payments);
    if (sent.isError) return atStep(sent, `send_transactions of txId ${answer.txId}`);
    let status = sent.structuredContent as Record<string, unknown>;
    if (status.status !== "success" && status.status !== "rejected") {
      const waited = await this.remote.call("wait_for_transaction", {
        txId: answer.txId,
        ...(answer.streamToken ? { streamToken: answer.streamToken } : {}),
        timeoutSeconds: WAIT_SECONDS,
      });
      if (!waited.isError) status = waited.structuredContent as Record<string, unknown>;
    }
    return ok({ prepared: answer, signed, sent: sent.structuredContent, status, payments });
  }

  /** The addresses a prepared call may name: the request's, and the contracts the service publishes for its chain and token. */
  private async knownAddresses(request: Record<string, unknown>): Promise<Set<string>> {
    const known = addressesIn(request);
    const network = await this.remote.call("get_network_info", { chainId: request.chainId });
    if (!network.isError) addressesIn(network.structuredContent, known);
    if (typeof request.tokenSymbol === "string") {
      const token = await this.remote.call("get_tokenizer_info", { tokenSymbol: request.tokenSymbol });
      if (!token.isError) addressesIn(token.structuredContent, known);
    }
    return known;
  }
}
