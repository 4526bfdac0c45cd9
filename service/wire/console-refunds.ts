import { z } from "zod";
import { next, nullableTime, timestamp } from "./console";
import { responseFields } from "./responses";

const { integerText } = responseFields;

/** A payment owed back after a failure of the service's, as the console's Refunds page shows it. */
export const ConsoleRefund = z
  .strictObject({
    paymentId: z.string(),
    txId: z.string().meta({ description: "The batch whose failure owes it" }),
    network: z.string(),
    asset: z.string(),
    payer: z.string().meta({ description: "Who is paid back" }),
    amount: integerText.meta({ description: "Base units of the asset (USDC: 6 decimals)" }),
    reason: z.string().meta({ description: "Why the operation failed" }),
    status: z.enum(["owed", "sending", "refunded"]),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    nextAttemptAt: timestamp,
    transaction: z.string().nullable().meta({ description: "The refund's transaction (the mined one once refunded)" }),
    refundedBy: z
      .string()
      .nullable()
      .meta({ description: '"refund wallet", or the e-mail of the operator who paid it and marked it' }),
    createdAt: timestamp,
    refundedAt: nullableTime,
  })
  .meta({ id: "ConsoleRefund" });

export const ConsoleRefundList = z
  .strictObject({
    items: z.array(ConsoleRefund),
    next,
    refundWallet: z
      .string()
      .nullable()
      .meta({ description: "The refund wallet that pays refunds automatically; null: operators pay and mark them" }),
    owed: z
      .array(z.strictObject({ asset: z.string(), amount: integerText }))
      .meta({ description: "What is still owed (owed or sending), per asset" }),
  })
  .meta({ id: "ConsoleRefundList" });

export const MarkRefundBody = z.strictObject({
  transaction: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "must be a transaction hash (0x + 64 hex)")
    .meta({
      description:
        "The operator's transaction that paid it: confirmed on the payment's chain, transferring at least the amount of the asset to the payer",
    }),
});
