import { keccak256 } from "ethers";
import type { Chain } from "../chains/registry";
import { z } from "zod";
import { checksumAddress } from "../crypto/checksum-address";
import {
  badSignature,
  conflicting,
  expired,
  invalid,
  mismatched,
  noSuchBatch,
  underpriced,
  type EngineError,
} from "./errors";
import { typeName } from "../wire/fields";
import type { Queryable } from "../store/db";
import { isValidReplacement, type Fees } from "../chains/fee-bump";
import { feesOf, reportedMismatch } from "./transaction-facts";
import { readPlainly, readWithEthers } from "./signed-facts";
import type { Batch, BatchTransaction } from "../model/batch";
import type { Stores } from "../store/stores";
import type { SendingTransaction } from "../store/batch-known";
import type { Config } from "../config";

/** What a send's checks read. */
export type SendServices = Pick<Stores, "batches"> & { config: Pick<Config, "PREPARED_BATCH_TTL_HOURS"> };

const hexString = z
  .string()
  .trim()
  .regex(/^0x[0-9a-fA-F]*$/, "must be 0x-prefixed hex");
const oneOrMany = <T extends z.ZodType>(item: T, what: string) =>
  z.union([item, z.array(item).min(1)], {
    error: (i) => (i.input === undefined ? "is required" : `must be ${what}, not ${typeName(i.input)}`),
  });

/**
 * Every body form existing clients send (docs/wire-conventions.md, Sending: the string and array forms,
 * client-broadcast, relayed). Unknown keys ignored.
 */
export const sendBodySchema = z.object({
  txId: oneOrMany(
    z
      .string()
      .trim()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be the txId returned by prepare (0x + 64 hex)"),
    "the txId returned by prepare (0x + 64 hex)",
  ),
  signedTransactions: oneOrMany(
    hexString,
    "an array of signed transactions (0x-prefixed hex strings, one per prepared transaction)",
  ).optional(),
  txHash: oneOrMany(
    z
      .string()
      .trim()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be a 0x-prefixed 32-byte transaction hash"),
    "a 0x-prefixed 32-byte transaction hash (or an array of them)",
  ).optional(),
  transactions: z
    .array(z.object({ to: z.string().optional(), data: z.string().optional(), value: z.unknown().optional() }))
    .optional(),
});
export type SendBody = z.infer<typeof sendBodySchema>;

export type SendRequest =
  | { kind: "signed"; txId: string; signedTransactions: string[]; oneString?: boolean }
  | { kind: "reported"; txId: string; txHashes: string[] }
  | { kind: "relayed"; txId: string };

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Reduces the body forms to one request. A txId array must repeat one id (the CLI repeats it once per transaction). */
export function normalizeSendBody(body: SendBody): SendRequest {
  const ids = [...new Set(asArray(body.txId).map((id) => id.toLowerCase()))];
  if (ids.length !== 1) throw invalid("txId: an array of txIds must repeat the same batch id", { field: "txId" });
  const txId = ids[0];
  const signed = asArray(body.signedTransactions);
  if (signed.length)
    return {
      kind: "signed",
      txId,
      signedTransactions: signed,
      ...(typeof body.signedTransactions === "string" ? { oneString: true } : {}),
    };
  const hashes = asArray(body.txHash);
  if (hashes.length) return { kind: "reported", txId, txHashes: hashes.map((h) => h.toLowerCase()) };
  return { kind: "relayed", txId };
}

/** How far above the prepared maxFeePerGas a signed transaction's fee may go (wallets re-price; tampering does not). */
export const FEE_CEILING_FACTOR = 3n;

function mismatch(index: number, field: string, want: unknown, got: unknown): EngineError {
  return mismatched(
    `signedTransactions[${index}]: ${field} does not match the prepared transaction (expected ${String(want)}, got ${String(got)})`,
    {
      transactionIndex: index,
      field,
      expected: String(want),
      actual: String(got),
    },
  );
}

/**
 * Decodes each signed transaction and checks it against its prepared twin. Everything must be identical (signer, type
 * 2, chain, nonce, target, value, data, gas limit, no access list) except the fees, which a wallet may re-price up to
 * FEE_CEILING_FACTOR × the prepared maxFeePerGas. Throws a 400 naming the index and the first field that differs.
 */
export function verifySignedTransactions(
  batch: Batch,
  signed: string[],
  feeCeilingBase?: bigint,
  oneString = false,
): { index: number; signedRaw: string; txHash: string }[] {
  const prepared = batch.transactions;
  if (oneString && prepared.length > 1) {
    // A lone string stands for a one-transaction batch (the simplest form clients send); this batch has more.
    throw invalid(
      `signedTransactions must be an array of signed transaction hex strings, one per prepared transaction in order: this txId has ${prepared.length}, and one string was sent`,
      { field: "signedTransactions", expected: prepared.length, actual: 1 },
    );
  }
  if (signed.length !== prepared.length) {
    throw invalid(
      `signedTransactions: expected ${prepared.length} signed transaction(s) for this txId, got ${signed.length}`,
      {
        field: "signedTransactions",
        expected: prepared.length,
        actual: signed.length,
      },
    );
  }
  return prepared.map((twin, index) => {
    const raw = signed[index];
    const tx = readPlainly(raw) ?? readWithEthers(raw, index);
    const expected = twin.unsigned;
    if (checksumAddress(tx.from) !== checksumAddress(expected.from)) {
      throw badSignature(`signedTransactions[${index}] is signed by ${tx.from}, not by ${expected.from}`, {
        transactionIndex: index,
        expectedSigner: expected.from,
        actualSigner: tx.from,
      });
    }
    const checks: [string, unknown, unknown][] = [
      ["type", expected.type, tx.type],
      ["chainId", BigInt(expected.chainId), tx.chainId],
      ["nonce", expected.nonce, tx.nonce],
      ["to", expected.to.toLowerCase(), tx.to.toLowerCase()],
      ["value", BigInt(expected.value), tx.value],
      ["data", expected.data.toLowerCase(), tx.data.toLowerCase()],
      ["gasLimit", BigInt(expected.gasLimit), tx.gasLimit],
      ["accessList", 0, tx.accessListLength],
    ];
    for (const [field, want, got] of checks) {
      if (want !== got) throw mismatch(index, field, want, got);
    }
    // A wallet may re-price fees (the chain moved since prepare), within a bound: never above FEE_CEILING_FACTOR × the
    // prepared maxFeePerGas, and a priority fee no higher than the max fee. Lower fees are the signer's own risk.
    const preparedFee = BigInt(expected.maxFeePerGas);
    const feeCeiling =
      (feeCeilingBase !== undefined && feeCeilingBase > preparedFee ? feeCeilingBase : preparedFee) *
      FEE_CEILING_FACTOR;
    if (tx.maxFeePerGas > feeCeiling) throw mismatch(index, "maxFeePerGas", `at most ${feeCeiling}`, tx.maxFeePerGas);
    if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) {
      throw mismatch(index, "maxPriorityFeePerGas", `at most maxFeePerGas ${tx.maxFeePerGas}`, tx.maxPriorityFeePerGas);
    }
    // The chain names a transaction by the hash of the bytes it was sent; ethers names it by the hash of its own
    // re-encoding. The two agree only for the canonical encoding.
    if (!tx.canonical)
      throw invalid(`signedTransactions[${index}] is not canonically encoded`, { transactionIndex: index });
    return { index, signedRaw: raw, txHash: keccak256(raw) };
  });
}

/** Loads a batch for sending, or explains why it cannot be sent (unknown, pending, already done). */
export async function loadSendableBatch(services: SendServices, txId: string, q?: Queryable): Promise<Batch> {
  return assertSendable(await services.batches.get(txId, q), txId, services.config.PREPARED_BATCH_TTL_HOURS);
}

/**
 * The batch a send names, checked as loadSendableBatch does, and (same statement) the other batches that already hold
 * a transaction this send names: its signed bytes' hashes, or the hashes it reports. That look-up is made only for a
 * send that may be asked to pay (`beforePayment`), so that it learns of a taken hash before it pays; every send learns
 * it anyway from the statement that marks the batch sending (Batches.markSending).
 */
export async function loadBatchToSend(
  services: SendServices,
  request: SendRequest,
  beforePayment: boolean,
): Promise<{ batch: Batch; hashOwners: Map<string, string> }> {
  const { batch, hashOwners } = await services.batches.forSend(request.txId, beforePayment ? hashesNamed(request) : []);
  return { batch: assertSendable(batch, request.txId, services.config.PREPARED_BATCH_TTL_HOURS), hashOwners };
}

function assertSendable(batch: Batch | undefined, txId: string, ttlHours: number): Batch {
  if (!batch) throw noSuchBatch(`No prepared transactions with txId ${txId}`, { txId });
  if (batch.status === "prepared" && preparedExpired(batch, ttlHours)) {
    throw expired(
      `txId ${txId} was prepared more than ${ttlHours} hours ago and never sent: it expired; prepare it again`,
      {
        txId,
        expiredAt: new Date(Date.parse(batch.createdAt) + ttlHours * 3_600_000).toISOString(),
      },
    );
  }
  if (batch.status === "sending")
    throw conflicting(`txId ${txId} is pending: it was already sent and is not confirmed yet`, {
      txId,
      status: "pending",
    });
  if (batch.status !== "prepared" && !reportable(batch))
    throw conflicting(`txId ${txId} was already sent (status ${batch.status})`, { txId, status: batch.status });
  return batch;
}

/** The transaction hashes a send names: what the chain calls its signed bytes, or the hashes it reports. */
function hashesNamed(request: SendRequest): string[] {
  if (request.kind === "reported") return request.txHashes;
  if (request.kind === "signed")
    return request.signedTransactions.filter((raw) => raw.length % 2 === 0).map((raw) => keccak256(raw));
  return [];
}

/** A prepared batch nobody sent expires PREPARED_BATCH_TTL_HOURS after it was prepared (and is pruned: store/batches.ts). */
export function preparedExpired(batch: Pick<Batch, "createdAt">, ttlHours: number, now = Date.now()): boolean {
  return now - Date.parse(batch.createdAt) > ttlHours * 3_600_000;
}

/** A batch rejected because a reported hash never appeared may be reported again, with the right hashes. */
export function reportable(batch: Batch): boolean {
  return batch.status === "rejected" && batch.transactions.some((t) => t.status === "unseen");
}

/** What to write for each transaction when a client-signed or client-broadcast batch starts sending. */
export function sendingState(batch: Batch, request: SendRequest): SendingTransaction[] {
  if (request.kind === "signed") {
    return verifySignedTransactions(batch, request.signedTransactions, undefined, request.oneString).map((s) => ({
      ...s,
      status: "signed" as const,
    }));
  }
  if (request.kind === "reported") {
    if (request.txHashes.length !== batch.transactions.length) {
      throw invalid(
        `txHash: expected ${batch.transactions.length} hash(es) for this txId, got ${request.txHashes.length}`,
        {
          field: "txHash",
        },
      );
    }
    return batch.transactions.map((t: BatchTransaction, index) => ({
      index: t.index,
      signedRaw: null,
      txHash: request.txHashes[index],
      status: "broadcast" as const,
    }));
  }
  throw invalid("signedTransactions is required (or txHash for client-broadcast)", { field: "signedTransactions" });
}

/**
 * A client-broadcast batch's reported hashes claim its transactions only when the chain shows them: each hash must
 * name a transaction the chain's node knows, signed by the prepared signer with the prepared nonce, target, data and
 * value. Anything else is a 4xx and leaves the batch as it was (so nobody can report another tenant's hash on theirs).
 */
export async function assertReportedTransactions(
  chain: Chain,
  batch: Batch,
  reported: { index: number; txHash: string | null }[],
): Promise<void> {
  const found = await Promise.all(
    reported.map((r) => (r.txHash ? chain.provider.getTransaction(r.txHash) : Promise.resolve(null))),
  );
  reported.forEach(({ index, txHash }, i) => {
    const onChain = found[i];
    if (!onChain) {
      throw invalid(
        `txHash[${index}] ${txHash} is not a transaction chain ${chain.chainId}'s node knows: broadcast transaction ${index + 1} first, then report its hash`,
        {
          field: "txHash",
          transactionIndex: index,
        },
      );
    }
    const mismatch = reportedMismatch(onChain, batch.transactions[index].unsigned);
    if (mismatch) {
      throw mismatched(
        `txHash[${index}] ${txHash} is not transaction ${index + 1} of txId ${batch.txId}: its ${mismatch.field} is ${mismatch.actual}, the prepared one's ${mismatch.expected}`,
        {
          transactionIndex: index,
          field: mismatch.field,
          expected: mismatch.expected,
          actual: mismatch.actual,
        },
      );
    }
  });
}

/** A transaction (signed bytes or a reported hash) belongs to one batch: sending it for another is a 409 naming that batch. */
export function assertHashesFree(
  batch: Batch,
  state: { index: number; txHash: string | null }[],
  hashOwners: Map<string, string>,
): void {
  for (const { index, txHash } of state) {
    const owner = txHash ? hashOwners.get(txHash.toLowerCase()) : undefined;
    if (owner && owner !== batch.txId) {
      throw conflicting(`transaction ${index + 1} (${txHash}) is already recorded for another batch, txId ${owner}`, {
        transactionIndex: index,
        txHash,
        txId: owner,
      });
    }
  }
}

/** A transaction of a pending batch to be replaced by a client-signed form with higher fees. */
export interface ClientReplacement {
  index: number;
  replacing: string;
  signedRaw: string;
  txHash: string;
  replacedFees: Fees;
}

/**
 * A client's replacement for a pending client-signed batch (its transactions re-signed with the same nonce and higher
 * fees, e.g. with the fees its status suggests while it waits below the base fee): every signed transaction must match
 * its prepared twin except the fees, which may go up to FEE_CEILING_FACTOR × today's market fee cap. A transaction
 * given again unchanged stays; a changed one must not be mined yet and must raise both fees by at least 10%.
 */
export function clientReplacements(batch: Batch, signed: string[], marketMaxFee: bigint): ClientReplacement[] {
  if (batch.executionMode !== "client-signed") {
    throw conflicting(
      `txId ${batch.txId} is pending; only a client-signed batch's transactions can be replaced with higher fees`,
      { txId: batch.txId, status: "pending" },
    );
  }
  const replacements: ClientReplacement[] = [];
  for (const next of verifySignedTransactions(batch, signed, marketMaxFee)) {
    const current = batch.transactions[next.index];
    if (current.txHash === next.txHash.toLowerCase()) continue;
    if (current.status !== "signed" && current.status !== "broadcast") {
      throw conflicting(
        `transaction ${next.index + 1} of txId ${batch.txId} is ${current.status === "confirmed" ? "already mined" : "ended"}: it cannot be replaced`,
        {
          transactionIndex: next.index,
          txId: batch.txId,
        },
      );
    }
    const fees = feesOf({ ...current, signedRaw: next.signedRaw });
    const replacedFees = feesOf(current);
    if (!isValidReplacement(fees, replacedFees)) {
      throw underpriced(
        `signedTransactions[${next.index}]: a replacement must raise maxFeePerGas and maxPriorityFeePerGas by at least 10% (now ${replacedFees.maxFeePerGas} and ${replacedFees.maxPriorityFeePerGas})`,
        {
          transactionIndex: next.index,
          field: "signedTransactions",
          currentMaxFeePerGas: replacedFees.maxFeePerGas.toString(),
          currentMaxPriorityFeePerGas: replacedFees.maxPriorityFeePerGas.toString(),
        },
      );
    }
    replacements.push({
      index: next.index,
      replacing: current.txHash!,
      signedRaw: next.signedRaw,
      txHash: next.txHash,
      replacedFees,
    });
  }
  if (!replacements.length)
    throw conflicting(`txId ${batch.txId} is pending with these transactions already: nothing to replace`, {
      txId: batch.txId,
      status: "pending",
    });
  return replacements;
}
