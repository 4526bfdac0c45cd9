import { ApiError, badRequest, unauthorized } from "../errors";
import type { ApiKeyRecord } from "../store/api-keys";
import type { Stores } from "../store/stores";
import type { RequestHeaders } from "../wire/request";

/** What API-key checks read. */
export type KeyServices = Pick<Stores, "apiKeys">;

/** How an endpoint answers a missing key: existing clients expect a different answer on different endpoints. */
export type MissingKeyAnswer = "endpoint" | "headers" | "method";

export const KEY_REQUIRED_FOR_ENDPOINT = "API key is required for this endpoint";
export const KEY_MISSING_FROM_HEADERS = "API key is missing from headers.";
export const KEY_REQUIRED_FOR_METHOD = "API key is required for this method";

export function presentedKey(req: RequestHeaders): string | undefined {
  const value = req.header("x-api-key");
  return value && value.trim() ? value.trim() : undefined;
}

/** The caller's key record when an x-api-key header is present; a present but invalid key is a 401. */
export async function optionalApiKey(services: KeyServices, req: RequestHeaders): Promise<ApiKeyRecord | undefined> {
  const key = presentedKey(req);
  if (!key) return undefined;
  const record = await services.apiKeys.verify(key);
  if (!record) throw unauthorized("Invalid API key", { header: "x-api-key" });
  return record;
}

export async function requireApiKey(
  services: KeyServices,
  req: RequestHeaders,
  missing: MissingKeyAnswer,
): Promise<ApiKeyRecord> {
  const record = await optionalApiKey(services, req);
  if (record) return record;
  throw missingKeyError(missing);
}

/** The answer to a missing key, which differs per endpoint; the three messages are matched by clients word for word. */
export function missingKeyError(missing: MissingKeyAnswer): ApiError {
  if (missing === "headers") return badRequest(KEY_MISSING_FROM_HEADERS, { header: "x-api-key" });
  return unauthorized(missing === "endpoint" ? KEY_REQUIRED_FOR_ENDPOINT : KEY_REQUIRED_FOR_METHOD, {
    header: "x-api-key",
  });
}
