import { z } from "zod";
import { EVENT_TYPES } from "../events/types";
import { METHODS } from "../methods";

/**
 * What the console's lists may be filtered by, as the URL states it: one schema per list, read by its JSON endpoint
 * (/openapi.json documents it) and by its page, so both refuse a bad filter alike (400 naming the field; the page
 * shows it beside the form instead of an empty list). Empty form fields are left out before parsing (pages).
 */

const cursor = (description: string) =>
  z
    .string()
    .max(200)
    .optional()
    .meta({ description: `${description}: the \`next\` (before) or \`previous\` (after) of the page beside it` });

/** Pages both ways: older than `before`, or newer than `after` (never both). */
const paging = {
  before: cursor("The page of rows older than this cursor"),
  after: cursor("The page of rows newer than this cursor"),
};

/**
 * A time a filter starts or ends at: ISO 8601, or what a datetime-local field sends (YYYY-MM-DDTHH:MM[:SS]), read as
 * UTC. Answered as ISO 8601.
 */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?$/;
const ZONED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
export const timeBound = z
  .string()
  .refine((v) => (LOCAL_TIME.test(v) || ZONED_TIME.test(v)) && !Number.isNaN(Date.parse(asUtc(v))), {
    message: "must be a time: ISO 8601 (2026-12-01T09:30:00Z), or YYYY-MM-DDTHH:MM read as UTC",
  })
  .transform((v) => new Date(asUtc(v)).toISOString());

function asUtc(v: string): string {
  return LOCAL_TIME.test(v) ? `${v}Z` : v;
}

const range = {
  from: timeBound.optional().meta({ description: "From this time on (UTC when no zone is given)" }),
  to: timeBound.optional().meta({ description: "Before this time (UTC when no zone is given)" }),
};

const chain = z.coerce
  .number({ error: "must be a chain id (a number)" })
  .int("must be a chain id (a whole number)")
  .positive("must be a chain id")
  .optional()
  .meta({ description: "Chain id" });

export const METHOD_NAMES = METHODS.map((m) => m.name).sort();
export const BATCH_STATUSES = ["prepared", "sending", "success", "rejected"] as const;
export const PAYMENT_STATES = ["reserved", "settling", "settled", "released"] as const;
export const DELIVERY_STATUSES = ["pending", "delivering", "delivered", "failed"] as const;
export const ENDPOINT_STATES = ["active", "failing", "disabled"] as const;
export const DELIVERY_EVENT_TYPES = [...EVENT_TYPES].sort();

const oneOf = <T extends readonly [string, ...string[]]>(values: T, what: string) =>
  z.enum(values, { error: `must be ${what}: ${values.join(", ")}` });

/** A filter that is on when its value is "1" (a checkbox's). */
const flag = (description: string) =>
  z.enum(["1"], { error: 'must be "1" (or left out)' }).optional().meta({ description });

/** Both ends of a range given: the start comes first. */
const ordered = <T extends { from?: string; to?: string; before?: string; after?: string }>(
  q: T,
  ctx: z.RefinementCtx,
) => {
  if (q.from && q.to && q.from >= q.to) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from" });
  if (q.before && q.after)
    ctx.addIssue({ code: "custom", path: ["after"], message: "cannot be given with before (one direction per page)" });
};

export const TransactionsQuery = z
  .strictObject({
    q: z.string().max(200).optional().meta({ description: "txId, transaction hash, address or API key id" }),
    chain,
    method: oneOf(METHOD_NAMES as [string, ...string[]], "a method").optional(),
    status: oneOf(BATCH_STATUSES, "a batch status").optional(),
    stuck: flag(
      "Only batches with a transaction pending longer than CONSOLE_STUCK_AFTER_BLOCKS blocks, or priced below its chain's base fee",
    ),
    ...range,
    ...paging,
  })
  .superRefine(ordered);
export type TransactionsQuery = z.infer<typeof TransactionsQuery>;

export const PaymentsQuery = z
  .strictObject({
    status: oneOf(PAYMENT_STATES, "a payment state").optional(),
    payer: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, "must be an address (0x + 40 hex)")
      .optional(),
    txId: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex")
      .optional(),
    settlement: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x + 64 hex")
      .optional(),
    chain,
    method: z
      .string()
      .regex(/^(\/[a-z0-9/-]{1,80}|[A-Za-z][A-Za-z0-9]{0,63})$/, "must be a method name or a paid route's path")
      .optional()
      .meta({ description: "What it paid for: a batch's method, or a paid route's path (/get-agents)" }),
    ...range,
    ...paging,
  })
  .superRefine(ordered);
export type PaymentsQuery = z.infer<typeof PaymentsQuery>;

export const EndpointsQuery = z
  .strictObject({
    state: oneOf(ENDPOINT_STATES, "an endpoint state").optional(),
    owed: flag("Only enabled endpoints with deliveries owed"),
    ...paging,
  })
  .superRefine(ordered);
export type EndpointsQuery = z.infer<typeof EndpointsQuery>;

export const DeliveriesQuery = z
  .strictObject({
    status: oneOf(DELIVERY_STATUSES, "a delivery status").optional(),
    type: oneOf(DELIVERY_EVENT_TYPES as [string, ...string[]], "an event type").optional(),
    ...range,
    ...paging,
  })
  .superRefine(ordered);
export type DeliveriesQuery = z.infer<typeof DeliveriesQuery>;

export const AuditQuery = z
  .strictObject({
    actor: z.string().max(200).optional().meta({ description: "An operator's e-mail, or `admin tool`" }),
    action: z
      .string()
      .regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*$/, "must be an action name, e.g. keys.create")
      .optional(),
    target: z.string().max(200).optional(),
    ...range,
    ...paging,
  })
  .superRefine(ordered);
export type AuditQuery = z.infer<typeof AuditQuery>;

/** A page's query as its form sent it: empty fields left out (a form sends every field, filled or not). */
export function filledIn(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ""));
}
