import { z, type ZodType } from "zod";
import { BatchStatus, PaymentView, responseFields, TransactionView } from "../wire/responses";
import { KYC_STATUSES } from "../store/kyc";
import { Offering } from "../reads/sto";
import { KEYLESS_EVENT_TYPES, STORE_EVENT_TYPES } from "../store/keyless-events";
import { AgentSummary } from "../domains/agents/views";
import { TokenizerInfo } from "../domains/tokenization/views";
import { TOKEN_CONTROL_ACTIONS } from "../store/token-controls";

/**
 * The event catalogue: every event type, what its `data` holds (a zod schema, also the OpenAPI `webhooks` section and
 * the typed client's types) and who may receive it. Events are written by `emitEvent` (service/store/outbox.ts) in the
 * database transaction of the change they report; webhooks and the stream read them back.
 */

const { address, hash32, int, integerText } = responseFields;

// ---------------------------------------------------------------------------------------------------------------
// Payloads

const executionMode = z.enum(["client-signed", "client-broadcast", "service-relayed"]);

/** A transaction of a batch: the batch it belongs to and the transaction as GET /get-transaction-status shows it. */
const transactionFields = {
  txId: hash32.meta({ description: "The batch" }),
  method: z.string(),
  executionMode,
  transaction: TransactionView,
};

export const TransactionEventData = z.strictObject(transactionFields).meta({
  id: "TransactionEventData",
  description: "A transaction of a batch, as get-transaction-status shows it (`transactions[]`)",
});

export const TransactionFailedData = z
  .strictObject({
    ...transactionFields,
    reason: z.enum(["reverted", "refused", "unseen"]).meta({
      description:
        "reverted: mined and reverted (transaction.error has the revert reason); refused: the node refused it, or the service before sending it (it would revert, or its payment could not be settled: transaction.error says which); unseen: a reported hash never appeared",
    }),
  })
  .meta({ id: "TransactionFailedData" });

export const TransactionReplacedData = z
  .strictObject({
    ...transactionFields,
    replacedHash: hash32.meta({ description: "The hash the new transaction replaces (same nonce)" }),
  })
  .meta({ id: "TransactionReplacedData", description: "`transaction` is the replacement" });

export const TransactionReorgedData = z
  .strictObject({
    ...transactionFields,
    removedBlockNumber: int.meta({ description: "The block that held it and is no longer on the canonical chain" }),
  })
  .meta({ id: "TransactionReorgedData", description: "`transaction` is pending again" });

export const BatchCompletedData = BatchStatus.omit({ payments: true }).meta({
  id: "BatchCompletedData",
  description: "The batch as get-transaction-status?txId= shows it (its payments follow as payment.* events)",
});

export const PaymentEventData = z.strictObject({ txId: hash32, payment: PaymentView }).meta({ id: "PaymentEventData" });

const OfferingRecordView = Offering.omit({ status: true, currentAmountRaised: true, availableAmount: true });

export const OfferingCreatedData = z.strictObject({ offering: OfferingRecordView }).meta({
  id: "OfferingCreatedData",
  description:
    "The offering as get-sto-by-id shows it, without the live fields (status, raised, available): read them there",
});

export const OfferingClosedData = z
  .strictObject({
    offering: OfferingRecordView,
    status: z.enum(["COMPLETED", "FAILED"]),
    raised: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .meta({ description: "In the payment token's units" }),
    closedTxHash: hash32,
  })
  .meta({ id: "OfferingClosedData" });

const MandatePair = { chainId: int, agentMandateAddress: address, agent: address, principal: address };

export const MandateGrantedData = z
  .strictObject({
    ...MandatePair,
    complianceProvider: address,
    asset: address,
    validFrom: int,
    validUntil: int,
    metadata: hash32,
    actions: z.array(hash32).meta({ description: "The action labels enabled (a selector left-aligned in 32 bytes)" }),
  })
  .meta({
    id: "MandateGrantedData",
    description:
      "What the registry's MandateGranted and ActionEnabled events prove; GET /rams/mandate reads the live mandate",
  });

export const MandateRevokedData = z
  .strictObject({ ...MandatePair, revokedBy: address })
  .meta({ id: "MandateRevokedData" });

export const MandateExecutedData = z
  .strictObject({
    ...MandatePair,
    action: hash32,
    amount: integerText.meta({ description: "Base units recorded against the mandate" }),
    cumulativeUsed: integerText.meta({ description: "The mandate's total after this execution" }),
  })
  .meta({ id: "MandateExecutedData", description: "What the registry's ExecutionRecorded event proves" });

export const KycEventData = z
  .strictObject({
    investorId: z
      .string()
      .meta({ description: "The onboarding record: get-investors and get-investor-info show it as kyc.investorId" }),
    status: z.enum(KYC_STATUSES),
    needKyc: z.boolean(),
    submittedAt: z.string().nullable(),
    reviewedAt: z.string().nullable(),
    reviewedBy: z.string().nullable(),
  })
  .meta({
    id: "KycEventData",
    description:
      "Which onboarding record changed and its state: identifiers only, never the investor's e-mail, names, country, wallet or the reason (read them with get-investors or get-investor-info)",
  });

export const TokenControlData = z
  .strictObject({
    tokenSymbol: z.string(),
    tokenAddress: address,
    action: z.enum(TOKEN_CONTROL_ACTIONS),
    account: address
      .nullable()
      .meta({ description: "The holder acted on (forced transfer, recovery: the one tokens left; role: the agent)" }),
    counterparty: address.nullable().meta({ description: "Forced transfer: the receiver; recovery: the new wallet" }),
    amount: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .nullable()
      .meta({ description: "Token amount moved, or the frozen amount after a freeze (human units)" }),
    amountRaw: integerText.nullable(),
    role: z.string().nullable().meta({ description: "The role granted or revoked (e.g. FREEZER_ROLE)" }),
    agent: address.nullable().meta({ description: "Who acted (the tokenizer or an agent holding the role)" }),
    txHash: hash32,
    blockNumber: int,
  })
  .meta({
    id: "TokenControlData",
    description: "An issuer control the token's events prove; GET /get-token-controls lists them",
  });

export const WebhookTestData = z
  .strictObject({ endpointId: z.string(), message: z.string() })
  .meta({ id: "WebhookTestData" });

// ---------------------------------------------------------------------------------------------------------------
// The catalogue

interface CatalogueEntry {
  summary: string;
  data: ZodType;
}

export const EVENT_CATALOGUE = {
  "transaction.broadcast": {
    summary: "A transaction of a batch went out to the chain (or its client-broadcast hash was reported)",
    data: TransactionEventData,
  },
  "transaction.confirmed": {
    summary: "A transaction has the confirmations the service waits for",
    data: TransactionEventData,
  },
  "transaction.failed": {
    summary:
      "A transaction reverted, was refused (by the node, or by the service before sending it) or never appeared; its batch is rejected",
    data: TransactionFailedData,
  },
  "transaction.replaced": {
    summary: "A transaction was replaced by another with the same nonce (fee bump, re-signed)",
    data: TransactionReplacedData,
  },
  "transaction.reorged": {
    summary: "A confirmed transaction's block left the canonical chain; it is pending again",
    data: TransactionReorgedData,
  },
  "batch.completed": {
    summary: "A batch ended: success (every transaction confirmed, its outcome recorded) or rejected",
    data: BatchCompletedData,
  },
  "payment.settled": { summary: "An x402 payment of a batch was settled on its payment chain", data: PaymentEventData },
  "payment.released": {
    summary: "An x402 payment of a batch was released: nothing was charged",
    data: PaymentEventData,
  },
  "payment.refund_owed": {
    summary:
      "A settled x402 payment is owed back: its operation failed for a reason of the service's (payment.refund says why); it is refunded by the service's refund wallet or by the operator",
    data: PaymentEventData,
  },
  "payment.refunded": {
    summary:
      "An owed x402 payment was paid back to its payer (payment.refund.transaction, confirmed on the payment chain)",
    data: PaymentEventData,
  },
  "token.created": {
    summary: "newTokenization confirmed: the security token, its escrow and its record",
    data: TokenizerInfo,
  },
  "token.frozen": {
    summary:
      "A holder's frozen amount changed (ERC-7943 Frozen: freezeTokens, unfreezeTokens, or a forced transfer or recovery)",
    data: TokenControlData,
  },
  "token.address_frozen": {
    summary: "A whole address was frozen or unfrozen (freezeAddress, or a recovery carrying the freeze)",
    data: TokenControlData,
  },
  "token.forced_transfer": {
    summary: "Tokens were moved from a holder without its consent (forcedTransfer)",
    data: TokenControlData,
  },
  "token.wallet_recovered": {
    summary:
      "A lost wallet's balance, frozen amount and dividends moved to the investor's new wallet (executeWalletRecovery)",
    data: TokenControlData,
  },
  "token.recovery_pending": {
    summary:
      "A wallet recovery was requested (recoverWallet; executable after the token's delay) or cancelled (cancelWalletRecovery)",
    data: TokenControlData,
  },
  "token.tokenizer_changed": {
    summary: "A token's tokenizer handover started (transferTokenizer) or completed (acceptTokenizer)",
    data: TokenControlData,
  },
  "token.upgrade": {
    summary:
      "A token's or its escrow's upgrade was scheduled, cancelled or executed (scheduleTokenUpgrade, cancelTokenUpgrade, executeTokenUpgrade)",
    data: TokenControlData,
  },
  "token.paused": { summary: "A token was paused or unpaused (pauseToken, unpauseToken)", data: TokenControlData },
  "token.role_changed": {
    summary: "An agent was granted or lost a role on a token (grantTokenRole, revokeTokenRole)",
    data: TokenControlData,
  },
  "offering.created": { summary: "newSto confirmed: an offering of a token", data: OfferingCreatedData },
  "offering.closed": {
    summary: "closeOffer confirmed: the offering completed (soft cap reached) or failed",
    data: OfferingClosedData,
  },
  "agent.registered": { summary: "agentRegister confirmed: an ERC-8004 agent", data: AgentSummary },
  "mandate.granted": { summary: "A RAMS mandate was granted to an agent", data: MandateGrantedData },
  "mandate.revoked": { summary: "A RAMS mandate was revoked", data: MandateRevokedData },
  "mandate.executed": { summary: "An agent executed a call within its RAMS mandate", data: MandateExecutedData },
  "kyc.submitted": { summary: "An invited investor proved its wallet and submitted its details", data: KycEventData },
  "kyc.approved": { summary: "An investor's KYC was approved", data: KycEventData },
  "kyc.rejected": { summary: "An investor's KYC was rejected (with the reason)", data: KycEventData },
  "webhook.test": {
    summary: "A test event sent to one endpoint on request (POST /webhooks/{id}/test); never on the stream",
    data: WebhookTestData,
  },
} as const satisfies Record<string, CatalogueEntry>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
/** Types an endpoint or a stream may ask for (the test event is sent on request only). */
export const SUBSCRIBABLE_TYPES = EVENT_TYPES.filter((t) => t !== "webhook.test");
/** Types emitted for batches prepared without a key (service/store/keyless-events.ts). */
export const KEYLESS_TYPES: EventType[] = [...KEYLESS_EVENT_TYPES];
/** Types the store writes itself; the others are announced by the methods that declare them (MethodDefinition.events). */
export const STORE_TYPES: readonly EventType[] = STORE_EVENT_TYPES;

export type EventData<T extends EventType> = z.infer<(typeof EVENT_CATALOGUE)[T]["data"]>;
/** The types announcing an issuer control (their data is TokenControlData): what methods/control-events.ts writes. */
export type TokenControlEventType = {
  [T in EventType]: (typeof EVENT_CATALOGUE)[T]["data"] extends typeof TokenControlData ? T : never;
}[EventType];

/**
 * An event to write, for `emitEvent(q, event)`. `apiKeyId` names the tenant (null for a batch prepared without a key:
 * only KEYLESS_TYPES are then delivered, to its txId's subscribers). `orderingKey` defaults to `txId`: events with one
 * key reach each receiver in the order they were committed.
 */
export type NewEvent = {
  [T in EventType]: {
    type: T;
    apiKeyId: string | null;
    txId?: string | null;
    chainId?: number | null;
    hash?: string | null;
    orderingKey?: string | null;
    data: EventData<T>;
  };
}[EventType];

// ---------------------------------------------------------------------------------------------------------------
// What receivers get: the envelope (webhook body, SSE data)

const envelopeFields = {
  id: z
    .string()
    .regex(/^\d+$/)
    .meta({ description: "The event's position in the outbox (decimal): webhook-id, the stream's id, Last-Event-ID" }),
  timestamp: z.string().meta({ description: "When the change was committed (ISO 8601)" }),
  txId: hash32.nullable(),
  chainId: int.nullable(),
  hash: hash32.nullable().meta({ description: "The transaction hash the event is about, where one applies" }),
};

const pascal = (type: string) => type.replace(/(^|[._])(\w)/g, (_m, _s, c: string) => c.toUpperCase());

/** Each type's envelope, a component named after the type (transaction.confirmed → TransactionConfirmedEvent). */
export const EVENT_ENVELOPES = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    z
      .strictObject({ ...envelopeFields, type: z.literal(type), data: EVENT_CATALOGUE[type].data })
      .meta({ id: `${pascal(type)}Event`, description: EVENT_CATALOGUE[type].summary }),
  ]),
) as unknown as { [T in EventType]: ZodType };

/** Any event, discriminated by `type`: what a webhook receives in its body and the stream in each `data:` line. */
export const Event = z
  .discriminatedUnion(
    "type",
    EVENT_TYPES.map((t) => EVENT_ENVELOPES[t]) as unknown as [
      z.ZodObject<{ type: z.ZodLiteral<string> }>,
      ...z.ZodObject<{ type: z.ZodLiteral<string> }>[],
    ],
  )
  .meta({
    id: "Event",
    description: "An event: its id (position), type, time, the txId / chain / hash it concerns, and its data",
  });

export type EventEnvelope = {
  [T in EventType]: {
    id: string;
    type: T;
    timestamp: string;
    txId: string | null;
    chainId: number | null;
    hash: string | null;
    data: EventData<T>;
  };
}[EventType];
