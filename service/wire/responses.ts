import { z, type ZodType } from "zod";
import { ERROR_CODE_LIST, ERROR_CODES } from "../error-codes";

/**
 * Response schemas shared by several routes: the error body, the write flow (prepare, send, status), the x402 quote.
 * Like the request schemas they are the single source of /openapi.json (which names each `id` a component) and of
 * the typed client generated from it; the end-to-end tests check real responses against them. Objects are strict:
 * a field the code returns but the schema does not list fails those tests. Open objects say so (`looseObject`).
 */

const address = z
  .string()
  .regex(/^0x[a-fA-F0-9]{40}$/)
  .meta({ example: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" });
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
/** A decimal integer as a string (amounts in base units, gas): never a JSON number, which loses digits above 2^53. */
const integerText = z.string().regex(/^[0-9]+$/);
const int = z.number().int();

export const responseFields = { address, hex, hash32, integerText, int };

/**
 * The catalogue of error codes as a schema: the enum, a table of status and meaning in the description, and the same
 * table as data in `x-error-codes` ({ code: { status, meaning } }), which a test compares with ERROR_CODES.
 */
export const ErrorCodeSchema = z.enum(ERROR_CODE_LIST).meta({
  id: "ErrorCode",
  description: `Every error code, its HTTP status and what it means:\n\n${errorCodeTable()}`,
  "x-error-codes": ERROR_CODES,
});

/** The catalogue as a Markdown table (the ErrorCode schema and the document's description show it). */
export function errorCodeTable(): string {
  const rows = ERROR_CODE_LIST.map(
    (code) => `| \`${code}\` | ${ERROR_CODES[code].status} | ${ERROR_CODES[code].meaning.replace(/\|/g, "\\|")} |`,
  );
  return ["| Code | Status | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}

/** `{ error: { code, message, param?, details? }, message }`: every 4xx and 5xx. */
export const ErrorBody = z
  .strictObject({
    error: z.strictObject({
      code: ErrorCodeSchema,
      message: z.string(),
      param: z.string().optional().meta({
        description:
          "The request field at fault, where there is one (a dotted path into the body or query, e.g. `userToMint.0.amount`)",
        example: "tokenSymbol",
      }),
      details: z.record(z.string(), z.unknown()).optional().meta({
        description:
          "What the error is about, e.g. { field, issues: [{ field, message }] } for invalid input, or { transactionIndex }",
      }),
    }),
    message: z.string().meta({ description: "The same message, for clients that read it at the top level" }),
  })
  .meta({ id: "Error", description: "Every error: a code, a message naming the field or rule, optional details" });

// ---------------------------------------------------------------------------------------------------------------
// x402

export const PaymentRequirements = z
  .strictObject({
    scheme: z.string().meta({ example: "exact" }),
    network: z.string().meta({ example: "eip155:84532" }),
    asset: address.meta({ description: "The USDC contract (EIP-3009)" }),
    amount: integerText.meta({ description: "Base units (USDC: 6 decimals)", example: "10000" }),
    payTo: address,
    maxTimeoutSeconds: int,
    extra: z
      .looseObject({
        name: z.string().meta({ description: "EIP-712 domain name of the asset" }),
        version: z.string().meta({ description: "EIP-712 domain version of the asset" }),
        tokenSymbol: z.string().optional(),
        displayPrice: z.string().optional().meta({ example: "0.01 USDC" }),
        assetTransferMethod: z.string().optional().meta({ example: "eip3009" }),
        routeKey: z.string().optional().meta({ example: "POST /send-transactions" }),
        paymentChainId: z.string().optional(),
      })
      .meta({ description: "EIP-712 domain of the asset and how the price was computed" }),
  })
  .meta({ id: "PaymentRequirements", description: "One accepted way to pay (x402 v2 `accepts[]` entry)" });

/** The decoded PAYMENT-REQUIRED header of a 402 answer. */
export const PaymentRequired = z
  .strictObject({
    x402Version: int.meta({ example: 2 }),
    error: z.string().optional().meta({ description: "Why a payment that was sent did not pay this call" }),
    resource: z.strictObject({ url: z.string(), description: z.string(), mimeType: z.string() }),
    accepts: z.array(PaymentRequirements),
  })
  .meta({ id: "PaymentRequired", description: "The x402 quote, base64 JSON in the PAYMENT-REQUIRED header of a 402" });

/** The decoded PAYMENT-RESPONSE header of a paid answer. */
export const PaymentSettlement = z
  .looseObject({
    success: z.boolean(),
    transaction: z.string().optional().meta({ description: "The settlement transaction on the payment chain" }),
    network: z.string().optional(),
    payer: z.string().optional(),
    errorReason: z.string().optional(),
  })
  .meta({
    id: "PaymentSettlement",
    description: "The settlement, base64 JSON in the PAYMENT-RESPONSE header of a paid answer",
  });

/** A settled payment owed back to its payer: its operation failed for a reason of the service's. */
export const PaymentRefund = z
  .strictObject({
    status: z.enum(["owed", "sending", "refunded"]).meta({
      description:
        "owed: recorded, to be paid back (by the service's refund wallet, or by the operator); sending: the refund's transaction is sent; refunded: it is confirmed on the payment chain",
    }),
    amount: integerText.meta({ description: "Base units of the payment's asset, paid back to the payer" }),
    reason: z.string().meta({ description: "Why the operation failed (a failure of the service's, not the payer's)" }),
    transaction: z
      .string()
      .nullable()
      .meta({ description: "The refund's transaction on the payment's chain, once sent" }),
    refundedAt: z.string().nullable().meta({ description: "ISO 8601: when it was confirmed refunded" }),
  })
  .meta({
    id: "PaymentRefund",
    description:
      "Only a failure of the payer's is charged: a payment settled for an operation that then failed for a reason of the service's is paid back, once",
  });

/** A payment as reads show it (send summary, transaction status, faucet). */
export const PaymentView = z
  .strictObject({
    status: z.enum(["reserved", "settling", "settled", "released"]),
    amount: integerText,
    network: z.string(),
    payer: address,
    step: z.string().meta({ description: "prepare, send, call or faucet" }),
    settlementTransaction: z.string().nullable(),
    releaseReason: z.string().optional(),
    refund: PaymentRefund.optional(),
  })
  .meta({ id: "Payment" });

// ---------------------------------------------------------------------------------------------------------------
// Prepare

export const UnsignedTransaction = z
  .strictObject({
    from: address.meta({ description: "The signer the transaction was prepared for" }),
    to: address,
    value: hex.meta({ description: "Hex; zero is 0x00", example: "0x00" }),
    nonce: int.meta({ description: "Sequential across the transactions of one response" }),
    chainId: int.meta({ description: "The EVM chain id (decimal)", example: 11155111 }),
    data: hex.meta({ description: "Calldata" }),
    type: z.literal(2),
    maxPriorityFeePerGas: integerText.meta({ description: "Decimal, no 0x" }),
    maxFeePerGas: integerText.meta({ description: "Decimal, no 0x" }),
    gasLimit: hex.meta({ description: "Hex", example: "0x0189dd" }),
  })
  .meta({
    id: "UnsignedTransaction",
    description:
      "An ethers-style unsigned EIP-1559 transaction: sign it as is (ethers `wallet.signTransaction(tx)`). For an injected " +
      "browser wallet (EIP-1193) convert numbers to hex, rename gasLimit to gas, leave nonce and fees to the wallet and switch chains first (client: toEip1193).",
  });

const PrepareInfo = z
  .looseObject({
    tokenizerEmail: z.string().optional(),
    tokenSymbol: z.string().optional(),
    investorEmail: z.string().optional(),
    agentUuid: z.string().optional().meta({ description: "agentRegister: names the agent from then on" }),
    agentURI: z.string().optional(),
    contract: z.string().optional().meta({ description: "RAMS: the contract called" }),
    mode: z.enum(["direct", "signature"]).optional().meta({ description: "RAMS: how the operation is authorised" }),
    eip712Nonce: z.string().optional().meta({ description: "RAMS: the principal's EIP-712 nonce the operation uses" }),
  })
  .meta({ description: "What the method did and decided; method-specific (the keys listed are the common ones)" });

export const PrepareResponse = z
  .strictObject({
    txId: hash32.meta({ description: "The batch id (not a blockchain hash); send and status take it" }),
    transactions: z.array(UnsignedTransaction).meta({ description: "Sign and send them all, in order" }),
    info: PrepareInfo,
    executionMode: z
      .string()
      .meta({ description: "The mode in effect (brickken-relayed is echoed as sent)", example: "client-signed" }),
    x402Requirements: PaymentRequirements.optional().meta({
      description: "Without a key: what the send step will cost",
    }),
    streamToken: z.string().optional().meta({
      description:
        "Without a key: the capability to follow this batch on GET /events (txId and streamToken); keep it, it is shown only here",
    }),
  })
  .meta({
    id: "PrepareResponse",
    description: "Unsigned transactions to sign locally, then POST /send-transactions { txId, signedTransactions }",
  });

/** `{ data: T }`: the RAMS facades and reads. */
export const dataEnvelope = <T extends ZodType>(schema: T, id?: string) => {
  const envelope = z.strictObject({ data: schema });
  return id ? envelope.meta({ id }) : envelope;
};

export const FacadePrepareResponse = dataEnvelope(PrepareResponse, "DataPrepareResponse");

// ---------------------------------------------------------------------------------------------------------------
// Send and status

const publicStatus = z.enum(["prepared", "pending", "success", "rejected"]);

const TransactionWaitView = z
  .strictObject({
    reason: z.string(),
    baseFeePerGas: integerText.meta({ description: "The latest block's base fee when this was noticed (wei)" }),
    suggestedMaxFeePerGas: integerText.meta({
      description: "A fee cap that would be mined now (wei): sign a replacement with it",
    }),
    suggestedMaxPriorityFeePerGas: integerText,
    since: z.string().meta({ description: "ISO 8601" }),
  })
  .meta({
    id: "TransactionWait",
    description: "Why a broadcast transaction waits, and the fees that would be mined now",
  });

export const TransactionView = z
  .strictObject({
    index: int,
    hash: hash32.nullable(),
    status: publicStatus,
    blockNumber: int.nullable(),
    gasUsed: integerText.nullable(),
    error: z.string().nullable(),
    type: int,
    chainId: int,
    nonce: int,
    from: address,
    to: address,
    value: hex,
    data: hex,
    gasLimit: hex,
    maxFeePerGas: integerText,
    maxPriorityFeePerGas: integerText,
    blockHash: hash32.nullable().optional().meta({ description: "The block it was mined in (a reorg may change it)" }),
    replacedHashes: z.array(hash32).optional().meta({
      description:
        "Earlier forms replaced by `hash` (same nonce, higher fees: the relayer's fee bumps, or a client's replacement); any of them may still be the one mined",
    }),
    waiting: TransactionWaitView.nullable().optional().meta({
      description:
        "Why it is not mined yet, when the service knows (e.g. its fee cap is below the base fee), with fees that would be mined now",
    }),
    reorged: z.boolean().optional().meta({
      description:
        "true while a reorg deeper than the confirmations has taken it off the chain (status is pending until it is back)",
    }),
    reorgs: int.optional().meta({ description: "How many reorgs took it off the chain so far (absent: none)" }),
  })
  .meta({ id: "BatchTransaction", description: "One transaction of a batch: what was prepared, and where it is" });

const outcome = z
  .record(z.string(), z.unknown())
  .meta({ description: "What the confirmed batch produced (e.g. tokenAddress, agentId, events)" });

export const SendSummary = z
  .strictObject({
    success: z.boolean().meta({ description: "false once the batch is rejected" }),
    status: publicStatus,
    txId: hash32,
    txHashes: z.array(hash32),
    totalTransactions: int,
    successfulTransactions: int,
    failedTransactions: int,
    outcome: outcome.optional(),
    error: z.string().optional(),
    failedIndex: int.nullable().optional(),
    results: z.array(
      z.strictObject({
        txId: hash32,
        success: z.boolean(),
        status: publicStatus,
        result: z.strictObject({ txResponses: z.array(TransactionView) }),
      }),
    ),
    payment: PaymentView.optional().meta({ description: "The x402 payment of this send, when one paid it" }),
  })
  .meta({
    id: "SendSummary",
    description: "The batch after the send: 200 once it ended (success or rejected), 202 while pending",
  });

export const BatchStatus = z
  .strictObject({
    status: publicStatus.meta({ description: "Of the batch, or (asked by hash) of that transaction" }),
    batchStatus: publicStatus,
    txId: hash32,
    method: z.string(),
    chainId: int,
    executionMode: z.enum(["client-signed", "client-broadcast", "service-relayed"]),
    txHash: hash32.nullable(),
    txHashes: z.array(hash32),
    blockNumber: int.nullable(),
    gasUsed: integerText.nullable(),
    totalGasUsed: integerText,
    outcome: outcome.optional(),
    error: z.string().optional(),
    failedIndex: int.nullable().optional(),
    transactions: z.array(TransactionView),
    payments: z.array(PaymentView),
  })
  .meta({ id: "BatchStatus", description: "A batch this service prepared" });

export const ChainTransactionStatus = z
  .strictObject({
    status: z.enum(["pending", "success", "rejected"]),
    txId: z.null(),
    chainId: int,
    chainIdHex: z.string().optional(),
    txHash: hash32,
    txHashes: z.array(hash32),
    blockNumber: int.nullable(),
    gasUsed: integerText.nullable(),
    transactions: z.array(z.never()).meta({ description: "Always empty: the service did not prepare it" }),
  })
  .meta({
    id: "ChainTransactionStatus",
    description: "A transaction this service never prepared, found on a chain it serves",
  });

export const TransactionStatus = z.union([BatchStatus, ChainTransactionStatus]).meta({ id: "TransactionStatus" });

/** The answer of POST /faucet/bkn. */
export const FaucetClaim = z
  .strictObject({
    claimId: z.string(),
    status: z.enum(["submitted", "confirmed", "failed"]),
    chainId: z.string(),
    recipientAddress: address,
    amount: z.string().meta({ example: "100" }),
    amountRaw: integerText,
    token: z.strictObject({ address: address, symbol: z.literal("BKN"), decimals: int }),
    transactionHash: hash32.nullable(),
    explorerUrl: z.string().nullable(),
    cooldownEndsAt: z.string().nullable(),
    txId: hash32,
    error: z.string().optional(),
    payment: PaymentView.optional(),
  })
  .meta({ id: "FaucetClaim" });
