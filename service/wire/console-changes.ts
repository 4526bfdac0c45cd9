import { z } from "zod";
import { next, nullableTime, pageFields, timestamp } from "./console";

/**
 * The operator console's JSON for the pages served by routes/console-changes.ts: webhook endpoints and their
 * deliveries (replay, disable), investors' KYC (approve, reject), keys, credits and prices. Strict objects, as every
 * response schema of the API.
 */

// ---------------------------------------------------------------------------------------------------------------
// Webhooks

export const ConsoleEndpoint = z
  .strictObject({
    id: z.string(),
    apiKeyId: z.string().nullable(),
    keyEmail: z.string().nullable(),
    txId: z.string().nullable(),
    url: z.string(),
    description: z.string().nullable(),
    eventTypes: z.array(z.string()),
    state: z
      .enum(["active", "failing", "disabled"])
      .meta({ description: "The one name of its state: disabled, failing (since failingSince) or active" }),
    disabledAt: nullableTime,
    disabledReason: z.string().nullable(),
    failingSince: nullableTime,
    pending: z.number().int(),
    failed: z.number().int(),
    delivered: z.number().int(),
    createdAt: timestamp,
  })
  .meta({ id: "ConsoleEndpoint" });

export const ConsoleEndpointList = z
  .strictObject({ items: z.array(ConsoleEndpoint), ...pageFields })
  .meta({ id: "ConsoleEndpointList" });

export const ConsoleDelivery = z
  .strictObject({
    id: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    txId: z.string().nullable(),
    manual: z.boolean(),
    status: z.enum(["pending", "delivering", "delivered", "failed"]),
    waiting: z.string().nullable().meta({
      description: "Why an owed delivery is not on its way: held behind delivery N, its endpoint disabled, …",
    }),
    heldBehind: z
      .string()
      .nullable()
      .meta({ description: "The earlier delivery of the same batch it waits for (events reach a receiver in order)" }),
    replayOf: z.string().nullable().meta({ description: "The delivery this one replays" }),
    replays: z.array(z.string()).meta({ description: "Its replays, oldest first" }),
    requestBody: z.string().meta({ description: "The JSON every attempt POSTs (the event), its first 2 KiB" }),
    requestBodyBytes: z.number().int(),
    attempts: z.array(
      z.strictObject({
        attempt: z.number().int(),
        at: timestamp,
        durationMs: z.number().int(),
        request: z.strictObject({
          method: z.literal("POST"),
          url: z.string(),
          headers: z
            .record(z.string(), z.string())
            .meta({ description: "As sent, but the signature (made with the endpoint's secret, never shown)" }),
        }),
        response: z.strictObject({
          statusCode: z.number().int().nullable(),
          body: z
            .string()
            .nullable()
            .meta({ description: "The answer's first KiB, anything that looks like a secret hidden" }),
          error: z.string().nullable(),
        }),
      }),
    ),
    nextAttemptAt: nullableTime,
    deliveredAt: nullableTime,
    createdAt: timestamp,
  })
  .meta({ id: "ConsoleDelivery" });

export const ConsoleEndpointDetail = z
  .strictObject({
    endpoint: ConsoleEndpoint,
    items: z.array(ConsoleDelivery),
    ...pageFields,
  })
  .meta({ id: "ConsoleEndpointDetail" });

export const ReplayBody = z.strictObject({
  deliveryId: z.string().regex(/^\d{1,18}$/, "must be a delivery id (digits)"),
});
export const ReplayRangeBody = z.strictObject({
  from: z.iso
    .datetime({ offset: true, message: "must be an ISO 8601 time" })
    .meta({ description: "Failed deliveries created at or after this time…" }),
  to: z.iso
    .datetime({ offset: true, message: "must be an ISO 8601 time" })
    .meta({ description: "…and before this one" }),
});
export const DisableBody = z.strictObject({ reason: z.string().trim().min(1).max(200).optional() });

export const ConsoleReplayed = z.strictObject({ replayed: z.array(ConsoleDelivery) }).meta({ id: "ConsoleReplayed" });

// ---------------------------------------------------------------------------------------------------------------
// KYC

export const ConsoleInvestor = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    keyId: z.string(),
    keyEmail: z.string().nullable(),
    status: z.enum(["none", "invited", "submitted", "approved", "rejected"]),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    country: z.string().nullable(),
    walletAddress: z.string().nullable(),
    signedMessage: z
      .string()
      .nullable()
      .meta({ description: "What the wallet signed (EIP-4361), proving the details and the wallet" }),
    submittedAt: nullableTime,
    reviewedBy: z
      .string()
      .nullable()
      .meta({ description: 'Who decided, as tenants see it: the provider ("operator")' }),
    decidedBy: z
      .string()
      .nullable()
      .meta({ description: 'The operator who decided (their e-mail), or "admin tool"; null before a decision' }),
    reviewedAt: nullableTime,
    reason: z.string().nullable(),
  })
  .meta({ id: "ConsoleInvestor" });

export const ConsoleInvestorList = z
  .strictObject({ items: z.array(ConsoleInvestor), next })
  .meta({ id: "ConsoleInvestorList" });
export const RejectBody = z.strictObject({
  reason: z.string().trim().min(1, "is required").max(500, "must be at most 500 characters"),
});

// ---------------------------------------------------------------------------------------------------------------
// Keys and money

export const ConsoleKey = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    plan: z.string(),
    createdAt: timestamp,
    revokedAt: nullableTime,
    credits: z.record(z.string(), z.number().int()),
    signers: z.array(z.string()),
  })
  .meta({ id: "ConsoleKey" });

export const ConsolePrice = z
  .strictObject({
    operation: z.string(),
    tier: z.string(),
    amount: z.string().meta({ description: "USDC" }),
    overridden: z.boolean(),
  })
  .meta({ id: "ConsolePrice" });

export const ConsoleKeys = z
  .strictObject({
    items: z.array(ConsoleKey),
    allKeysSigners: z
      .array(z.string())
      .meta({ description: "Signers whitelisted for every key and for payers without one" }),
    prices: z.array(ConsolePrice),
    plans: z.array(z.string()),
    creditMethods: z.array(z.string()),
  })
  .meta({ id: "ConsoleKeys" });

export const CreateKeyBody = z.strictObject({ email: z.string(), plan: z.string() });
export const CreatedKey = z
  .strictObject({
    key: ConsoleKey,
    apiKey: z.string().meta({ description: "The key itself: shown here once, stored only as a peppered hash" }),
  })
  .meta({ id: "ConsoleCreatedKey" });
export const CreditsBody = z.strictObject({
  method: z.string(),
  amount: z.coerce.number({ error: "must be a number" }),
});
export const SignerBody = z.strictObject({ address: z.string() });
export const PriceBody = z.strictObject({ operation: z.string(), amount: z.string() });

export const ConsoleCommandResult = z
  .looseObject({})
  .meta({ id: "ConsoleCommandResult", description: "What the admin command of the same name answers" });

export type Investor = z.infer<typeof ConsoleInvestor>;
export type KeysView = z.infer<typeof ConsoleKeys>;
