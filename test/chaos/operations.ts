import { randomBytes, randomUUID } from "node:crypto";
import { Transaction, Wallet } from "ethers";
import { distinctClient } from "../helpers/relayed";
import type { ApiClient, ApiResponse } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";
import type { ChaosWorld } from "./world";

/** One operation a scenario ran, as its client saw it; the chain's view is added by the checks (report.ts). */
export interface OpRecord {
  /** "paid-elsewhere": a faucet claim on the faucet's chain, paid on the payment chain (settled after it, in a batch). */
  kind: "relayed" | "client-signed" | "paid-elsewhere";
  /** The agent token's symbol: unique, so the chain says how often the operation happened (a claim's label). */
  symbol: string;
  /** A faucet claim's recipient: a fresh address, so its BKN balance says how often the claim was minted. */
  recipient?: string;
  txId?: string;
  /** The x402 authorisation nonces this client paid with (relayed): the chain says which were used. */
  paymentNonces: string[];
  /** Final status as the API reported it (success, rejected), or pending when it never got there. */
  status: "success" | "rejected" | "pending" | "failed-to-start";
  /** Milliseconds from the send to the terminal status. */
  msToTerminal?: number;
  /** HTTP answers 500 or above the client got. */
  http5xx: number;
  /** What went wrong when it did not start (a 4xx at prepare or send). */
  note?: string;
  /** The 5xx answers it got (status and message). */
  errors?: string[];
}

const POLL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let serial = 0;
/** A unique agent-token symbol (2–11 of A–Z0–9). */
export const uniqueSymbol = (tag: string) =>
  `${tag.replace(/[^A-Z0-9]/g, "").slice(0, 4)}${(Date.now() % 1e5).toString(36).toUpperCase()}${(serial++).toString(36).toUpperCase()}`.slice(
    0,
    11,
  );

/**
 * A client as a careful integrator writes one: a 503 or another 5xx is counted and the request repeated after a pause
 * (the service promised nothing was sent or charged), a 4xx is final.
 */
async function call(record: OpRecord, deadline: number, request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (;;) {
    const res = await request().catch(
      (error: Error) => ({ status: 599, body: { message: error.message }, headers: new Headers() }) as ApiResponse,
    );
    if (res.status < 500) return res;
    record.http5xx++;
    record.errors = [...(record.errors ?? []), `${res.status} ${String(res.body?.message ?? "").slice(0, 200)}`];
    if (Date.now() > deadline) return res;
    await sleep(Number(res.headers.get("retry-after") ?? 1) * 1000);
  }
}

/** Polls the batch until it is success or rejected (and its payments are settled or released), or the deadline. */
async function untilTerminal(
  api: ApiClient,
  record: OpRecord,
  started: number,
  deadline: number,
  onPending?: (status: any) => Promise<void>,
): Promise<void> {
  while (Date.now() < deadline) {
    const res = await call(record, deadline, () => api.get("/get-transaction-status", { txId: record.txId }));
    if (res.status === 200) {
      const status = res.body;
      const paymentsDone = (status.payments ?? []).every(
        (p: { status: string }) => p.status === "settled" || p.status === "released",
      );
      if ((status.batchStatus === "success" || status.batchStatus === "rejected") && paymentsDone) {
        record.status = status.batchStatus;
        record.msToTerminal = Date.now() - started;
        return;
      }
      if (onPending) await onPending(status);
    }
    await sleep(POLL_MS);
  }
  record.status = "pending";
}

/** A paid service-relayed agent token: prepare (free), pay the send's quote with x402, wait for the end. */
export async function relayedOperation(world: ChaosWorld, tag: string): Promise<OpRecord> {
  const record: OpRecord = {
    kind: "relayed",
    symbol: uniqueSymbol(tag),
    paymentNonces: [],
    status: "failed-to-start",
    http5xx: 0,
  };
  const deadline = Date.now() + world.opDeadlineMs;
  const prepared = await call(record, deadline, () =>
    world.api.post(
      "/x402/token/create",
      { chainId: "84532", name: `Chaos ${record.symbol}`, symbol: record.symbol, agentWallet: world.agentWallet },
      distinctClient(),
    ),
  );
  if (prepared.status !== 200) return { ...record, note: `prepare ${prepared.status}: ${prepared.body?.message}` };
  record.txId = prepared.body.txId;
  const started = Date.now();
  const quoted = await call(record, deadline, () => world.api.post("/send-transactions", { txId: record.txId }));
  if (quoted.status !== 402) return { ...record, note: `quote ${quoted.status}: ${quoted.body?.message}` };
  const nonce = "0x" + randomBytes(32).toString("hex");
  record.paymentNonces.push(nonce);
  const payment = await payWithEthers(world.payer, quoteOf(quoted).accepts[0], { nonce });
  const sent = await call(record, deadline, () =>
    world.api.post("/send-transactions", { txId: record.txId }, { "X-PAYMENT": payment }),
  );
  // Repeating a paid send whose answer was lost answers 409 (already paid): the batch is on its way either way.
  if (sent.status >= 400 && sent.status !== 409)
    return { ...record, note: `send ${sent.status}: ${sent.body?.message}` };
  await untilTerminal(world.api, record, started, deadline);
  return record;
}

/**
 * A paid faucet claim: minted on the faucet's chain, paid on the payment chain; its payment is settled once the claim
 * is confirmed, gathered with others into a settlement batch. A lost or 5xx answer is asked again with the same
 * Idempotency-Key (the claim is made once); once the claim exists, it is replayed without paying again.
 */
export async function paidElsewhereOperation(world: ChaosWorld, tag: string): Promise<OpRecord> {
  const record: OpRecord = {
    kind: "paid-elsewhere",
    symbol: uniqueSymbol(tag),
    recipient: Wallet.createRandom().address,
    paymentNonces: [],
    status: "failed-to-start",
    http5xx: 0,
  };
  const deadline = Date.now() + world.opDeadlineMs;
  const headers = { "Idempotency-Key": randomUUID(), ...distinctClient() };
  const claim = (extra: Record<string, string> = {}) =>
    call(record, deadline, () =>
      world.api.post("/faucet/bkn", { recipientAddress: record.recipient }, { ...headers, ...extra }),
    );
  const quoted = await claim();
  if (quoted.status !== 402) return { ...record, note: `quote ${quoted.status}: ${quoted.body?.message}` };
  const nonce = "0x" + randomBytes(32).toString("hex");
  record.paymentNonces.push(nonce);
  const started = Date.now();
  let sent = await claim({ "X-PAYMENT": await payWithEthers(world.payer, quoteOf(quoted).accepts[0], { nonce }) });
  // 409: the same claim is still being made by the earlier request (its answer lost): replayed once it exists.
  while (sent.status === 409 && Date.now() < deadline) {
    await sleep(500);
    sent = await claim();
  }
  if (sent.status !== 200 && sent.status !== 202)
    return { ...record, note: `claim ${sent.status}: ${sent.body?.message}` };
  record.txId = sent.body.txId;
  await untilTerminal(world.api, record, started, deadline);
  return record;
}

/**
 * A client-signed agent token prepared with a key: sign locally, send, wait for the end. While it waits below the base
 * fee, the client does what the status tells it: signs a replacement with the suggested fees and sends it for the txId.
 */
export async function clientSignedOperation(world: ChaosWorld, tag: string, signer: Wallet): Promise<OpRecord> {
  const record: OpRecord = {
    kind: "client-signed",
    symbol: uniqueSymbol(tag),
    paymentNonces: [],
    status: "failed-to-start",
    http5xx: 0,
  };
  const deadline = Date.now() + world.opDeadlineMs;
  const api = world.api.withKey(world.apiKey);
  const prepared = await call(record, deadline, () =>
    api.post(
      "/prepare-transactions",
      {
        method: "agentCreateToken",
        chainId: "84532",
        signerAddress: signer.address,
        name: `Chaos ${record.symbol}`,
        symbol: record.symbol,
        agentWallet: world.agentWallet,
      },
      distinctClient(),
    ),
  );
  if (prepared.status !== 200) return { ...record, note: `prepare ${prepared.status}: ${prepared.body?.message}` };
  record.txId = prepared.body.txId;
  const unsigned = prepared.body.transactions as Record<string, unknown>[];
  const signedTransactions = await Promise.all(unsigned.map((tx) => signer.signTransaction(tx)));
  const started = Date.now();
  const sent = await call(record, deadline, () =>
    api.post("/send-transactions", { txId: record.txId, signedTransactions }),
  );
  if (sent.status >= 400 && sent.status !== 409)
    return { ...record, note: `send ${sent.status}: ${sent.body?.message}` };
  const replaced = new Set<string>();
  await untilTerminal(api, record, started, deadline, async (status) => {
    const waiting = (status.transactions as any[]).find(
      (t) => t.waiting && t.status === "pending" && !replaced.has(t.hash),
    );
    if (!waiting) return;
    replaced.add(waiting.hash);
    const current = Transaction.from(signedTransactions[waiting.index]);
    const bump = (v: bigint, floor: bigint) => ((v * 12n) / 10n > floor ? (v * 12n) / 10n : floor);
    const resigned = await signer.signTransaction({
      ...unsigned[waiting.index],
      maxFeePerGas: bump(current.maxFeePerGas ?? 0n, BigInt(waiting.waiting.suggestedMaxFeePerGas)),
      maxPriorityFeePerGas: bump(
        current.maxPriorityFeePerGas ?? 0n,
        BigInt(waiting.waiting.suggestedMaxPriorityFeePerGas),
      ),
    });
    signedTransactions[waiting.index] = resigned;
    await call(record, deadline, () => api.post("/send-transactions", { txId: record.txId, signedTransactions }));
  });
  return record;
}
