import { createHash } from "node:crypto";
import type { Request } from "express";
import { z } from "zod";
import { ApiError, badRequest } from "../errors";
import type { IdempotentRequests, KeptAnswer } from "../store/idempotent-requests";

/** The header a client names a request with, so that a retry of it is answered once (Stripe's convention). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Set on an answer given again for a retried request. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

export const idempotencyKeySchema = z
  .string()
  .min(1, "must not be empty")
  .max(255, "must be at most 255 characters")
  .regex(/^[\x21-\x7e]+$/, "must be visible ASCII characters without spaces (e.g. a UUID)")
  .meta({
    description:
      "Names this request: a retry with the same key and body gets the first answer and is charged once (kept 24 hours); the same key with another body is a 409",
  });

/** A request under an Idempotency-Key that holds the key: keep its answer when it succeeded, else let the key go. */
export interface IdempotentRun {
  keep(answer: KeptAnswer): Promise<void>;
  letGo(): Promise<void>;
}

/**
 * The Idempotency-Key of a request to `route` by `scope` (the API key's id, or every keyless caller): undefined
 * without the header; the first answer again (`replay`) for a retry of the same request; a 409 for another request
 * under the key, or while the first is still running.
 */
export async function startIdempotent(
  store: IdempotentRequests,
  req: Request,
  route: string,
  scope: string,
): Promise<{ replay: KeptAnswer } | IdempotentRun | undefined> {
  const header = req.header(IDEMPOTENCY_HEADER);
  if (header === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(header.trim());
  if (!parsed.success)
    throw badRequest(`${IDEMPOTENCY_HEADER} ${parsed.error.issues[0].message}`, { header: IDEMPOTENCY_HEADER });
  const key = parsed.data;
  const requestHash = createHash("sha256")
    .update(canonicalJson({ method: req.method, query: req.query ?? {}, body: req.body ?? null }))
    .digest("hex");
  const started = await store.start(scope, key, route, requestHash);
  if (started.kind === "replay") return { replay: started.answer };
  if (started.kind === "conflict") {
    throw new ApiError(
      "IDEMPOTENCY_CONFLICT",
      started.reason === "in progress"
        ? `A request with this Idempotency-Key is still being answered: wait for it, then retry`
        : `This Idempotency-Key was used for another request (another route or body): use a new key for a new request`,
      { header: IDEMPOTENCY_HEADER, reason: started.reason },
    );
  }
  return { keep: (answer) => store.keep(scope, key, answer), letGo: () => store.letGo(scope, key) };
}

/** JSON with every object's keys in order: the same body however its keys were ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
