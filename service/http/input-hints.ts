import { ApiError } from "../errors";
import { closestName, valueAt } from "../wire/near-names";

/**
 * Hints for input a new user got nearly right. Unknown body keys are accepted (existing clients send
 * raw option keys next to the normalized ones), so a misspelled field is not refused by itself; but when the request
 * fails because a field is missing and the body carries an unknown key that is a near miss of it (`tokenSymbl` for
 * `tokenSymbol`), the error names that key and the field it was probably meant to be.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * When `error` is invalid input about a field that is missing from `input`, and `input` (at the same level) carries an
 * unknown key that is a near miss of that field, the same error with a message that names the key and the field:
 * `tokenSymbol is required. Received unknown parameter: tokenSymbl. Did you mean tokenSymbol?` Otherwise `error`.
 * `known` holds the fields the route knows (a known field is never taken for a misspelling).
 */
export function withMisspellingHint(error: unknown, input: unknown, known: ReadonlySet<string> = new Set()): unknown {
  if (!(error instanceof ApiError) || error.code !== "BAD_REQUEST" || !error.param) return error;
  const path = error.param.split(".");
  if (valueAt(input, path) !== undefined) return error;
  const container = valueAt(input, path.slice(0, -1));
  if (!isObject(container)) return error;
  const field = path[path.length - 1];
  const topLevel = path.length === 1;
  const unknownKeys = Object.keys(container).filter((key) => key !== field && !(topLevel && known.has(key)));
  const misspelled = unknownKeys.find((key) => closestName(key, [field]) === field);
  if (!misspelled) return error;
  const prefix = path.length > 1 ? `${path.slice(0, -1).join(".")}.` : "";
  const message = `${error.message.replace(/\.$/, "")}. Received unknown parameter: ${prefix}${misspelled}. Did you mean ${field}?`;
  return new ApiError(
    error.code,
    message,
    { ...error.details, unknownParameter: `${prefix}${misspelled}`, didYouMean: error.param },
    error.headers,
    error.param,
  );
}
