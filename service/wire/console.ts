import { z } from "zod";

/**
 * The operator console's JSON (GET and POST /console/api/…, tag "console" in /openapi.json): what its pages show and
 * what its actions answer. Strict objects, as every response schema of the API: the tests check real answers against
 * them. Those of routes/console-changes.ts (webhooks, KYC, keys and money) are in wire/console-changes.ts.
 */

export const timestamp = z.string().meta({ description: "ISO 8601" });
export const nullableTime = timestamp.nullable();
const integerText = z.string().regex(/^[0-9]+$/);
/** The next page: pass it back as `before` (absent on the last page). */
export const next = z
  .string()
  .nullable()
  .meta({ description: "Cursor of the next (older) page: pass it as `before`; null on the last page" });

/** Where a page stands: the cursors beside it and the counts (lists page both ways). */
export const pageFields = {
  next,
  previous: z
    .string()
    .nullable()
    .meta({ description: "Cursor of the previous (newer) page: pass it as `after`; null on the first page" }),
  total: z.number().int().meta({ description: "Rows the filters match" }),
  first: z.number().int().meta({ description: "The 1-based place of the page's first row (0: empty)" }),
};

export const ConsoleOperator = z
  .strictObject({
    id: z.string(),
    email: z.string(),
    role: z.enum(["viewer", "reviewer", "admin"]),
    hasPassword: z.boolean(),
    createdAt: timestamp,
  })
  .meta({ id: "ConsoleOperator" });

export const ConsoleSession = z
  .strictObject({
    operator: ConsoleOperator,
    csrfToken: z
      .string()
      .meta({ description: "Send it in x-csrf-token with every change (POST, DELETE) of this session" }),
    expiresAt: timestamp,
  })
  .meta({ id: "ConsoleSession" });

export const SignInBody = z
  .union([
    z.strictObject({ email: z.string().meta({ description: "The operator's e-mail" }), password: z.string() }),
    z.strictObject({
      token: z.string().meta({ description: "The token of a one-time sign-in link (…/console/sign-in?token=…)" }),
    }),
  ])
  .meta({ id: "ConsoleSignIn" });
export const PasswordBody = z.strictObject({
  password: z.string().meta({ description: "The new password: at least 12 characters, and hard to guess" }),
  currentPassword: z.string().optional().meta({
    description:
      "The password now: required when the operator has one, unless this session was opened by a one-time link in the last 10 minutes",
  }),
});

// ---------------------------------------------------------------------------------------------------------------
// Overview

const ActivityBucket = z.strictObject({
  at: timestamp,
  success: z.number().int(),
  rejected: z.number().int(),
  p50Ms: z.number().int().nullable(),
  p95Ms: z.number().int().nullable(),
  settled: z.number().int(),
  released: z.number().int(),
});

const SignalState = z
  .enum(["ok", "warn", "bad"])
  .meta({ description: "ok: nothing to do; warn: look soon; bad: look now" });

export const ConsoleSignal = z
  .strictObject({
    id: z.string(),
    state: SignalState,
    title: z.string(),
    value: z.string().meta({ description: "The figure, with its unit" }),
    words: z.string().meta({ description: "What the state means and what to look at" }),
    link: z.string().nullable().meta({ description: "The console list filtered to what the figure counts" }),
  })
  .meta({ id: "ConsoleSignal" });

export const ConsoleOverview = z
  .strictObject({
    generatedAt: timestamp,
    signals: z.array(ConsoleSignal).meta({
      description:
        "The thresholds, each as a state: chain heads older than a few block times, stuck transactions, wallets short of a day of their spend, deliveries owed to enabled endpoints, settlements owed",
    }),
    chains: z.array(
      z.strictObject({
        chainId: z.number().int(),
        name: z.string(),
        currency: z.string().meta({ description: "The native currency's symbol" }),
        confirmations: z.number().int(),
        headBlock: z.number().int().nullable().meta({ description: "null: the chain did not answer within 3 s" }),
        headAgeSeconds: z.number().nullable(),
        blockSeconds: z.number().meta({ description: "Seconds between blocks, measured over the last 20" }),
        baseFeePerGas: integerText.nullable().meta({ description: "The head's base fee (wei)" }),
        explorer: z
          .string()
          .nullable()
          .meta({ description: "EXPLORER_URL_<chainId>, or the network's usual explorer" }),
        rpc: z.array(
          z.strictObject({
            url: z.string().meta({ description: "Scheme and host only (providers put keys in paths)" }),
            inUse: z.boolean(),
            healthy: z.boolean(),
            failuresInARow: z.number().int(),
            answered: z.number().int(),
            failed: z.number().int(),
            throttled: z.number().int(),
            latencyMs: z.number().nullable(),
          }),
        ),
      }),
    ),
    wallets: z.array(
      z.strictObject({
        role: z.enum(["relayer", "settlement", "refund"]),
        chainId: z.number().int(),
        address: z.string(),
        currency: z.string(),
        balanceWei: integerText.nullable(),
        balance: z.string().nullable().meta({ description: "In the chain's native currency, at most 6 decimals" }),
        spentPerDayWei: integerText
          .nullable()
          .meta({ description: "What it spent in the last 24 h, priced at the current max fee (wei)" }),
        transactionsLeft: z
          .number()
          .int()
          .nullable()
          .meta({ description: "Transactions of 200,000 gas it still pays for at the current max fee" }),
        low: z.boolean().nullable(),
        state: SignalState,
        nextNonce: z.number().int().nullable().meta({ description: "The next nonce the service takes for it" }),
        inFlight: z.number().int().meta({ description: "Its transactions signed and not mined yet" }),
        readAt: nullableTime,
      }),
    ),
    queue: z.strictObject({
      prepared: z.number().int(),
      sending: z.number().int(),
      stuck: z.number().int().meta({ description: "Batches with a transaction stuck (see signals)" }),
      paymentsReserved: z.number().int(),
      paymentsSettling: z.number().int(),
      webhooksOwed: z.number().int().meta({ description: "Deliveries owed to enabled endpoints" }),
      webhooksPaused: z.number().int().meta({ description: "Deliveries waiting at disabled endpoints" }),
      oldestUndeliveredSeconds: z.number().meta({ description: "Of the deliveries owed to enabled endpoints" }),
    }),
    lastHour: z.array(ActivityBucket).meta({ description: "60 one-minute buckets, oldest first" }),
    lastDay: z.array(ActivityBucket).meta({ description: "48 half-hour buckets, oldest first" }),
  })
  .meta({ id: "ConsoleOverview" });

// ---------------------------------------------------------------------------------------------------------------
// Transactions

const BatchStatus = z.enum(["prepared", "sending", "success", "rejected"]);

export const ConsoleBatchRow = z
  .strictObject({
    txId: z.string(),
    chainId: z.number().int(),
    method: z.string(),
    executionMode: z.string(),
    signer: z.string(),
    apiKeyId: z.string().nullable(),
    status: BatchStatus,
    error: z.string().nullable(),
    hashes: z.array(z.string()),
    createdAt: timestamp,
    sentAt: nullableTime,
    completedAt: nullableTime,
  })
  .meta({ id: "ConsoleBatchRow" });

export const ConsoleBatchList = z
  .strictObject({ items: z.array(ConsoleBatchRow), ...pageFields })
  .meta({ id: "ConsoleBatchList" });

const TimelineEntry = z.strictObject({
  at: timestamp,
  what: z.string().meta({
    description:
      "prepared, sent, broadcast, replaced, confirmed, reorged, failed, completed, payment.settled, … or an operator's action",
  }),
  index: z.number().int().nullable().meta({ description: "The transaction it is about (0-based)" }),
  hash: z.string().nullable(),
  detail: z.string(),
});

const ConsoleTransaction = z.strictObject({
  index: z.number().int(),
  status: z.string(),
  state: z
    .enum([
      "prepared",
      "signed",
      "broadcast",
      "pending",
      "cancelling",
      "confirmed",
      "reverted",
      "cancelled",
      "refused",
      "unseen",
    ])
    .meta({
      description:
        "pending: waiting to be mined; cancelling: the operator's no-op is live at its nonce; cancelled: the no-op was mined",
    }),
  stateText: z.string().meta({ description: "The state in words: which hash is live, what happens next" }),
  hash: z.string().nullable(),
  liveHash: z
    .string()
    .nullable()
    .meta({ description: "While it waits to be mined: the hash the service follows (the replaced ones are kept)" }),
  from: z.string(),
  to: z.string(),
  nonce: z.number().int(),
  maxFeePerGas: integerText,
  maxPriorityFeePerGas: integerText,
  baseFeePerGas: integerText.nullable().meta({ description: "While it waits: the chain head's base fee (wei)" }),
  pending: z
    .strictObject({
      sinceBlock: z.number().int().nullable().meta({ description: "The head when it was first broadcast" }),
      blocks: z.number().int().nullable(),
      seconds: z.number().int().nullable(),
      estimated: z.boolean().meta({ description: "blocks estimated from the time and the chain's block time" }),
    })
    .nullable(),
  blockNumber: z.number().int().nullable(),
  gasUsed: z.string().nullable(),
  error: z.string().nullable(),
  revertReason: z
    .string()
    .nullable()
    .meta({ description: "A mined revert's reason: its call replayed, the revert decoded with the contracts' errors" }),
  replaced: z.array(
    z.strictObject({
      hash: z.string(),
      maxFeePerGas: z.string().nullable(),
      maxPriorityFeePerGas: z.string().nullable(),
      replacedAt: timestamp,
    }),
  ),
  waiting: z.string().nullable(),
  reorgs: z.number().int(),
  actions: z
    .array(z.enum(["rebroadcast", "replace", "cancel"]))
    .meta({ description: "What the operator may do to it now (relayed and not mined)" }),
});

const PaymentOfBatch = z.strictObject({
  id: z.string(),
  subject: z.string(),
  status: z.enum(["reserved", "settling", "settled", "released"]),
  amount: integerText,
  payer: z.string(),
  settlementTransaction: z.string().nullable(),
  releaseReason: z.string().nullable(),
});

const Event = z.strictObject({
  id: z.string(),
  type: z.string(),
  timestamp,
  hash: z.string().nullable(),
  data: z.unknown(),
});

export const ConsoleBatch = z
  .strictObject({
    batch: ConsoleBatchRow.extend({
      body: z.record(z.string(), z.unknown()).meta({ description: "The request as it was parsed" }),
      outcome: z.record(z.string(), z.unknown()).nullable(),
    }),
    chain: z
      .strictObject({
        name: z.string(),
        currency: z.string(),
        explorer: z.string().nullable(),
        headBlock: z.number().int().nullable(),
      })
      .nullable()
      .meta({ description: "The batch's chain as this instance sees it (null: not served here)" }),
    transactions: z.array(ConsoleTransaction),
    timeline: z.array(TimelineEntry),
    events: z.array(Event),
    payments: z.array(PaymentOfBatch),
  })
  .meta({ id: "ConsoleBatch" });

export const IndexBody = z.strictObject({
  index: z.number().int().min(0).max(100).default(0).meta({ description: "The transaction of the batch (0-based)" }),
});

export const ConsoleActionOutcome = z
  .strictObject({
    txId: z.string(),
    index: z.number().int(),
    previousHash: z.string(),
    hash: z.string(),
    maxFeePerGas: integerText,
    maxPriorityFeePerGas: integerText,
    verdict: z.string(),
  })
  .meta({ id: "ConsoleActionOutcome" });

// ---------------------------------------------------------------------------------------------------------------
// Payments

export const ConsolePayment = z
  .strictObject({
    id: z.string(),
    subject: z.string(),
    route: z.string(),
    txId: z.string().nullable(),
    method: z.string().nullable(),
    network: z.string(),
    asset: z.string(),
    amount: integerText,
    payer: z.string(),
    payTo: z.string(),
    status: z.enum(["reserved", "settling", "settled", "released"]),
    releaseReason: z.string().nullable(),
    settlementTransaction: z.string().nullable(),
    settledInOperation: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "ConsolePayment" });

export const ConsolePaymentList = z
  .strictObject({ items: z.array(ConsolePayment), ...pageFields })
  .meta({ id: "ConsolePaymentList" });

export const ConsolePaymentDetail = z
  .strictObject({
    payment: ConsolePayment,
    batchMates: z
      .array(ConsolePayment)
      .meta({ description: "The other payments its settlement transaction carried (a Multicall3 batch)" }),
  })
  .meta({ id: "ConsolePaymentDetail" });

export const ConsolePaymentTotals = z
  .strictObject({
    days: z.number().int(),
    totals: z.array(
      z.strictObject({
        day: z.string(),
        operation: z.string(),
        settled: z.number().int(),
        amount: integerText,
        released: z.number().int(),
      }),
    ),
  })
  .meta({ id: "ConsolePaymentTotals" });

// ---------------------------------------------------------------------------------------------------------------
// Audit

export const ConsoleAuditChange = z
  .strictObject({
    path: z.string().meta({ description: "The field, as a.b[0].c; empty for a value that is not an object" }),
    change: z.enum(["added", "removed", "changed"]),
    before: z.string().nullable().meta({ description: "The value before, as JSON (cut at 200 characters)" }),
    after: z.string().nullable().meta({ description: "The value after, as JSON (cut at 200 characters)" }),
  })
  .meta({ id: "ConsoleAuditChange" });

export const ConsoleAuditEntry = z
  .strictObject({
    id: z.string(),
    actor: z.string(),
    action: z.string(),
    target: z.string().nullable(),
    before: z.unknown(),
    after: z.unknown(),
    changes: z.array(ConsoleAuditChange).meta({ description: "What differs between before and after, field by field" }),
    unchanged: z.number().int().meta({ description: "Fields present before and after with the same value" }),
    at: timestamp,
  })
  .meta({ id: "ConsoleAuditEntry" });
export const ConsoleAudit = z
  .strictObject({ items: z.array(ConsoleAuditEntry), ...pageFields })
  .meta({ id: "ConsoleAudit" });

export type Overview = z.infer<typeof ConsoleOverview>;
export type BatchDetail = z.infer<typeof ConsoleBatch>;
export type TimelineItem = z.infer<typeof TimelineEntry>;
