import http from "node:http";
import https from "node:https";
import {
  JsonRpcProvider,
  makeError,
  Network as EthersNetwork,
  type JsonRpcError,
  type JsonRpcPayload,
  type JsonRpcResult,
} from "ethers";

type JsonRpcAnswer = JsonRpcResult | JsonRpcError;
import { ChainUnavailableError, isTransientHttpStatus, isTransientRpcError, type RpcErrorObject } from "./rpc-errors";

/** How one chain's RPC calls are retried and failed over. */
export interface RpcPolicy {
  /** Per attempt: a call with no answer by then is abandoned and tried again (elsewhere when possible). */
  attemptTimeoutMs: number;
  /** Per call: after this long without an answer the call fails with ChainUnavailableError. */
  budgetMs: number;
  /** Failures in a row after which a URL rests (is tried last) for `restMs`. */
  failuresBeforeRest: number;
  restMs: number;
}

export const DEFAULT_RPC_POLICY: RpcPolicy = {
  attemptTimeoutMs: 5_000,
  budgetMs: 15_000,
  failuresBeforeRest: 3,
  restMs: 30_000,
};

const BACKOFF_START_MS = 100;
const BACKOFF_MAX_MS = 2_000;
/** A Retry-After longer than this is not waited out by one call: it fails over or gives up with a 503. */
const RETRY_AFTER_CAP_MS = 10_000;
/** At most this many calls travel in one JSON-RPC batch. */
const RPC_BATCH_MAX = 20;

/** A call waiting for the end of the current turn of the event loop, when its batch leaves. */
interface QueuedCall {
  payload: JsonRpcPayload;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/** One configured URL and what we learnt about it. */
export class RpcEndpoint {
  /** Failures in a row (an answer resets it). */
  failures = 0;
  /** Tried after the others until this time (it failed several times in a row). */
  restUntil = 0;
  /** Asked after the others until this time: the provider's Retry-After. */
  throttledUntil = 0;
  /** Smoothed latency of answered calls, ms. */
  latencyMs?: number;
  answered = 0;
  failed = 0;
  throttled = 0;
  readonly label: string;

  constructor(
    readonly url: string,
    /** Position in RPC_URL_<id>: the operator's preference among healthy URLs. */
    readonly priority: number,
  ) {
    this.label = redactUrl(url);
  }

  /** Resting or throttled: tried only when every other URL is too. */
  resting(now: number): boolean {
    return this.restUntil > now || this.throttledUntil > now;
  }
}

/** The URL's scheme and host, never its path or query (providers put API keys there). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "(invalid url)";
  }
}

/** Observes each attempt (metrics, logs); never throws. */
export type RpcObserver = (event: {
  endpoint: RpcEndpoint;
  outcome: "ok" | "error" | "throttled" | "timeout";
  detail?: string;
}) => void;

/**
 * An ethers JsonRpcProvider over several URLs of one chain, for public networks whose providers fail in passing. Each
 * JSON-RPC request (a single call or a batch) goes to the healthiest URL: those answering before those resting after
 * failures, then the operator's order (staying on one node keeps reads consistent: load-balanced nodes disagree about
 * the head). A request that times out, is refused at the HTTP level (429 with its Retry-After honoured, 5xx), or whose
 * items carry a passing JSON-RPC error (`header not found`, limit exceeded, …) is tried again with backoff, on the
 * next URL when there is one, until it is answered or its budget is spent: then it fails with ChainUnavailableError,
 * never with a verdict. Items the node judged (a revert, `nonce too low`) are answered as they are.
 */
export class ResilientRpcProvider extends JsonRpcProvider {
  readonly endpoints: RpcEndpoint[];
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };

  constructor(
    readonly chainId: number,
    urls: string[],
    readonly policy: RpcPolicy = DEFAULT_RPC_POLICY,
    private readonly observe: RpcObserver = () => undefined,
  ) {
    if (!urls.length) throw new Error(`chain ${chainId}: no RPC URL`);
    super(urls[0], chainId, {
      staticNetwork: EthersNetwork.from(chainId),
      pollingInterval: 500,
      // Only ethers' own calls made before the provider is up use its batching (see send).
      batchMaxCount: RPC_BATCH_MAX,
      batchStallTime: 1,
      // Preflight checks read state a previous request just changed: never answer from ethers' 250 ms cache.
      cacheTimeout: -1,
    });
    this.endpoints = urls.map((url, i) => new RpcEndpoint(url, i));
  }

  /** Calls made in one turn of the event loop, sent together as one JSON-RPC batch at the end of it. */
  private queued: QueuedCall[] = [];
  private nextCallId = 1;

  /**
   * What ethers' own send does (calls made together travel as one batch, each answered or refused as ethers would),
   * except when the batch leaves: at the end of the current turn of the event loop (setImmediate) instead of after a
   * timer, which Node never fires sooner than 1 ms. Every round trip to the chain is that much shorter.
   */
  override async send(method: string, params: unknown[] | Record<string, unknown>): Promise<any> {
    if (this.destroyed) return super.send(method, params as unknown[]); // ethers' "provider destroyed" refusal
    this._start();
    return new Promise((resolve, reject) => {
      this.queued.push({
        payload: { method, params: params as unknown[], id: this.nextCallId++, jsonrpc: "2.0" },
        resolve,
        reject,
      });
      if (this.queued.length === 1) setImmediate(() => this.sendQueued());
    });
  }

  private sendQueued(): void {
    const calls = this.queued;
    this.queued = [];
    for (let i = 0; i < calls.length; i += RPC_BATCH_MAX) void this.sendBatch(calls.slice(i, i + RPC_BATCH_MAX));
  }

  private async sendBatch(batch: QueuedCall[]): Promise<void> {
    try {
      const answers = await this._send(batch.length === 1 ? batch[0].payload : batch.map((c) => c.payload));
      for (const { payload, resolve, reject } of batch) {
        if (this.destroyed) {
          reject(
            makeError("provider destroyed; cancelled request", "UNSUPPORTED_OPERATION", { operation: payload.method }),
          );
          continue;
        }
        const answer = (answers as JsonRpcAnswer[]).find((a) => a.id === payload.id);
        if (!answer)
          reject(makeError("missing response for request", "BAD_DATA", { value: answers, info: { payload } }));
        else if ("error" in answer) reject(this.getRpcError(payload, answer));
        else resolve(answer.result);
      }
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }

  // JsonRpcProvider declares JsonRpcResult[]; errors travel in the same array (JsonRpcApiProvider reads both).
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    return (await this.sendWithFailover(payload)) as JsonRpcResult[];
  }

  private async sendWithFailover(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcAnswer[]> {
    const pending = new Map((Array.isArray(payload) ? payload : [payload]).map((p) => [p.id, p]));
    const answers: JsonRpcAnswer[] = [];
    const deadline = Date.now() + this.policy.budgetMs;
    let lastFailure = "no attempt";
    let retryAfterMs = 0;
    /** This call's own wait after a 429 (other calls are not held: the provider answered them). */
    let throttledUntil = 0;
    for (let attempt = 0; ; attempt++) {
      const endpoint = this.pick();
      const wait = Math.max(
        endpoint === this.lastThrottled ? throttledUntil - Date.now() : 0,
        attempt === 0 ? 0 : backoff(attempt),
      );
      if (Date.now() + wait >= deadline) break;
      if (wait > 0) await sleep(wait);
      const items = [...pending.values()];
      const outcome = await this.attempt(
        endpoint,
        items.length === 1 && !Array.isArray(payload) ? items[0] : items,
        deadline,
      );
      if (outcome.kind === "answers") {
        for (const answer of outcome.answers) {
          const request = pending.get(answer.id);
          if (!request) continue;
          if ("error" in answer && isTransientRpcError(answer.error)) {
            lastFailure = `${request.method}: ${(answer.error as RpcErrorObject).message ?? "error"}`;
            continue; // asked again below
          }
          answers.push(answer);
          pending.delete(answer.id);
        }
        if (!pending.size) return answers;
        // Passing errors count against the URL that gave them, so the next try prefers another.
        this.failed(endpoint, "error", lastFailure);
        continue;
      }
      lastFailure = outcome.detail;
      if (outcome.kind === "throttled") {
        retryAfterMs = outcome.retryAfterMs;
        throttledUntil = Date.now() + retryAfterMs;
        this.lastThrottled = endpoint;
      }
    }
    throw new ChainUnavailableError(
      this.chainId,
      lastFailure,
      Math.max(1, Math.ceil(Math.max(retryAfterMs, 1000) / 1000)),
    );
  }

  /**
   * One JSON-RPC call with the same failover and retries, answering the node's result or throwing its error object
   * as is ({ code, message, data }, EIP-1193 style): for clients that decode node errors themselves (viem).
   */
  async request(method: string, params: readonly unknown[] = []): Promise<unknown> {
    const [answer] = await this.sendWithFailover({ id: ++this.rawIds, jsonrpc: "2.0", method, params: [...params] });
    if ("error" in answer)
      throw Object.assign(new Error(String((answer.error as RpcErrorObject).message ?? "RPC error")), answer.error);
    return answer.result;
  }

  private rawIds = 1_000_000_000;
  /** The URL that last answered 429 (the call that got it waits out its Retry-After before asking it again). */
  private lastThrottled?: RpcEndpoint;

  /** The URL the next call goes to (what the operator console shows as in use). */
  inUse(): RpcEndpoint {
    return this.pick();
  }

  /** The URL to try next: not resting first, then fewer failures in a row, then the operator's order. */
  private pick(): RpcEndpoint {
    const now = Date.now();
    let best = this.endpoints[0];
    for (const e of this.endpoints) {
      const a = [e.resting(now) ? 1 : 0, e.failures, e.priority];
      const b = [best.resting(now) ? 1 : 0, best.failures, best.priority];
      if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) best = e;
    }
    // All resting: the one whose throttling ends first (a URL resting after failures is tried again at once: with a
    // single URL, a node that is back must not wait out the rest).
    if (best.resting(now)) best = this.endpoints.reduce((x, y) => (y.throttledUntil < x.throttledUntil ? y : x));
    return best;
  }

  private failed(endpoint: RpcEndpoint, outcome: "error" | "timeout", detail: string): void {
    endpoint.failures++;
    endpoint.failed++;
    if (endpoint.failures >= this.policy.failuresBeforeRest) endpoint.restUntil = Date.now() + this.policy.restMs;
    this.observe({ endpoint, outcome, detail });
  }

  private async attempt(
    endpoint: RpcEndpoint,
    body: JsonRpcPayload | JsonRpcPayload[],
    deadline: number,
  ): Promise<
    | { kind: "answers"; answers: JsonRpcAnswer[] }
    | { kind: "failed"; detail: string }
    | { kind: "throttled"; detail: string; retryAfterMs: number }
  > {
    const started = Date.now();
    const timeoutMs = Math.max(1, Math.min(this.policy.attemptTimeoutMs, deadline - started));
    let response: { status: number; retryAfter?: string; text: string };
    try {
      response = await postJson(
        endpoint.url,
        JSON.stringify(body),
        timeoutMs,
        endpoint.url.startsWith("https:") ? this.agents.https : this.agents.http,
      );
    } catch (error) {
      const detail = (error as Error).message;
      this.failed(endpoint, /timed out/.test(detail) ? "timeout" : "error", detail);
      return { kind: "failed", detail: `${endpoint.label}: ${detail}` };
    }
    if (response.status === 429) {
      const retryAfterMs = Math.min(RETRY_AFTER_CAP_MS, parseRetryAfter(response.retryAfter) ?? 1000);
      // Throttling is not ill health: the URL rests until the provider's time, without counting as a failure.
      endpoint.throttledUntil = Math.max(endpoint.throttledUntil, Date.now() + retryAfterMs);
      endpoint.throttled++;
      this.observe({ endpoint, outcome: "throttled", detail: `HTTP 429` });
      return { kind: "throttled", detail: `${endpoint.label}: HTTP 429 (rate limited)`, retryAfterMs };
    }
    if (response.status < 200 || response.status >= 300) {
      const detail = `HTTP ${response.status}`;
      this.failed(endpoint, "error", detail);
      // A status that will never change is still not a verdict on the call: it is the provider's.
      return {
        kind: "failed",
        detail: `${endpoint.label}: ${detail}${isTransientHttpStatus(response.status) ? "" : " (check the RPC URL)"}`,
      };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.text);
    } catch {
      this.failed(endpoint, "error", "not JSON");
      return { kind: "failed", detail: `${endpoint.label}: answer is not JSON` };
    }
    const answers = (Array.isArray(parsed) ? parsed : [parsed]) as JsonRpcAnswer[];
    if (!answers.every((a) => a && typeof a === "object" && "id" in a)) {
      // A batch refused as a whole ({ error } without id): rate limits often answer so.
      const error = (answers[0] as { error?: RpcErrorObject } | undefined)?.error;
      this.failed(endpoint, "error", error?.message ?? "malformed answer");
      return { kind: "failed", detail: `${endpoint.label}: ${error?.message ?? "malformed answer"}` };
    }
    const ms = Date.now() - started;
    endpoint.latencyMs = endpoint.latencyMs === undefined ? ms : 0.8 * endpoint.latencyMs + 0.2 * ms;
    endpoint.failures = 0;
    endpoint.answered++;
    this.observe({ endpoint, outcome: "ok" });
    return { kind: "answers", answers };
  }

  override destroy(): void {
    super.destroy();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function backoff(attempt: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (attempt - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** Retry-After as seconds or an HTTP date, in ms. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs JSON and reads the whole answer, or fails after `timeoutMs` (the socket is destroyed). */
function postJson(
  url: string,
  body: string,
  timeoutMs: number,
  agent: http.Agent,
): Promise<{ status: number; retryAfter?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const transport = target.protocol === "https:" ? https : http;
    const headers: Record<string, string | number> = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    };
    if (target.username || target.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64")}`;
    }
    const request = transport.request(target, { method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        clearTimeout(timer);
        const retryAfter = response.headers["retry-after"];
        resolve({
          status: response.statusCode ?? 0,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
      response.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}
