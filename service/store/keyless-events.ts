/**
 * The event types written for batches prepared without an API key, and delivered to their txId's webhooks and streams:
 * their data is what GET /get-transaction-status already shows anyone who knows the txId. (A module of its own, with no
 * imports: the store writes events and must not load the catalogue's schemas, which load the store.)
 */
export const KEYLESS_EVENT_TYPES = [
  "transaction.broadcast",
  "transaction.confirmed",
  "transaction.failed",
  "transaction.replaced",
  "transaction.reorged",
  "batch.completed",
  "payment.settled",
  "payment.released",
  "payment.refund_owed",
  "payment.refunded",
] as const;

/**
 * The event types the store writes itself (batches, payments, onboarding, the webhook test). The others are the methods'
 * (each declares those its confirmation announces, MethodDefinition.events), written through events/emit.ts; the
 * catalogue (events/types.ts) describes them all, and is checked to hold these.
 */
export const STORE_EVENT_TYPES = [
  ...KEYLESS_EVENT_TYPES,
  "kyc.submitted",
  "kyc.approved",
  "kyc.rejected",
  "webhook.test",
] as const;

export type StoreEventType = (typeof STORE_EVENT_TYPES)[number];
