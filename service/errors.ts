/**
 * The one error type of the service. Every failure a client sees is an ApiError rendered as
 * `{ "error": { "code", "message", "details"? }, "message" }` (clients also read the top-level `message`).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toBody() {
    return {
      error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) },
      message: this.message,
    };
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, "BAD_REQUEST", message, details);
export const validationError = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, "VALIDATION_ERROR", message, details);
export const notFound = (message: string, details?: Record<string, unknown>) =>
  new ApiError(404, "NOT_FOUND", message, details);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError(409, "CONFLICT", message, details);
export const forbidden = (message: string, details?: Record<string, unknown>) =>
  new ApiError(403, "FORBIDDEN", message, details);
export const unauthorized = (message: string, details?: Record<string, unknown>) =>
  new ApiError(401, "UNAUTHORIZED", message, details);
/** A pre-check against chain state failed: the transaction would revert or make no sense. */
export const preflightError = (message: string, details?: Record<string, unknown>) =>
  new ApiError(400, "PREFLIGHT_FAILED", message, details);
export const unavailable = (message: string, details?: Record<string, unknown>) =>
  new ApiError(503, "UNAVAILABLE", message, details);
