import { ERROR_CODES, type ErrorCode } from "./error-codes";

export { ERROR_CODES, type ErrorCode } from "./error-codes";

/**
 * The one error type of the service. Every failure a client sees is an ApiError rendered as
 * `{ "error": { "code", "message", "param"?, "details"? }, "message" }` (clients also read the top-level `message`).
 * The code comes from the catalogue (error-codes.ts), and the HTTP status with it. `param` names the request field at
 * fault where there is one: given, or else `details.field`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly param?: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
    param?: string,
  ) {
    super(message);
    this.status = ERROR_CODES[code].status;
    const field = param ?? details?.field;
    if (typeof field === "string" && field !== "") this.param = field;
  }

  toBody() {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.param ? { param: this.param } : {}),
        ...(this.details ? { details: this.details } : {}),
      },
      message: this.message,
    };
  }
}

/**
 * Invalid input, in its one shape: BAD_REQUEST, `param` and `details.field` naming the field, and `details.issues[]`
 * ({ field, message }) listing what is wrong with it (one issue unless the schema found several).
 */
export function badRequest(message: string, details?: Record<string, unknown>): ApiError {
  const field = details?.field;
  if (typeof field !== "string" || field === "" || details?.issues !== undefined)
    return new ApiError("BAD_REQUEST", message, details);
  const relative = message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
  return new ApiError("BAD_REQUEST", message, { ...details, issues: [{ field, message: relative }] });
}
/** The same shape as badRequest (VALIDATION_ERROR was its code before invalid input had one shape). */
export const validationError = badRequest;
export const notFound = (message: string, details?: Record<string, unknown>) =>
  new ApiError("NOT_FOUND", message, details);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError("CONFLICT", message, details);
export const forbidden = (message: string, details?: Record<string, unknown>) =>
  new ApiError("FORBIDDEN", message, details);
export const unauthorized = (message: string, details?: Record<string, unknown>) =>
  new ApiError("UNAUTHORIZED", message, details);
/** A pre-check against chain state failed: the transaction would revert or make no sense. */
export const preflightError = (message: string, details?: Record<string, unknown>) =>
  new ApiError("PREFLIGHT_FAILED", message, details);
export const unavailable = (message: string, details?: Record<string, unknown>) =>
  new ApiError("UNAVAILABLE", message, details);
/** `Out of credits for <method>` (the words clients match on), or the message a credit kind has (invitations). */
export const outOfCredits = (method: string, message = `Out of credits for ${method}`) =>
  new ApiError("OUT_OF_CREDITS", message, { method });
