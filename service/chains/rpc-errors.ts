/**
 * What an RPC provider's answer means for the caller. Providers behind load balancers fail in passing all the time
 * (a lagging backend's `header not found`, a rate limit, a reset connection): such an answer is retried, elsewhere
 * when another URL is configured, and never becomes a final verdict on a transaction or a request.
 */

/** JSON-RPC error codes that mean "not now" rather than "no": limit exceeded, internal error, resource unavailable. */
const TRANSIENT_CODES = new Set([-32005, -32603, -32002, -32016, 429]);

/** Node messages that mean the node that answered could not answer now (another node, or a moment later, can). */
const TRANSIENT_MESSAGE =
  /header not found|missing trie node|unknown block|block not found|request timed out|timeout|timed out|rate limit|too many requests|over rate limit|capacity|try again|temporar|unavailable|upstream|no backend|bad gateway|gateway|connection|socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|internal error|server error|overloaded|busy/i;

/** Messages a node gives for a transaction or call it judged: these are answers, not passing failures. */
const VERDICT_MESSAGE =
  /revert|nonce|insufficient funds|underpriced|already known|gas|invalid|fee cap|max fee|tip|exceeds|intrinsic|sender|signature|replacement/i;

export interface RpcErrorObject {
  code?: number;
  message?: string;
  data?: unknown;
}

/** Whether a JSON-RPC error object (from a 200 answer's `error`) is a passing failure worth retrying. */
export function isTransientRpcError(error: RpcErrorObject | undefined): boolean {
  if (!error) return false;
  const message = typeof error.message === "string" ? error.message : "";
  if (VERDICT_MESSAGE.test(message) && !/header not found|missing trie node|timeout|timed out/i.test(message))
    return false;
  if (typeof error.code === "number" && TRANSIENT_CODES.has(error.code)) return true;
  return TRANSIENT_MESSAGE.test(message);
}

/** HTTP statuses worth another try: timeouts, throttling and server-side failures (not 501/505: those never change). */
export function isTransientHttpStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/**
 * Thrown when a chain's RPC could not answer within the retry budget: every configured URL failed or throttled. It
 * never means "no"; the HTTP layer answers 503 with Retry-After, the engine waits and tries again.
 */
export class ChainUnavailableError extends Error {
  readonly code = "CHAIN_UNAVAILABLE";
  constructor(
    readonly chainId: number,
    readonly lastFailure: string,
    /** When trying again makes sense, in seconds (at least 1). */
    readonly retryAfterSeconds: number,
  ) {
    super(`chain ${chainId} is not answering (${lastFailure}); try again in ${retryAfterSeconds} s`);
  }
}

/**
 * Whether an error thrown by a provider call is a passing failure: the chain could not be asked, not a verdict. Covers
 * our own ChainUnavailableError and the ethers errors a transport failure surfaces as.
 */
export function isChainUnavailable(error: unknown): boolean {
  if (error instanceof ChainUnavailableError) return true;
  const e = error as
    { code?: unknown; error?: RpcErrorObject; info?: { error?: RpcErrorObject }; message?: unknown } | undefined;
  if (!e || typeof e !== "object") return false;
  if (e.code === "CHAIN_UNAVAILABLE" || e.code === "TIMEOUT" || e.code === "NETWORK_ERROR" || e.code === "SERVER_ERROR")
    return true;
  const inner = e.error ?? e.info?.error;
  if (inner && isTransientRpcError(inner)) return true;
  return false;
}

/**
 * A read asked of the latest block first, and `otherwise` (the pending block) only when the latest one refuses it
 * (`refused`: by default any answer but a chain that could not be asked), whose answer then stands: the call may depend
 * on a transaction not mined yet, or on a time the latest block has not reached. The latest block comes first because
 * some nodes (Hardhat's) answer a pending-block read by running every transaction in their pool, which made a
 * block's worth of paid operations quadratic in their number (bench/results/lanes-runs.md).
 */
export function latestFirst<T>(
  onLatest: () => Promise<T>,
  otherwise: () => Promise<T>,
  refused: (error: unknown) => boolean = (error) => !isChainUnavailable(error),
): Promise<T> {
  return onLatest().catch((error: unknown) => {
    if (!refused(error)) throw error;
    return otherwise();
  });
}

/** What a node's answer to eth_sendRawTransaction means (the error strings are geth's; most nodes share them). */
export type BroadcastVerdict =
  /** The node has it: taken now, or already (same bytes). */
  | { kind: "accepted" }
  /** The nonce is already used on chain (by this transaction or another): look at receipts before anything else. */
  | { kind: "nonce-used"; message: string }
  /** A nonce ahead of the account's next one (a predecessor not in this node yet). */
  | { kind: "nonce-ahead"; message: string }
  /** Fees too low for the node or the next block, or too low to replace a transaction with the same nonce. */
  | { kind: "underpriced"; message: string }
  /** The node could not answer: try again later, never a verdict. */
  | { kind: "transient"; message: string }
  /** A definitive refusal (insufficient funds, intrinsic gas, invalid signature…). */
  | { kind: "refused"; message: string };

const KNOWN = /already known|known transaction|already imported|same hash/i;
const NONCE_USED = /nonce too low|nonce has already been used|NONCE_EXPIRED|already been used|invalid nonce.*lower/i;
const NONCE_AHEAD = /nonce too high|transactions can't be queued|gapped/i;
const UNDERPRICED =
  /underpriced|too low for the next block|fee cap less than block base fee|max fee per gas less than block base fee|maxFeePerGas.*base fee|fee too low|gas price too low|feecap/i;

/** Classifies the message of a refused eth_sendRawTransaction (after transport retries). */
export function broadcastVerdict(error: unknown): BroadcastVerdict {
  if (isChainUnavailable(error)) return { kind: "transient", message: messageOf(error) };
  const message = messageOf(error);
  if (KNOWN.test(message)) return { kind: "accepted" };
  if (NONCE_USED.test(message)) return { kind: "nonce-used", message };
  if (NONCE_AHEAD.test(message)) return { kind: "nonce-ahead", message };
  if (UNDERPRICED.test(message)) return { kind: "underpriced", message };
  if (isTransientRpcError({ message })) return { kind: "transient", message };
  return { kind: "refused", message };
}

/** The most specific message of an ethers / JSON-RPC error. */
export function messageOf(error: unknown): string {
  const e = error as {
    error?: { message?: string };
    info?: { error?: { message?: string } };
    shortMessage?: string;
    message?: string;
  };
  return e?.error?.message ?? e?.info?.error?.message ?? e?.shortMessage ?? e?.message ?? String(error);
}
