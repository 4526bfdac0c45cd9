import type { Wallet } from "ethers";
import { parseChainId } from "../../chains/networks";
import { methodForBody } from "../../methods";
import { toolError, type CallToolResult } from "../calls";
import { IntentError, type IntentContext } from "./intent";
import { INTENTS } from "./intents";
import type { ChainReads } from "./chain-reads";
import { ok } from "./local-tools";
import { CallBudget, type Requirement } from "./payer";
import { PinError, type Pins } from "./pins";
import { addressesIn, verifyPrepared, VerificationError, type DecodedCall, type PreparedTransaction } from "./verify";

/** How long a write waits for its batch after the send answered it pending. */
const WAIT_SECONDS = 120;

/** What a write with the local wallet uses of its session. */
export interface WriteSession {
  wallet: Wallet;
  pins: Pins;
  chain: ChainReads;
  /** TAK_CONFIRM. */
  confirmPolicy: "value-moving" | "all" | "none";
  /** Shows the person what is to be signed; true to go on, false declined, undefined when the client cannot ask. */
  confirm(message: string): Promise<boolean | undefined>;
  /** A tool call of the service, paying the x402 payments it asks for within `budget` (or with the one `prepaid`). */
  paying(
    name: string,
    args: Record<string, unknown>,
    budget: CallBudget,
    prepaid?: Record<string, unknown>,
  ): Promise<CallToolResult>;
  /** A payment signed for `requirement` within `budget`, or the refusal as a tool error. */
  pay(tool: string, requirement: Requirement, budget: CallBudget): Promise<Record<string, unknown> | CallToolResult>;
  /** A tool call of the service as it is (wait_for_transaction). */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** The payments signed for `budget` so far (the result lists them). */
  paymentsOf(budget: CallBudget): unknown[];
}

/** A step's error, saying which step of a write it ended (the prepare, the checks, the send). */
function atStep(result: CallToolResult, step: string): CallToolResult {
  return { ...result, content: [...result.content, { type: "text", text: `(at ${step})` }] };
}

/** The request as this server sends it: its own wallet as signer, a chain named (what it signs for). */
function ownRequest(
  args: Record<string, unknown>,
  wallet: Wallet,
): { request: Record<string, unknown>; relayed: boolean } | CallToolResult {
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
  if (relayed) return { request, relayed };
  const signer = request.signerAddress ?? request.investorAddress;
  if (signer === undefined) request.signerAddress = wallet.address;
  else if (typeof signer !== "string" || signer.toLowerCase() !== wallet.address.toLowerCase())
    return toolError(
      "BAD_REQUEST",
      `signerAddress ${JSON.stringify(signer)} is not this server's wallet ${wallet.address}: it signs only with its own key`,
      "signerAddress",
    );
  if (parseChainId(request.chainId) === undefined)
    return toolError(
      "BAD_REQUEST",
      "chainId is required: this server signs only for the chain the request names",
      "chainId",
    );
  return { request, relayed };
}

/** The decoded calls as the person is asked to confirm them. */
function confirmation(wallet: string, chainId: number, calls: DecodedCall[]): string {
  const lines = calls.map((c, i) => `${i + 1}. ${c.contract} (${c.to}): ${c.function} ${JSON.stringify(c.arguments)}`);
  return `Sign with ${wallet} on chain ${chainId}, and send:\n${lines.join("\n")}`;
}

/**
 * A write with the local wallet: prepared (paid if asked), each prepared transaction held to what the method produces
 * for this request (intents-*.ts, verify.ts), shown to the person where the client can ask, signed here, sent (paid if
 * asked), followed to its end. Relayed, the service's relayer signs: only the payments are signed here. Every payment
 * of the call counts against TAK_MAX_PAYMENT together.
 */
export async function runWrite(
  session: WriteSession,
  tool: string,
  prepares: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const own = ownRequest(args, session.wallet);
  if ("content" in own) return own;
  const { request, relayed } = own;
  const method = methodForBody(prepares === "*" ? String(request.method) : prepares, request);
  const intent = method && INTENTS[method.name];
  if (!method || !intent)
    return toolError(
      "BAD_REQUEST",
      `this server has no check for ${prepares === "*" ? String(request.method) : prepares}: it signs none of its transactions`,
      "method",
    );
  const budget = new CallBudget();
  const prepared = await session.paying(tool, request, budget);
  if (prepared.isError) return atStep(prepared, `${tool}: the prepare of ${method.name}`);
  const answer = prepared.structuredContent as {
    txId: string;
    transactions: PreparedTransaction[];
    info?: Record<string, unknown>;
    streamToken?: string;
    x402Requirements?: Requirement;
  };
  let signed: DecodedCall[] = [];
  let send: Record<string, unknown> = { txId: answer.txId };
  let prepaid: Record<string, unknown> | undefined;
  if (!relayed) {
    const chainId = parseChainId(request.chainId)!;
    let body: unknown;
    try {
      body = method.body.parse(request);
      const ctx = intentContext(session, chainId, answer.transactions[0]?.to);
      const { cap } = await session.chain.feeCap(chainId);
      signed = verifyPrepared(answer.transactions, await intent.calls(body, ctx), {
        wallet: session.wallet.address,
        chainId,
        feeCap: cap,
        named: addressesIn(request),
      });
    } catch (error) {
      return refusalOf(error, answer.txId);
    }
    const asks = session.confirmPolicy === "all" || (session.confirmPolicy === "value-moving" && intent.movesValue);
    if (asks && (await session.confirm(confirmation(session.wallet.address, chainId, signed))) === false)
      return toolError("FORBIDDEN", "Not signed: the person declined the transactions shown to them", undefined, {
        txId: answer.txId,
        calls: signed,
      });
    // The send's price, known from the prepare, is paid with the signed transactions or not at all: transactions signed
    // here never reach a service that is not paid (it could broadcast them without the work it was paid for).
    if (answer.x402Requirements) {
      const payment = await session.pay("send_transactions", answer.x402Requirements, budget);
      if ("content" in payment)
        return atStep(
          payment as CallToolResult,
          `the payment of send_transactions for txId ${answer.txId}: nothing was signed nor sent`,
        );
      prepaid = payment;
    }
    const signedTransactions: string[] = [];
    for (const tx of answer.transactions) signedTransactions.push(await session.wallet.signTransaction(tx));
    send = { txId: answer.txId, signedTransactions };
  }
  const sent = await session.paying("send_transactions", send, budget, prepaid);
  if (sent.isError) return atStep(sent, `send_transactions of txId ${answer.txId}`);
  let status = sent.structuredContent as Record<string, unknown>;
  if (status.status !== "success" && status.status !== "rejected") {
    const waited = await session.call("wait_for_transaction", {
      txId: answer.txId,
      ...(answer.streamToken ? { streamToken: answer.streamToken } : {}),
      timeoutSeconds: WAIT_SECONDS,
    });
    if (!waited.isError) status = waited.structuredContent as Record<string, unknown>;
  }
  learn(session, method.name, request, status);
  return ok(resultOf(answer, status, signed, session.paymentsOf(budget)));
}

/** The write's result, each fact once: the batch's end (not its transactions again), what was signed, what was paid. */
function resultOf(
  answer: { txId: string; info?: Record<string, unknown> },
  status: Record<string, unknown>,
  signed: DecodedCall[],
  payments: unknown[],
) {
  const { status: state, outcome, txHashes, error, failedIndex, blockNumber } = status;
  return {
    txId: answer.txId,
    status: state,
    ...(outcome !== undefined ? { outcome } : {}),
    ...(txHashes !== undefined ? { txHashes } : {}),
    ...(blockNumber !== undefined ? { blockNumber } : {}),
    ...(error !== undefined ? { error, failedIndex } : {}),
    info: answer.info ?? {},
    signed,
    payments,
  };
}

/** What a confirmed write teaches the session: an agent token it created, and its decimals. */
function learn(
  session: WriteSession,
  method: string,
  request: Record<string, unknown>,
  status: Record<string, unknown>,
) {
  const created = (status.outcome as { tokenAddress?: unknown } | undefined)?.tokenAddress;
  if (method === "agentCreateToken" && status.status === "success" && typeof created === "string")
    session.pins.rememberAgentToken(created, Number(request.decimals ?? 18));
}

function intentContext(session: WriteSession, chainId: number, firstTarget: string | undefined): IntentContext {
  return {
    chainId,
    wallet: session.wallet.address,
    firstTarget,
    contracts: (id = chainId) => session.pins.contracts(id),
    token: (symbol) => session.pins.token(symbol),
    executor: (principal, named, prepared) => {
      const seen = named ?? prepared;
      if (!seen) throw new IntentError("the service prepared no call to an executor");
      return named ? named.toLowerCase() : session.pins.executor(chainId, principal, seen);
    },
    agentTokenDecimals: async (address, given) => {
      if (given !== undefined) return Number(given);
      const known = session.pins.agentTokenDecimals(address) ?? (await session.chain.decimals(chainId, address));
      if (known === undefined)
        throw new IntentError(
          `decimals: say the decimals of ${address} (or set TAK_RPC_URLS for chain ${chainId}): this server does not take the service's word for them`,
        );
      return known;
    },
  };
}

function refusalOf(error: unknown, txId: string): CallToolResult {
  if (error instanceof VerificationError)
    return toolError(
      "TRANSACTION_MISMATCH",
      `The prepared transactions do not match the request: ${error.message}`,
      `transactions.${error.transactionIndex}.${error.field}`,
      {
        txId,
        transactionIndex: error.transactionIndex,
        field: error.field,
      },
    );
  if (error instanceof PinError)
    return toolError("TRANSACTION_MISMATCH", `Not signed: ${error.message}`, undefined, { txId });
  if (error instanceof IntentError)
    return toolError("BAD_REQUEST", `Not signed: ${error.message}`, undefined, { txId });
  if ((error as { name?: string }).name === "ZodError") {
    const issue = (error as { issues: { path: (string | number)[]; message: string }[] }).issues[0];
    return toolError("BAD_REQUEST", `Not signed: ${issue.path.join(".")} ${issue.message}`, issue.path.join("."), {
      txId,
    });
  }
  throw error;
}
