import { Transaction } from "ethers";
import { clientSignedOperation, paidElsewhereOperation, relayedOperation, type OpRecord } from "./operations";
import type { ChaosWorld } from "./world";

/** One fault, applied between the service and the payment chain while operations run. */
export interface Scenario {
  name: string;
  description: string;
  run(world: ChaosWorld): Promise<OpRecord[]>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `n` paid relayed operations, `n` client-signed ones and `n + 1` faucet claims paid on the payment chain, side by
 * side (the first claim's settlement goes at once, the others' are gathered into a batch). `pooled`: the payment
 * chain transactions they make at least (one per operation, one settlement for the claims).
 */
function operations(world: ChaosWorld, tag: string, n = 2): Promise<OpRecord>[] & { pooled: number } {
  const ops: Promise<OpRecord>[] = [];
  for (let i = 0; i < n; i++)
    ops.push(
      relayedOperation(world, `${tag}R`),
      clientSignedOperation(world, `${tag}C`, world.signers[i % world.signers.length]),
    );
  for (let i = 0; i <= n; i++) ops.push(paidElsewhereOperation(world, `${tag}F`));
  return Object.assign(ops, { pooled: 2 * n + 1 });
}

/** Runs `ops` with `during` happening meanwhile; every fault is cleared and mining resumed whatever happens. */
async function withFaults(
  world: ChaosWorld,
  ops: Promise<OpRecord>[],
  during: () => Promise<void> = async () => undefined,
): Promise<OpRecord[]> {
  try {
    await during();
    return await Promise.all(ops);
  } finally {
    world.base.proxy.clear();
    await world.base.mining.resume();
  }
}

/** Waits until the pool holds at least `count` transactions (the operations' broadcasts), or `ms`. */
async function untilPooled(world: ChaosWorld, count: number, ms = 20_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pending = await world.base.mining.pending();
    if (pending.length >= count || Date.now() > deadline) return pending;
    await sleep(100);
  }
}

/** Every read or write method the service sends: a fault "on everything". */
const ALL = undefined;

export const SCENARIOS: Scenario[] = [
  {
    name: "rate-limit-429",
    description: "a third of requests answered HTTP 429 with Retry-After: 1",
    run: (world) => {
      world.base.proxy.add({ kind: "http", status: 429, retryAfter: "1", rate: 0.33, methods: ALL });
      return withFaults(world, operations(world, "RL"));
    },
  },
  {
    name: "timeouts",
    description: "a quarter of requests stall 4 s (above the service's 2 s attempt timeout)",
    run: (world) => {
      world.base.proxy.add({ kind: "stall", ms: 4_000, rate: 0.25 });
      return withFaults(world, operations(world, "TO"));
    },
  },
  {
    name: "connection-resets",
    description: "a fifth of connections reset before the node sees the request",
    run: (world) => {
      world.base.proxy.add({ kind: "reset", rate: 0.2 });
      return withFaults(world, operations(world, "RS"));
    },
  },
  {
    name: "outage-5s",
    description: "the provider refuses every connection for 5 s while the operations are sent",
    run: (world) => {
      const ops = operations(world, "OU");
      return withFaults(world, ops, async () => {
        await sleep(300);
        await world.base.proxy.outage(5_000);
      });
    },
  },
  {
    name: "rpc-errors",
    description: "`header not found` on the first two eth_sendRawTransaction, and on 20% of reads",
    run: (world) => {
      world.base.proxy.add({
        kind: "rpc-error",
        code: -32000,
        message: "header not found",
        methods: ["eth_sendRawTransaction"],
        times: 2,
      });
      world.base.proxy.add({
        kind: "rpc-error",
        code: -32000,
        message: "header not found",
        rate: 0.2,
        methods: [
          "eth_getTransactionReceipt",
          "eth_getTransactionByHash",
          "eth_call",
          "eth_estimateGas",
          "eth_getBlockByNumber",
          "eth_getTransactionCount",
          "eth_getCode",
          "eth_blockNumber",
        ],
      });
      return withFaults(world, operations(world, "HE"));
    },
  },
  {
    name: "lost-answer",
    description: "the node takes eth_sendRawTransaction but the answer is lost (4 times)",
    run: (world) => {
      world.base.proxy.add({ kind: "lose-answer", methods: ["eth_sendRawTransaction"], times: 4 });
      return withFaults(world, operations(world, "LA"));
    },
  },
  {
    name: "lagging-node",
    description: "the provider's node is 3 blocks behind (head, receipts, latest reads)",
    run: async (world) => {
      world.base.proxy.add({ kind: "lag", blocks: 3 });
      // A lagging node only shows what is 3 blocks old: keep blocks coming.
      const stop = keepMining(world, 700);
      try {
        return await withFaults(world, operations(world, "LG"));
      } finally {
        stop();
      }
    },
  },
  {
    name: "dropped-from-mempool",
    description:
      "every operation's transaction is dropped from the node's pool once (hardhat_dropTransaction) before a block takes it",
    run: async (world) => {
      await world.base.mining.hold();
      const ops = operations(world, "DR");
      return withFaults(world, ops, async () => {
        const dropped = new Set<string>();
        const deadline = Date.now() + 15_000;
        // Drop whatever reaches the pool, once per hash, until every operation's transaction was dropped.
        while (dropped.size < ops.pooled && Date.now() < deadline) {
          for (const hash of await world.base.mining.pending())
            if (!dropped.has(hash) && (await world.base.mining.drop(hash))) dropped.add(hash);
          await sleep(100);
        }
        await sleep(500);
        await world.base.mining.resume();
      });
    },
  },
  {
    name: "base-fee-spike",
    description: "the base fee jumps to 50 gwei (50× and more) for 10 blocks while the operations wait in the pool",
    run: async (world) => {
      await world.base.mining.hold();
      const ops = operations(world, "FS");
      return withFaults(world, ops, async () => {
        await untilPooled(world, ops.pooled);
        const before = await world.base.mining.baseFee();
        const spike = before * 50n > 50_000_000_000n ? before * 50n : 50_000_000_000n;
        for (let i = 0; i < 10; i++) {
          await world.base.mining.mine(1, spike);
          await sleep(700);
        }
        await world.base.mining.resume();
      });
    },
  },
  {
    name: "reorg-before-confirmations",
    description:
      "the block holding the operations is reorged away (1 block) before their confirmations; the new chain lacks them",
    run: async (world) => {
      await world.base.mining.hold();
      const ops = operations(world, "RB");
      return withFaults(world, ops, async () => {
        const pooled = await untilPooled(world, ops.pooled);
        const snapshot = await world.base.mining.snapshot();
        await world.base.mining.mine(1);
        await sleep(1_500); // the service sees the receipts and waits for its confirmations
        await world.base.mining.revert(snapshot);
        for (const hash of [...pooled, ...(await world.base.mining.pending())]) await world.base.mining.drop(hash);
        await world.base.mining.mine(2); // another chain, one block longer, without them
        await world.base.mining.resume();
      });
    },
  },
  {
    name: "reorg-after-confirmations",
    description:
      "a reorg 3 blocks deeper than the confirmations takes the succeeded operations and their settlements off the chain; the nodes put the settlements back in their pools (as geth does), the operations' transactions are lost",
    run: async (world) => {
      const snapshot = await world.base.mining.snapshot();
      const startHead = await world.base.mining.head();
      const first = await Promise.all([...operations(world, "RA")]);
      const reachedHead = await world.base.mining.head();
      // A settlement ended (settled) is no longer held by the service (nothing usable at rest): after a real reorg the
      // nodes return it to their pools, which the revert below does not do by itself.
      const settlements = await settlementBytes(world, first);
      await world.base.mining.hold();
      await world.base.mining.revert(snapshot);
      for (const hash of await world.base.mining.pending()) await world.base.mining.drop(hash);
      // The new chain is at least as high as the old one (and 3 blocks more), so the old blocks' numbers exist again.
      await world.base.mining.mine(reachedHead - startHead + 3);
      for (const raw of settlements)
        await world.base.provider.send("eth_sendRawTransaction", [raw]).catch(() => undefined);
      await world.base.mining.resume();
      // The operations were final once; now the service must notice, say pending, and bring them back.
      return withFaults(
        world,
        first.map((op) => untilBackOnChain(world, op)),
      );
    },
  },
];

/** The signed bytes of the operations' settlement transactions, read from the chain (they are public once mined). */
async function settlementBytes(world: ChaosWorld, ops: OpRecord[]): Promise<string[]> {
  const raws = new Set<string>();
  for (const op of ops) {
    if (op.kind === "client-signed" || !op.txId) continue;
    const status = (await world.api.get("/get-transaction-status", { txId: op.txId })).body;
    for (const payment of status.payments ?? []) {
      const tx = payment.settlementTransaction
        ? await world.base.provider.getTransaction(payment.settlementTransaction)
        : null;
      if (tx) raws.add(Transaction.from(tx).serialized); // a settlement batch serves several claims: sent back once
    }
  }
  return [...raws];
}

/**
 * After a deep reorg on the payment chain, a faucet claim (minted on its own chain, untouched) is back when its
 * payment is settled by a transaction the new chain holds.
 */
async function untilSettlementBack(world: ChaosWorld, op: OpRecord): Promise<OpRecord> {
  const started = Date.now();
  const deadline = started + world.opDeadlineMs;
  for (;;) {
    const res = await world.api.get("/get-transaction-status", { txId: op.txId });
    if (res.status >= 500) op.http5xx++;
    const payment = res.body?.payments?.[0];
    const receipt =
      payment?.status === "settled"
        ? await world.base.provider.getTransactionReceipt(payment.settlementTransaction)
        : null;
    if (receipt?.status === 1) return { ...op, msToTerminal: Date.now() - started };
    if (Date.now() > deadline)
      return { ...op, status: "pending", note: `its settlement never came back on chain (payment ${payment?.status})` };
    await sleep(250);
  }
}

/** Mines a block every `ms` until stopped (a chain that keeps going while a node lags behind it). */
function keepMining(world: ChaosWorld, ms: number): () => void {
  if (world.blockTime > 0) return () => undefined;
  const timer = setInterval(() => void world.base.mining.mine(1).catch(() => undefined), ms);
  return () => clearInterval(timer);
}

/**
 * After a deep reorg: the service must notice it (status pending while reorged; the transaction's `reorgs` count) and
 * bring the operation back to success once its transaction is on the new chain. The record keeps the client's view.
 */
async function untilBackOnChain(world: ChaosWorld, op: OpRecord): Promise<OpRecord> {
  if (op.status !== "success") return op;
  if (op.kind === "paid-elsewhere") return untilSettlementBack(world, op);
  const api = world.api.withKey(op.kind === "client-signed" ? world.apiKey : undefined);
  const started = Date.now();
  const deadline = started + world.opDeadlineMs;
  let sawReorg = false;
  for (;;) {
    const res = await api.get("/get-transaction-status", { txId: op.txId });
    if (res.status >= 500) op.http5xx++;
    const status = res.body;
    const paymentsDone = (status?.payments ?? []).every(
      (p: { status: string }) => p.status === "settled" || p.status === "released",
    );
    if (
      status?.batchStatus === "pending" ||
      (status?.transactions ?? []).some((t: { reorgs?: number }) => (t.reorgs ?? 0) > 0)
    )
      sawReorg = true;
    if (sawReorg && status?.batchStatus === "success" && paymentsDone)
      return { ...op, msToTerminal: Date.now() - started };
    if (Date.now() > deadline)
      return {
        ...op,
        status: "pending",
        note: sawReorg ? "reorged, never back on chain" : "the reorg was never reported",
      };
    await sleep(250);
  }
}
