/**
 * A typed client for the Tokenized-Asset Transaction API.
 *
 * The request and response types come from `./schema` (generated from /openapi.json by openapi-typescript: run
 * `npm run client:generate`); calls go through openapi-fetch, so every path, query, body and answer is typed. The
 * helpers cover what a caller does around the calls:
 *
 *   prepare → signTransactions (any ethers Signer) → send → waitForStatus   (or all four: execute)
 *   waitForStatus follows the batch on the event stream (GET /events) and polls only when it cannot
 *   x402Fetch: pays 402 answers with @x402/fetch (USDC, EIP-3009) — pass it as `fetch` to createApiClient
 *   ramsTypedData → sign → ramsPrepareSigned: the RAMS EIP-712 round trip
 *   toEip1193 / sendWithEip1193: an unsigned transaction through an injected browser wallet
 *
 * ```ts
 * const api = createApiClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.API_KEY });
 * const { status } = await execute(api, wallet, { method: "newTokenization", chainId: "aa36a7", tokenizerEmail, name, tokenSymbol: "ACME" });
 * const { data } = await api.GET("/get-tokenizer-info", { params: { query: { tokenSymbol: "ACME" } } });
 * ```
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { eventFrames } from "./event-stream";
import type { components, operations, paths } from "./schema";

export type { components, operations, paths };
export type Schemas = components["schemas"];
export type UnsignedTransaction = Schemas["UnsignedTransaction"];
export type PrepareResponse = Schemas["PrepareResponse"];
export type SendSummary = Schemas["SendSummary"];
export type BatchStatus = Schemas["BatchStatus"];
export type TransactionStatus = Schemas["TransactionStatus"];
export type PaymentRequired = Schemas["PaymentRequired"];
export type PaymentSettlement = Schemas["PaymentSettlement"];
export type ErrorBody = Schemas["Error"];
/** An event as a webhook receives it (body) and the stream sends it (`data:`), discriminated by `type` (docs/events.md). */
export type ApiEvent = Schemas["Event"];
export type ApiEventType = ApiEvent["type"];
/** The event of one type, its `data` typed: `EventOf<"batch.completed">["data"]["outcome"]`. */
export type EventOf<T extends ApiEventType> = Extract<ApiEvent, { type: T }>;
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookDelivery = Schemas["WebhookDelivery"];

/** A /prepare-transactions body: one per method, discriminated by `method`. */
export type PrepareRequest = paths["/prepare-transactions"]["post"]["requestBody"]["content"]["application/json"];
export type MethodName = PrepareRequest["method"];
/** The body of one method (as on its facade and /prepare-transactions/{method}). */
export type MethodRequest<M extends MethodName> = Extract<PrepareRequest, { method: M }>;

export type ApiClient = Client<paths>;

/** A field of an EIP-712 struct type. */
export interface TypedDataField {
  name: string;
  type: string;
}

/** An EIP-712 domain (every field optional, as the standard has it). */
export interface TypedDataDomain {
  name?: string | null;
  version?: string | null;
  chainId?: string | number | bigint | null;
  verifyingContract?: string | null;
  salt?: string | null;
}

/**
 * What the helpers ask of a signer: its address, a transaction signed as is, EIP-712 typed data signed. An ethers
 * `Signer` (a `Wallet`, a browser's `JsonRpcSigner`) is one; nothing of ethers is needed by the client itself.
 */
export interface Signer {
  getAddress(): Promise<string>;
  signTransaction(transaction: UnsignedTransaction): Promise<string>;
  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string>;
}

export type FetchLike = (input: Request) => Promise<Response>;

export interface ApiClientOptions {
  /** Where the service answers, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** The API key (x-api-key); omit it to pay with x402 (give a paying `fetch`, see x402Fetch). */
  apiKey?: string;
  /** The fetch calls go through (default: globalThis.fetch); x402Fetch(...) pays 402 answers. */
  fetch?: FetchLike;
  /** Headers for every call (e.g. x-request-id). */
  headers?: Record<string, string>;
}

/** An openapi-fetch client for the API (typed by ./schema), with the key on every call when given. */
export function createApiClient(options: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ""),
    headers: { ...(options.apiKey ? { "x-api-key": options.apiKey } : {}), ...options.headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** A call that did not answer 2xx: the status, the error body, the request id and (402) the decoded quote. */
export class ApiRequestError extends Error {
  readonly code?: string;
  readonly details?: Record<string, unknown>;
  readonly requestId: string | null;
  /** The decoded PAYMENT-REQUIRED header of a 402. */
  readonly paymentRequired?: PaymentRequired;

  constructor(
    readonly status: number,
    readonly body: unknown,
    response: Response,
  ) {
    const error = (body as Partial<ErrorBody> | undefined)?.error;
    super(`${status} ${error?.message ?? (typeof body === "string" ? body : JSON.stringify(body))}`);
    this.name = "ApiRequestError";
    this.code = error?.code;
    this.details = error?.details;
    this.requestId = response.headers.get("x-request-id");
    const quote = response.headers.get("payment-required");
    if (quote) this.paymentRequired = decodeBase64Json<PaymentRequired>(quote);
  }
}

/** The data of an openapi-fetch answer, or an ApiRequestError. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw new ApiRequestError(result.response.status, result.error ?? result.data, result.response);
}

// ---------------------------------------------------------------------------------------------------------------
// The write flow: prepare → sign → send → status

/** POST /prepare-transactions: the unsigned transactions of one method. */
export async function prepare(
  client: ApiClient,
  body: PrepareRequest,
  headers?: Record<string, string>,
): Promise<PrepareResponse> {
  return unwrap(await client.POST("/prepare-transactions", { body, headers }));
}

/** Signs each prepared transaction locally, as is, in order (ethers `signer.signTransaction`). */
export async function signTransactions(signer: Signer, transactions: UnsignedTransaction[]): Promise<string[]> {
  const signed: string[] = [];
  for (const tx of transactions) signed.push(await signer.signTransaction(tx));
  return signed;
}

export interface SendResult {
  /** 200: the batch ended (success or rejected); 202: still pending (poll waitForStatus). */
  httpStatus: number;
  summary: SendSummary;
  /** The decoded PAYMENT-RESPONSE header when x402 paid the send. */
  settlement?: PaymentSettlement;
}

/**
 * POST /send-transactions: the signed transactions of `txId` (or, for a service-relayed batch, none: the relayer
 * signs; the client's fetch must then pay the 402, see x402Fetch).
 */
export async function send(
  client: ApiClient,
  txId: string,
  signedTransactions?: string[],
  headers?: Record<string, string>,
): Promise<SendResult> {
  const result = await client.POST("/send-transactions", {
    body: signedTransactions ? { txId, signedTransactions } : { txId },
    headers,
  });
  const summary = unwrap(result);
  return { httpStatus: result.response.status, summary, settlement: decodePaymentResponse(result.response) };
}

/** POST /send-transactions { txId, txHash }: a transaction the client broadcast itself (client-broadcast). */
export async function reportHash(client: ApiClient, txId: string, txHash: string): Promise<SendResult> {
  const result = await client.POST("/send-transactions", { body: { txId, txHash } });
  return { httpStatus: result.response.status, summary: unwrap(result) };
}

export interface WaitOptions {
  /** Give up after this long (default 120 s). */
  timeoutMs?: number;
  /** Poll interval when the event stream cannot be followed (default 1 s). */
  intervalMs?: number;
  /** Stop when this holds (default: the batch ended, success or rejected). */
  until?: (status: BatchStatus) => boolean;
  /** Without an API key: the `streamToken` the batch's prepare answered, which opens its event stream. */
  streamToken?: string;
  /** Follow the event stream when the service opens it (default true); false polls only. */
  stream?: boolean;
}

/**
 * Waits until the batch ends (success or rejected) or `until` holds, reading GET /get-transaction-status?txId=…. It
 * reads it again whenever the batch's event stream (GET /events?txId=…, with the key or `streamToken`) says something
 * happened; without a stream (refused, no key and no token, dropped) it polls every `intervalMs`.
 */
export async function waitForStatus(client: ApiClient, txId: string, options: WaitOptions = {}): Promise<BatchStatus> {
  const {
    timeoutMs = 120_000,
    intervalMs = 1000,
    until = (s: BatchStatus) => s.status === "success" || s.status === "rejected",
  } = options;
  const deadline = Date.now() + timeoutMs;
  let status = await batchStatus(client, txId);
  if (until(status)) return status;
  if (options.stream !== false) {
    const reached = await followBatchEvents(client, txId, options.streamToken, deadline, async () => {
      status = await batchStatus(client, txId);
      return until(status);
    });
    if (reached) return status;
  }
  for (;;) {
    if (Date.now() > deadline) throw new Error(`batch ${txId} is still ${status.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    status = await batchStatus(client, txId);
    if (until(status)) return status;
  }
}

async function batchStatus(client: ApiClient, txId: string): Promise<BatchStatus> {
  const status = unwrap(await client.GET("/get-transaction-status", { params: { query: { txId } } }));
  if (!("batchStatus" in status))
    throw new Error(`txId ${txId} answered as a transaction this service did not prepare`);
  return status;
}

/**
 * Follows the batch's events until `reached` (asked again after each burst of events) holds, and says whether it did:
 * false when the stream was refused, could not connect, ended or dropped, or the deadline passed (the caller polls).
 * An error of `reached` itself is the caller's.
 */
async function followBatchEvents(
  client: ApiClient,
  txId: string,
  streamToken: string | undefined,
  deadline: number,
  reached: () => Promise<boolean>,
): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
  let body: ReadableStream<Uint8Array> | undefined;
  try {
    const query = streamToken ? { txId, streamToken } : { txId };
    const opened = await client.GET("/events", {
      params: { query },
      parseAs: "stream",
      signal: abort.signal,
      headers: { accept: "text/event-stream" },
    });
    if (opened.response.status !== 200 || !opened.data) return false;
    body = opened.data;
  } catch {
    return false;
  } finally {
    if (!body) clearTimeout(timer);
  }
  const frames = eventFrames(body);
  try {
    for (;;) {
      let next: IteratorResult<unknown>;
      try {
        next = await frames.next();
      } catch {
        return false;
      }
      if (next.done) return false;
      if (await reached()) return true;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
    await frames.return(undefined).catch(() => undefined);
  }
}

/** A batch that ended rejected: which transaction and why. */
export class BatchRejectedError extends Error {
  constructor(readonly status: BatchStatus | SendSummary) {
    super(`batch ${status.txId} was rejected: ${status.error ?? "see its transactions"}`);
    this.name = "BatchRejectedError";
  }
}

export interface Executed {
  prepared: PrepareResponse;
  signedTransactions: string[];
  sent: SendResult;
  /** The batch once it ended (success). */
  status: BatchStatus;
}

/**
 * prepare → sign with `signer` → send → wait until the batch ends (on its event stream: the key's, or without a key the
 * prepare's `streamToken`); throws BatchRejectedError if it is rejected.
 */
export async function execute(
  client: ApiClient,
  signer: Signer,
  body: PrepareRequest,
  options: WaitOptions = {},
): Promise<Executed> {
  const prepared = await prepare(client, body);
  const signedTransactions = await signTransactions(signer, prepared.transactions);
  const sent = await send(client, prepared.txId, signedTransactions);
  if (sent.summary.status === "rejected") throw new BatchRejectedError(sent.summary);
  const status = await waitForStatus(client, prepared.txId, { streamToken: prepared.streamToken, ...options });
  if (status.status === "rejected") throw new BatchRejectedError(status);
  return { prepared, signedTransactions, sent, status };
}

// ---------------------------------------------------------------------------------------------------------------
// x402

/** What this deployment takes payments in (GET /.well-known/x402), e.g. to build x402Fetch's limits. */
export async function paymentTerms(client: ApiClient): Promise<{ network: string; asset: string; payTo: string }> {
  const discovery = unwrap(await client.GET("/.well-known/x402"));
  if (!discovery.enabled || !discovery.network || !discovery.asset || !discovery.payTo)
    throw new Error("x402 payments are not enabled on this deployment");
  return { network: discovery.network, asset: discovery.asset, payTo: discovery.payTo };
}

export interface X402Limits {
  /** The payment network, e.g. eip155:84532 (paymentTerms(client).network). */
  network: string;
  /** The USDC contract the deployment takes (paymentTerms(client).asset). */
  asset: string;
  /** The most one call may cost, in base units (USDC: 6 decimals; default 1000000 = 1 USDC). */
  maxAmountPerPayment?: string;
}

/**
 * A fetch that pays 402 answers through the official @x402/fetch client: it reads the quote from PAYMENT-REQUIRED,
 * signs an EIP-3009 authorization with `signer` (any ethers Signer holding the USDC) and repeats the call with the
 * payment. Only `limits.asset` on `limits.network`, at most `maxAmountPerPayment` per call, is ever paid.
 */
export async function x402Fetch(
  signer: Signer,
  limits: X402Limits,
  baseFetch: FetchLike = (request) => fetch(request),
): Promise<FetchLike> {
  const address = (await signer.getAddress()) as `0x${string}`;
  const client = new x402Client();
  registerExactEvmScheme(client, {
    signer: {
      address,
      signTypedData: async ({ domain, types, message }) => {
        const { EIP712Domain: _domain, ...fields } = types as Record<string, TypedDataField[]>;
        return (await signer.signTypedData(domain, fields, message)) as `0x${string}`;
      },
    },
  });
  client.setSpendControls({
    allowedAssets: [
      { network: limits.network, asset: limits.asset, maxAmountPerPayment: limits.maxAmountPerPayment ?? "1000000" },
    ],
  } as never);
  const paying = wrapFetchWithPayment(
    (input: Parameters<typeof fetch>[0], init?: RequestInit) => baseFetch(new Request(input, init)),
    client,
  );
  return (request: Request) => paying(request);
}

/** The decoded PAYMENT-RESPONSE header of an answer x402 paid (undefined otherwise). */
export function decodePaymentResponse(response: Response): PaymentSettlement | undefined {
  const header = response.headers.get("payment-response");
  return header ? decodeBase64Json<PaymentSettlement>(header) : undefined;
}

function decodeBase64Json<T>(value: string): T {
  const text = new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------------------------------------------------------
// RAMS: the principal's EIP-712 signature

export type RamsSignedOperation = "grant-mandate" | "revoke-mandate" | "extend-mandate" | "set-operator";
export type RamsTypedData = Schemas["RamsTypedData"];

/** GET /rams/typed-data/{operation} with the operation's parameters (arrays are sent comma-joined). */
export async function ramsTypedData(
  client: ApiClient,
  operation: RamsSignedOperation,
  params: Record<string, unknown>,
): Promise<RamsTypedData> {
  const query = Object.fromEntries(
    Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
  );
  const result = await client.GET(`/rams/typed-data/${operation}` as "/rams/typed-data/grant-mandate", {
    params: { query: query as never },
  });
  return unwrap(result).data;
}

/** The principal signs the payload as is (ethers `signTypedData(domain, types, message)`). */
export async function signRamsTypedData(principal: Signer, payload: RamsTypedData): Promise<string> {
  const { domain, types, message } = payload.typedData;
  return principal.signTypedData(domain, types, message);
}

/**
 * The RAMS signature round trip: typed data for `params` → signed by `principal` → the write prepared on its facade
 * with the signature and deadline. `submit` picks who sends it: the service's relayer (`executionMode:
 * "service-relayed"`, alias brickken-relayed; free to prepare, paid with x402 at send) or any whitelisted wallet
 * (`signerAddress`).
 */
export async function ramsPrepareSigned(
  client: ApiClient,
  operation: RamsSignedOperation,
  params: Record<string, unknown>,
  principal: Signer,
  submit: { executionMode: "service-relayed" | "brickken-relayed" } | { signerAddress: string },
  headers?: Record<string, string>,
): Promise<{ typedData: RamsTypedData; signature: string; prepared: PrepareResponse }> {
  const typedData = await ramsTypedData(client, operation, params);
  const signature = await signRamsTypedData(principal, typedData);
  const body = { ...params, ...submit, signature, deadline: typedData.deadline };
  const result = await client.POST(`/x402/rams/${operation}` as "/x402/rams/grant-mandate", {
    body: body as never,
    headers,
  });
  return { typedData, signature, prepared: unwrap(result).data };
}

// ---------------------------------------------------------------------------------------------------------------
// Injected browser wallets (EIP-1193)

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export interface Eip1193Transaction {
  from: string;
  to: string;
  data: string;
  value: string;
  gas: string;
}

/**
 * An unsigned transaction as an EIP-1193 wallet takes it (the service's unsigned transaction, reshaped): numbers as 0x
 * hex, gasLimit renamed gas, nonce and fees left to the wallet; `chainId` (hex) is the chain to switch the wallet to
 * first.
 */
export function toEip1193(tx: UnsignedTransaction): { chainId: string; transaction: Eip1193Transaction } {
  const hex = (v: string | number) => "0x" + BigInt(v).toString(16);
  return {
    chainId: hex(tx.chainId),
    transaction: { from: tx.from, to: tx.to, data: tx.data, value: hex(tx.value), gas: hex(tx.gasLimit) },
  };
}

/** Switches the wallet to the transaction's chain, then has it send the transaction; returns its hash (report it with reportHash). */
export async function sendWithEip1193(provider: Eip1193Provider, tx: UnsignedTransaction): Promise<string> {
  const { chainId, transaction } = toEip1193(tx);
  await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId }] });
  return (await provider.request({ method: "eth_sendTransaction", params: [transaction] })) as string;
}

export type { Middleware };
