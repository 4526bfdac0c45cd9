/**
 * The catalogue of error codes: every `error.code` a client can read, with its HTTP status and what it means. It is
 * the foundation layer of the errors (it imports nothing): ApiError takes its code from here and its status with it,
 * /openapi.json publishes it (the ErrorCode schema, and a table in the document's description that /docs shows), and
 * a test checks that no code is written anywhere else.
 *
 * Invalid input has one shape: BAD_REQUEST, with `error.param` naming the field at fault and `error.details.field` and
 * `error.details.issues[]` ({ field, message }) beside it.
 */
export const ERROR_CODES = {
  BAD_REQUEST: {
    status: 400,
    meaning:
      "The request is invalid: a field is missing or wrong (error.param names it), or a rule about the request failed",
  },
  PREFLIGHT_FAILED: {
    status: 400,
    meaning: "A check against the chain failed: the transaction would revert or make no sense now",
  },
  TRANSACTION_MISMATCH: {
    status: 400,
    meaning: "A signed transaction differs from the one prepared for this txId (details name the index and the field)",
  },
  INVALID_SIGNATURE: {
    status: 400,
    meaning: "A signed transaction is not signed by the prepared signer, or its signature cannot be recovered",
  },
  REPLACEMENT_UNDERPRICED: {
    status: 400,
    meaning: "A replacement for a pending transaction does not raise both fees by at least 10%",
  },
  MALFORMED_JSON: { status: 400, meaning: "The request body is not valid JSON" },
  MALFORMED_URL: { status: 400, meaning: "The URL has a %-escape that does not decode" },
  REQUEST_ABORTED: { status: 400, meaning: "The request body was not received completely" },
  UNAUTHORIZED: { status: 401, meaning: "An API key is needed and none was sent, or the key sent is not valid" },
  PAYMENT_REQUIRED: {
    status: 402,
    meaning: "The call must be paid: pay the x402 quote in the PAYMENT-REQUIRED header and repeat it with X-PAYMENT",
  },
  FORBIDDEN: {
    status: 403,
    meaning: "The caller may not do this (another key's token or batch, a signer not whitelisted, …)",
  },
  OUT_OF_CREDITS: {
    status: 403,
    meaning: "The API key has no credit left for this method (or for invitations, the faucet)",
  },
  NOT_FOUND: { status: 404, meaning: "No such route, record or document" },
  METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: "The path exists but does not answer this HTTP method: the Allow header lists the ones it does",
  },
  CONFLICT: {
    status: 409,
    meaning: "The request conflicts with what is recorded (already sent, already exists, changed meanwhile)",
  },
  ALREADY_PAID: { status: 409, meaning: "What this payment is for has already been paid" },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    meaning:
      "This Idempotency-Key was used for another request (another route or body), or a request with it is still being answered",
  },
  LINK_USED: { status: 410, meaning: "The onboarding link was already used to submit the investor's details" },
  LINK_REPLACED: {
    status: 410,
    meaning: "The onboarding link was replaced by a newer one, or the onboarding was closed",
  },
  LINK_EXPIRED: { status: 410, meaning: "The onboarding link has expired" },
  LINK_LOCKED: { status: 410, meaning: "The onboarding link was locked after too many refused submissions" },
  EVENT_ID_EXPIRED: {
    status: 410,
    meaning: "The event id to resume from is older than the retention window: reconnect without it",
  },
  BATCH_EXPIRED: {
    status: 410,
    meaning: "The prepared batch was never sent and expired (PREPARED_BATCH_TTL_HOURS): prepare it again",
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    meaning: "The request body is larger than the service accepts (1 MB for JSON; 10 MB per uploaded document)",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning:
      "The body is not in the content type this route reads (JSON: Content-Type: application/json), or an uploaded document is not PDF, PNG, JPEG, WebP or plain text",
  },
  UNSUPPORTED_CHARSET: { status: 415, meaning: "The body's charset is not UTF-8" },
  UNSUPPORTED_ENCODING: {
    status: 415,
    meaning: "The body's Content-Encoding is not one the service decodes (none, gzip, deflate, br)",
  },
  RATE_LIMITED: { status: 429, meaning: "Too many requests: wait the seconds in Retry-After" },
  FAUCET_COOLDOWN: {
    status: 429,
    meaning: "This recipient claimed from the faucet recently: it may claim again after Retry-After",
  },
  INTERNAL_ERROR: { status: 500, meaning: "A bug: the x-request-id header finds it in the service's logs" },
  CHAIN_READ_FAILED: {
    status: 502,
    meaning: "A read from a chain failed (a contract that does not answer, a node that returned nothing)",
  },
  UNAVAILABLE: {
    status: 503,
    meaning: "The service is not ready: its database or a chain does not answer (GET /ready; details list each check)",
  },
  PAYMENT_NOT_SETTLED: {
    status: 503,
    meaning:
      "The payment could not be settled now, for a reason of the service's: nothing delivered, nothing charged (unless details.settlementInFlight); try again",
  },
  CHAIN_UNAVAILABLE: {
    status: 503,
    meaning: "A chain this call needs is not answering: nothing was sent or charged; try again after Retry-After",
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes in catalogue order (by status). */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export function isErrorCode(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_CODES, code);
}
