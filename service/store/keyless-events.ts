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

/** The catalogue's event types (events/types.ts describes each and its payload). */
export const EVENT_TYPE_NAMES = [
  ...KEYLESS_EVENT_TYPES,
  "token.created",
  "token.frozen",
  "token.address_frozen",
  "token.forced_transfer",
  "token.wallet_recovered",
  "token.recovery_pending",
  "token.tokenizer_changed",
  "token.upgrade",
  "token.paused",
  "token.role_changed",
  "offering.created",
  "offering.closed",
  "agent.registered",
  "mandate.granted",
  "mandate.revoked",
  "mandate.executed",
  "kyc.submitted",
  "kyc.approved",
  "kyc.rejected",
  "webhook.test",
] as const;

export type EventType = (typeof EVENT_TYPE_NAMES)[number];
