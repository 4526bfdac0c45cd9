import { randomBytes } from "node:crypto";
import {
  Log,
  TransactionReceipt,
  Wallet,
  keccak256,
  parseUnits,
  toBeHex,
  type BaseWallet,
  type Provider,
} from "ethers";
import { BlockWatcher } from "../../service/chains/blocks";
import { usdcInterface } from "../../service/chains/contracts";
import type { Chain, ChainRegistry } from "../../service/chains/registry";
import { ReorgWatch } from "../../service/chains/reorg-watch";
import { loadConfig } from "../../service/config";
import { Sealer } from "../../service/crypto/sealed";
import { PaymentNotCarried, WouldRevert } from "../../service/engine/relayer";
import type { RelaySigner, RunnerRelayer } from "../../service/engine/runner-ports";
import { METERED_METHODS } from "../../service/methods/metering";
import type { Batch, UnsignedTransaction } from "../../service/model/batch";
import { BatchSettlement } from "../../service/payments/batch-settlement";
import type { OperationSettlement, RunEnd } from "../../service/payments/run-payments";
import { ApiKeys } from "../../service/store/api-keys";
import { Batches } from "../../service/store/batches";
import { BatchTransactions } from "../../service/store/batch-transactions";
import { Credits } from "../../service/store/credits";
import { openDb, type Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import type { PaymentRecord } from "../../service/store/payments";
import type { FakeChain } from "../fakes/chain";
import { PAY_TO, USDC, type fakePaymentCore } from "../fakes/payment-core";

type PaymentCore = ReturnType<typeof fakePaymentCore>;

/**
 * The batch runner's parts (service/engine/runner.ts, runner-broadcast.ts, runner-ending.ts) on the stores it writes
 * (the real ones, on an in-memory PGlite), a FakeChain and the payment core on its fakes (test/fakes/payment-core.ts),
 * for unit tests of the runner's decisions (test/engine/runner-decisions.test.ts).
 */

/** The stores the runner writes, on a fresh migrated in-memory database, and the API keys that charge credits. */
export async function openRunnerStores() {
  const db: Db = await openDb({});
  await migrate(db);
  const sealer = new Sealer("s".repeat(64));
  return {
    db,
    batches: new Batches(db, sealer),
    batchTransactions: new BatchTransactions(db, sealer),
    credits: new Credits(db, METERED_METHODS),
    apiKeys: new ApiKeys(db),
  };
}
export type RunnerStores = Awaited<ReturnType<typeof openRunnerStores>>;

export const config = loadConfig(
  { ADMIN_TOKEN: "a".repeat(24), DATA_ENCRYPTION_KEY: "k".repeat(32) },
  { profile: "local" },
);

/**
 * `node` as a served chain: one confirmation, a head watcher on it. Its deep-reorg watch is off: a ChainNode holds no
 * block hashes to compare (no getBlock), and deep reorgs are not what these tests decide.
 */
export function chainOn(node: FakeChain): Chain {
  const blocks = new BlockWatcher(node);
  const reorgWatch = new ReorgWatch(node as unknown as Provider, blocks, config.REORG_WATCH_BLOCKS);
  reorgWatch.destroy();
  return {
    chainId: node.chainId,
    provider: node,
    confirmations: 1,
    blocks,
    reorgWatch,
    shallowReorgs: 0,
  } as unknown as Chain;
}

/** The registry of one served chain. */
export function registryOf(chain: Chain): ChainRegistry {
  return {
    list: () => [chain],
    find: (id: number) => (id === chain.chainId ? chain : undefined),
  } as unknown as ChainRegistry;
}

/**
 * What the runner asks of the relayer before signing: which code a key delegates to, and whether a call would revert.
 * Scripted, not the real Relayer: it learns its delegation from the key's code on chain (EIP-7702) and simulates with
 * eth_call, and FakeChain executes nothing. What it is not scripted for fails the test, saying what was asked.
 */
export class ScriptedRelayer {
  delegating = false;
  /** The reason the next simulations answer (WouldRevert), until cleared. */
  wouldRevert?: string;
  /** The calls simulated: the batch's, with the calldata its method completed (none: the prepared calldata). */
  readonly simulated: { txId: string; data?: string }[] = [];

  asRelayer(): RunnerRelayer {
    const unscripted = (what: string) => () => Promise.reject(new Error(`the scripted relayer does not ${what}`));
    return {
      delegate: () => (this.delegating ? "0x" + "de".repeat(20) : undefined),
      simulate: (batch: Batch, _tx: unknown, data?: string) => {
        this.simulated.push({ txId: batch.txId, data });
        return this.wouldRevert ? Promise.reject(new WouldRevert(this.wouldRevert)) : Promise.resolve();
      },
      onRefused: unscripted("take a refused nonce back"),
      replace: unscripted("replace transactions"),
      healNonces: unscripted("heal nonces"),
      syncNonces: unscripted("sync nonces"),
    };
  }
}

/**
 * A relay signer as the relayer's signing transaction writes (the carried payment bound and its hash recorded, the
 * bytes stored, in one database transaction), signed by a wallet with the prepared nonce and fees: re-pricing,
 * nonces and the broadcast need a chain that executes. `failures`: what the next calls throw instead, as the relayer
 * throws it (WouldRevert, PaymentNotCarried).
 */
export function scriptedSigner(stores: RunnerStores, key: BaseWallet) {
  const asked: { settle?: OperationSettlement }[] = [];
  const failures: Error[] = [];
  const sign: RelaySigner = async (batch, tx, options = {}) => {
    asked.push({ settle: options.settle });
    const failure = failures.shift();
    if (failure) throw failure;
    const u = tx.unsigned;
    const signedRaw = await key.signTransaction({
      ...u,
      from: undefined,
      value: BigInt(u.value),
      gasLimit: BigInt(u.gasLimit),
      data: options.data ?? u.data,
    });
    const txHash = keccak256(signedRaw);
    const stored = await stores.db.transaction(async (q) => {
      if (options.settle && !(await options.settle.bindInSameTransaction(q)))
        throw new PaymentNotCarried("the payment is no longer reserved for this transaction");
      if (options.settle) await options.settle.recordHashInSameTransaction(q, txHash);
      const locked = await stores.batchTransactions.lockTransaction(q, batch.txId, tx.index);
      return stores.batchTransactions.setTxSigned(q, batch.txId, locked, signedRaw, txHash);
    });
    return { signedRaw, txHash, stored };
  };
  return { sign, asked, failures };
}

/** The payment core's port to the runner, keeping each run's end as the runner hands it over (afterRun). */
export class RecordedSettlement extends BatchSettlement {
  readonly ends: RunEnd[] = [];

  constructor(core: PaymentCore) {
    super({ payments: core.stores.payments }, core.terms, core.settler, core.log, core.refunder);
  }

  override afterRun(end: RunEnd): Promise<void> {
    this.ends.push(end);
    return super.afterRun(end);
  }
}

/** One prepared transaction from `from` on `chainId` (a plain transfer: FakeChain executes nothing). */
export function unsignedFrom(from: string, chainId: number): UnsignedTransaction {
  return {
    from,
    to: Wallet.createRandom().address,
    value: "0x00",
    nonce: 0,
    chainId,
    data: "0x",
    type: 2,
    maxPriorityFeePerGas: parseUnits("1", "gwei").toString(),
    maxFeePerGas: parseUnits("20", "gwei").toString(),
    gasLimit: toBeHex(21_000),
  };
}

/**
 * A batch of one transaction stored and moved to sending as a send leaves it: `signedRaw` the client's bytes
 * (client-signed), none for a relayed one; `keyId` charges that key one credit of the method.
 */
export async function sendingBatch(
  stores: RunnerStores,
  {
    unsigned,
    relayed,
    signedRaw,
    keyId,
  }: { unsigned: UnsignedTransaction; relayed?: boolean; signedRaw?: string; keyId?: string },
): Promise<Batch> {
  const txId = randomBytes(16).toString("hex");
  const method = "whitelist";
  const prepared = {
    signedRaw: null,
    txHash: null,
    status: "prepared",
    blockNumber: null,
    gasUsed: null,
    error: null,
  } as const;
  await stores.batches.create({
    txId,
    chainId: unsigned.chainId,
    method,
    executionMode: relayed ? "service-relayed" : "client-signed",
    signer: unsigned.from,
    apiKeyId: keyId ?? null,
    body: {},
    plan: {},
    info: {},
    transactions: [{ index: 0, unsigned, ...prepared }],
  });
  if (keyId) await stores.credits.grantPlanned(stores.db, keyId, method);
  const signed = signedRaw ? [{ index: 0, signedRaw, txHash: keccak256(signedRaw), status: "signed" as const }] : [];
  const { sent } = await stores.batches.markSending(stores.db, txId, signed, keyId ? { keyId, method } : undefined);
  if (!sent) throw new Error(`batch ${txId} did not move to sending`);
  return sent;
}

/** A key of its own (its balance of the batches' method: the Starter plan's credits until one is spent). */
export async function newKey(stores: RunnerStores): Promise<string> {
  return (await stores.apiKeys.create({ email: `${randomBytes(4).toString("hex")}@example.com`, plan: "Starter" }))
    .record.id;
}

/**
 * A payer's x402 payload with an authorization and a signature, which the payment core can carry in an operation. The
 * signature signs no EIP-712 digest: nothing here checks it (the facilitator is scripted, the chain executes nothing).
 */
export function signedPayload(payer: BaseWallet) {
  const authorization = {
    from: payer.address,
    to: PAY_TO,
    value: "10000",
    validAfter: "0",
    validBefore: String(Math.floor(Date.now() / 1000) + 300),
    nonce: "0x" + randomBytes(32).toString("hex"),
  };
  return { x402Version: 2, payload: { authorization, signature: payer.signingKey.sign(keccak256("0x01")).serialized } };
}

/**
 * The receipt of `relayer`'s transaction whose delegate settled `payment` with the operation: the asset's
 * AuthorizationUsed and Transfer logs. Built, not mined: FakeChain executes nothing and its receipts have no logs.
 */
export function carryingReceipt(
  relayer: string,
  hash: string,
  payment: PaymentRecord,
  blockNumber = 7,
): TransactionReceipt {
  const blockHash = keccak256(toBeHex(blockNumber, 32));
  const logs = [
    usdcInterface.encodeEventLog("AuthorizationUsed", [payment.payer, payment.authorizationNonce]),
    usdcInterface.encodeEventLog("Transfer", [payment.payer, payment.payTo, payment.amount]),
  ].map((l, index) => ({ ...l, address: USDC, index, transactionHash: hash, blockHash, blockNumber }));
  // What the runner and the payment core read of a receipt never goes through its provider.
  const provider = null as unknown as Provider;
  return new TransactionReceipt(
    {
      to: relayer,
      from: relayer,
      contractAddress: null,
      hash,
      index: 0,
      blockHash,
      blockNumber,
      logsBloom: "0x" + "00".repeat(256),
      logs: logs.map((l) => new Log({ ...l, removed: false, transactionIndex: 0 }, provider)),
      gasUsed: 60_000n,
      cumulativeGasUsed: 60_000n,
      gasPrice: 1n,
      type: 2,
      status: 1,
      root: null,
      blobGasUsed: null,
    },
    provider,
  );
}
