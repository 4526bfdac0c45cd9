import { expect } from "chai";
import { Wallet, keccak256, type BaseWallet } from "ethers";
import { broadcast } from "../../service/chains/broadcast";
import { createLogger } from "../../service/logger";
import { RecordsRefused } from "../../service/engine/records-refused";
import { PaymentNotCarried, WouldRevert } from "../../service/engine/relayer";
import { BatchRunner } from "../../service/engine/runner";
import { FirstBroadcast, type Refusal } from "../../service/engine/runner-broadcast";
import { BatchEnding } from "../../service/engine/runner-ending";
import type { BatchHooks, BatchRun, RunnerDeps } from "../../service/engine/runner-ports";
import type { Batch, BatchTransaction, UnsignedTransaction } from "../../service/model/batch";
import { FakeChain } from "../fakes/chain";
import { PAYMENT_CHAIN_ID, USDC, fakePaymentCore } from "../fakes/payment-core";
import {
  RecordedSettlement,
  ScriptedRelayer,
  carryingReceipt,
  chainOn,
  config,
  newKey,
  openRunnerStores,
  registryOf,
  scriptedSigner,
  sendingBatch,
  signedPayload,
  unsignedFrom,
  type RunnerStores,
} from "../helpers/runner-parts";

/**
 * The batch runner's decisions (service/engine/runner.ts and its parts runner-broadcast.ts, runner-ending.ts) on the
 * real stores it writes (an in-memory PGlite), FakeChain and the payment core on its fakes (test/fakes/README.md): no
 * service, no child process, no Hardhat chain. The fake payment stores keep batch statuses of their own (what a refund
 * reads): where the runner ends a batch and owes its payments back in one database transaction, they are told the end
 * first, as test/payments/payment-lifecycle.test.ts tells them.
 */
describe("batch runner's decisions (real stores on PGlite, FakeChain, payment core on fakes)", function () {
  this.timeout(30_000);
  const log = createLogger("silent");
  let stores: RunnerStores;
  before(async () => (stores = await openRunnerStores()));
  after(() => stores?.db.close());

  const depsOn = (node: FakeChain, relayer = new ScriptedRelayer()): RunnerDeps => ({
    db: stores.db,
    batches: stores.batches,
    batchTransactions: stores.batchTransactions,
    credits: stores.credits,
    chains: registryOf(chainOn(node)),
    config,
    relayer: relayer.asRelayer(),
  });
  const stored = async (txId: string) => (await stores.batches.get(txId))!;

  describe("a run of a client-signed batch (BatchRunner.run)", () => {
    const running: BatchRunner[] = [];
    afterEach(async () => {
      for (const runner of running.splice(0)) await runner.stop();
    });

    /** A runner on its own chain and payment core; `hooks`: what the batches' method does. */
    const runnerOn = (hooks: BatchHooks = {}) => {
      const node = new FakeChain(31_990);
      const core = fakePaymentCore();
      const port = new RecordedSettlement(core);
      // No relayed batch is run here: the relayer's signer is never asked.
      const relaySigner = () => Promise.reject(new Error("a client-signed batch is never signed by the relayer"));
      const runner = new BatchRunner(
        depsOn(node),
        { methods: () => hooks, payments: port, relaySigner, onReorged: () => undefined },
        log,
      );
      running.push(runner);
      return { node, core, port, runner };
    };

    /** A client's signed transaction, as its send hands it over. */
    const clientSigned = async (node: FakeChain) => {
      const client = Wallet.createRandom();
      const unsigned = unsignedFrom(client.address, node.chainId);
      const signedRaw = await signedBy(client, unsigned);
      return { unsigned, signedRaw, hash: keccak256(signedRaw) };
    };

    /**
     * The client's bytes reach the chain before the run gets to them (a client that broadcast them too): the run's
     * broadcast finds them mined, as a node answers mined bytes (test/contracts-of/chain-node.test.ts). A run that had
     * to wait for a block would read the fee market, which a ChainNode does not answer (getBlock).
     */
    const minedBeforeTheRun = async (node: FakeChain, signedRaw: string) => {
      await broadcast(node, signedRaw, keccak256(signedRaw));
      return node.mine();
    };

    it("a batch paid with a key goes at once: no payment read, confirmed, successful, its credit spent", async () => {
      const { node, core, port, runner } = runnerOn();
      const { unsigned, signedRaw, hash } = await clientSigned(node);
      const keyId = await newKey(stores);
      const batch = await sendingBatch(stores, { unsigned, signedRaw, keyId });
      // Under a key, a payment naming the batch is none of the run's business (paysFor): it stays as it is.
      const stray = await core.reserve(batch.txId);
      const block = await minedBeforeTheRun(node, signedRaw);

      const ended = await runner.run(batch.txId, batch);
      expect(ended).to.deep.include({ status: "success", failedIndex: null, error: null });
      const after = await stored(batch.txId);
      expect(after.status).to.equal("success");
      expect(after.transactions[0]).to.deep.include({ status: "confirmed", txHash: hash, blockNumber: block });
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(9);
      expect(await core.statusOf(stray.id)).to.equal("reserved");
      expect(core.facilitator.asked).to.deep.equal([]);
      expect(port.ends).to.deep.equal([]);
    });

    it("a payment refused for good when settled first refuses the batch: nothing sent, rejected at its first transaction", async () => {
      const { node, core, port, runner } = runnerOn();
      const { unsigned, signedRaw, hash } = await clientSigned(node);
      const batch = await sendingBatch(stores, { unsigned, signedRaw });
      const payment = await core.reserve(batch.txId);
      core.facilitator.script = ["refused"];

      const ended = (await runner.run(batch.txId, batch))!;
      expect(ended).to.deep.include({ status: "rejected", failedIndex: 0 });
      expect(ended.error).to.match(/^the payment could not be settled: .+; nothing was sent$/);
      const after = await stored(batch.txId);
      expect(after.transactions[0]).to.deep.include({ status: "refused", signedRaw: null, error: ended.error });
      expect(await node.getTransaction(hash), "the client's bytes never went out").to.equal(null);
      expect(await node.getTransactionCount(unsigned.from, "pending")).to.equal(0);
      expect(await core.statusOf(payment.id)).to.equal("released");
      expect(port.ends).to.deep.equal([{ kind: "rejected", txId: batch.txId, reason: ended.error, owed: 0 }]);
    });

    it("a payment owed after a failure of ours (the settlement wallet without gas) holds the batch, which goes once it is settled", async () => {
      const { node, core, port, runner } = runnerOn();
      const { unsigned, signedRaw } = await clientSigned(node);
      const batch = await sendingBatch(stores, { unsigned, signedRaw });
      const payment = await core.reserve(batch.txId);
      core.facilitator.script = ["no-gas"];
      await minedBeforeTheRun(node, signedRaw);

      const started = Date.now();
      expect((await runner.run(batch.txId, batch))?.status).to.equal("success");
      // Tried again after the run's first pause (RETRY_START_MS in runner-broadcast.ts: 500 ms), not at once.
      expect(Date.now() - started).to.be.at.least(490);
      expect(core.facilitator.asked).to.deep.equal([payment.id, payment.id]);
      // Settled before the batch ended: the transaction that ended it read it settled (not settled after it by afterRun).
      const [end] = port.ends;
      if (end?.kind !== "success") throw new Error(`run ended ${end?.kind}`);
      expect(end.payments?.map((p) => [p.id, p.status])).to.deep.equal([[payment.id, "settled"]]);
    });

    it("a method that refuses the records ends the confirmed batch rejected: confirmed, nothing recorded, its credit back", async () => {
      const reason = "token symbol TKN was recorded for another batch first";
      const { node, core, port, runner } = runnerOn({
        onConfirmed: () => Promise.reject(new RecordsRefused(reason)),
      });
      const paid = await clientSigned(node);
      const batch = await sendingBatch(stores, { unsigned: paid.unsigned, signedRaw: paid.signedRaw });
      const payment = await core.reserve(batch.txId);
      const keyed = await clientSigned(node);
      const keyId = await newKey(stores);
      const keyedBatch = await sendingBatch(stores, { unsigned: keyed.unsigned, signedRaw: keyed.signedRaw, keyId });
      await broadcast(node, paid.signedRaw, paid.hash);
      const block = await minedBeforeTheRun(node, keyed.signedRaw);

      for (const b of [batch, keyedBatch]) {
        const ended = (await runner.run(b.txId, b))!;
        expect(ended).to.deep.include({ status: "rejected", failedIndex: 0, error: reason, outcome: null });
        expect(ended.transactions[0]).to.deep.include({ status: "confirmed", blockNumber: block });
      }
      // The operation ran on chain: its payment is settled as for a success, and the key's credit comes back.
      expect(await core.statusOf(payment.id)).to.equal("settled");
      expect(port.ends.map((end) => end.kind)).to.deep.equal(["confirmed-unrecorded"]);
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(10);
    });
  });

  describe("a relayed batch before its first broadcast and at its end (FirstBroadcast, BatchEnding)", () => {
    const NEVER_STOPPED = { stopped: () => false, signal: new Promise<void>(() => undefined) };

    /** The runner's two parts on the payment chain, a relayer key that signs through `signer`, a payment core. */
    const relayedParts = (hooks: BatchHooks = {}) => {
      const core = fakePaymentCore();
      const relayer = new ScriptedRelayer();
      const key = Wallet.createRandom();
      const signer = scriptedSigner(stores, key);
      const node = new FakeChain(PAYMENT_CHAIN_ID);
      const deps = depsOn(node, relayer);
      const methods = () => hooks;
      return {
        core,
        relayer,
        key,
        signer,
        chain: deps.chains.find(PAYMENT_CHAIN_ID)!,
        first: new FirstBroadcast(deps, methods, core.port, signer.sign, NEVER_STOPPED, log),
        ending: new BatchEnding(deps, methods, core.port, log),
        batch: (keyId?: string) =>
          sendingBatch(stores, { unsigned: unsignedFrom(key.address, PAYMENT_CHAIN_ID), relayed: true, keyId }),
      };
    };
    const runOf = (batch: Batch): BatchRun => ({ txId: batch.txId, reorged: false });

    /** What signRelayed answered, when it signed. */
    const signedTx = (signed: Awaited<ReturnType<FirstBroadcast["signRelayed"]>>): BatchTransaction => {
      if (typeof signed !== "object" || !("current" in signed))
        throw new Error(`not signed: ${JSON.stringify(signed)}`);
      return signed.current;
    };

    /** A relayed batch whose one payment its transaction can carry (a delegating key, a signed authorization). */
    const carriable = async (hooks: BatchHooks = {}) => {
      const p = relayedParts(hooks);
      p.core.facilitator.settlesInOperation = true;
      p.relayer.delegating = true;
      const batch = await p.batch();
      const payer = Wallet.createRandom();
      const payment = await p.core.reserve(batch.txId, { payer: payer.address, payload: signedPayload(payer) });
      return { p, batch, payment, run: runOf(batch) };
    };

    it("a payment its only transaction can carry goes to the signer, not settled first; the ending settles it in its own transaction", async () => {
      const { p, batch, payment, run } = await carriable({
        onConfirmed: (_q, facts) => Promise.resolve({ paidBy: facts.payer }),
      });

      // The payment as the send reserved it, handed over rather than read back (engine/runner.ts drive).
      const paid = await p.first.payFirst(run, batch, payment);
      if (paid === "stopped" || "refused" in paid) throw new Error(`not paid: ${JSON.stringify(paid)}`);
      expect(paid.carried).to.deep.include({ payer: payment.payer, asset: USDC });
      expect(run.payer).to.equal(payment.payer);
      expect(p.core.facilitator.asked).to.deep.equal([]);
      expect(p.relayer.simulated, "nothing to settle first, so nothing simulated first").to.deep.equal([]);

      const current = signedTx(await p.first.signRelayed(run, batch, batch.transactions[0], paid.carried));
      expect(p.signer.asked.map((a) => a.settle)).to.deep.equal([paid.carried]);
      expect(await p.core.stores.payments.get(payment.id)).to.deep.include({
        status: "settling",
        settleInOperation: true,
        settleTxHash: current.txHash,
      });

      const receipt = carryingReceipt(p.key.address, current.txHash!, payment);
      const { blockNumber, blockHash, gasUsed } = receipt;
      const last = { index: 0, blockNumber, blockHash, gasUsed };
      const signedBatch = { ...batch, transactions: [current] };
      const ended = await p.ending.finish(run, signedBatch, p.chain, [receipt], last, run.payer);
      expect(ended).to.deep.include({ status: "success", outcome: { paidBy: payment.payer } });
      expect((await stored(batch.txId)).transactions[0]).to.deep.include({ status: "confirmed", blockNumber });
      const settled = await p.core.stores.payments.get(payment.id);
      expect(settled).to.deep.include({ status: "settled" });
      expect(settled?.settlement?.transaction).to.equal(receipt.hash);
      if (run.end?.kind !== "success") throw new Error(`run ended ${run.end?.kind}`);
      expect(run.end.settledHere.map((s) => s.id)).to.deep.equal([payment.id]);
    });

    it("the payment the run bound (payFirst keeps it: run.carried) is settled with the batch's end from what the run wrote, not read back; signed twice, it is read back", async () => {
      for (const signedTwice of [false, true]) {
        const { p, batch, payment, run } = await carriable();
        const paid = await p.first.payFirst(run, batch, payment);
        if (paid === "stopped" || "refused" in paid) throw new Error(`not paid: ${JSON.stringify(paid)}`);
        expect(run.carried, "kept for the batch's end").to.equal(paid.carried);
        const current = signedTx(await p.first.signRelayed(run, batch, batch.transactions[0], paid.carried));
        // A second hash recorded through the same binding (a re-sign): what the run wrote is no longer one answer.
        if (signedTwice) await paid.carried!.recordHashInSameTransaction(stores.db, current.txHash!);
        const reads: string[] = [];
        const forBatch = p.core.stores.payments.forBatch.bind(p.core.stores.payments);
        p.core.stores.payments.forBatch = (txId: string) => (reads.push(txId), forBatch(txId));

        const receipt = carryingReceipt(p.key.address, current.txHash!, payment);
        const { blockNumber, blockHash, gasUsed } = receipt;
        const ended = await p.ending.finish(
          run,
          { ...batch, transactions: [current] },
          p.chain,
          [receipt],
          { index: 0, blockNumber, blockHash, gasUsed },
          run.payer,
        );
        expect(ended).to.deep.include({ status: "success" });
        expect(reads, signedTwice ? "read back" : "nothing read back").to.deep.equal(signedTwice ? [batch.txId] : []);
        const settled = await p.core.stores.payments.get(payment.id);
        expect(settled).to.deep.include({ status: "settled" });
        expect(settled?.settlement?.transaction).to.equal(receipt.hash);
        if (run.end?.kind !== "success") throw new Error(`run ended ${run.end?.kind}`);
        expect(run.end.settledHere.map((s) => s.id)).to.deep.equal([payment.id]);
        expect(p.core.stores.events.filter((e) => e.type === "payment.settled")).to.have.length(1);
      }
    });

    for (const reads of [false, true])
      it(`a success that finds the batch ended by another runner leaves nothing of its own: no records, its payment not settled here, nothing told${reads ? " (its method reads first: the statements after the end's fail as aborted, no rejection is left unhandled)" : ""}`, async () => {
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => void unhandled.push(reason);
        process.prependListener("unhandledRejection", onUnhandled);
        try {
          const { p, batch, payment, run } = await carriable({
            // The method's records travel with the end's statement (Queryable.ahead); they must not outlive its failure.
            onConfirmed: async (q, facts) => {
              if (reads) {
                await q.query("SELECT $1::text AS tx_id", [facts.txId]);
                await new Promise((resolve) => setTimeout(resolve, 20)); // other I/O: the end's failure lands meanwhile
              }
              await q.write("UPDATE batches SET error = $2 WHERE tx_id = $1", [facts.txId, "recorded by the loser"]);
              return { paidBy: facts.payer };
            },
          });
          const paid = await p.first.payFirst(run, batch, payment);
          if (paid === "stopped" || "refused" in paid) throw new Error(`not paid: ${JSON.stringify(paid)}`);
          const current = signedTx(await p.first.signRelayed(run, batch, batch.transactions[0], paid.carried));
          await stores.db.transaction((q) => stores.batches.markSuccess(q, batch.txId)); // the other runner's end

          const receipt = carryingReceipt(p.key.address, current.txHash!, payment);
          const { blockNumber, blockHash, gasUsed } = receipt;
          const last = { index: 0, blockNumber, blockHash, gasUsed };
          const ended = await p.ending.finish(
            run,
            { ...batch, transactions: [current] },
            p.chain,
            [receipt],
            last,
            run.payer,
          );
          expect(ended, "another runner ended it").to.equal(undefined);
          const after = await stored(batch.txId);
          expect([after.status, after.error, after.outcome ?? null]).to.deep.equal(["success", null, null]);
          expect(await p.core.stores.payments.get(payment.id)).to.deep.include({ status: "settling" });
          expect(run.end).to.equal(undefined);
          await new Promise((resolve) => setImmediate(resolve));
          expect(unhandled).to.deep.equal([]);
        } finally {
          process.removeListener("unhandledRejection", onUnhandled);
        }
      });

    it("a payment that can no longer ride in its transaction is settled first, once the call would go through, then it is signed without it", async () => {
      const { p, batch, payment, run } = await carriable();
      const paid = await p.first.payFirst(run, batch, undefined);
      if (paid === "stopped" || "refused" in paid) throw new Error(`not paid: ${JSON.stringify(paid)}`);
      p.signer.failures.push(new PaymentNotCarried("the relayer no longer delegates to PaidRelayDelegate"));

      const current = signedTx(await p.first.signRelayed(run, batch, batch.transactions[0], paid.carried));
      expect(p.signer.asked.map((a) => a.settle)).to.deep.equal([paid.carried, undefined]);
      expect(p.relayer.simulated).to.deep.equal([{ txId: batch.txId, data: undefined }]);
      expect(p.core.facilitator.asked).to.deep.equal([payment.id]);
      expect(await p.core.stores.payments.get(payment.id)).to.deep.include({
        status: "settled",
        settleInOperation: false,
      });
      expect((await stored(batch.txId)).transactions[0]).to.deep.include({
        status: "signed",
        txHash: current.txHash,
      });
    });

    it("a relayed call that would revert, simulated as its method completes it for the payer, is refused before its payment is settled", async () => {
      const p = relayedParts({ bindRelayed: (_batch, _index, payer) => Promise.resolve(`0x${payer.slice(2)}`) });
      const batch = await p.batch();
      const payment = await p.core.reserve(batch.txId);
      p.relayer.wouldRevert = "execution reverted: not whitelisted";
      const run = runOf(batch);

      const refusal = await p.first.payFirst(run, batch, undefined);
      expect(refusal).to.deep.equal({
        refused: "transaction 1 would revert: execution reverted: not whitelisted; nothing was sent",
        tx: batch.transactions[0],
      });
      expect(p.relayer.simulated).to.deep.equal([{ txId: batch.txId, data: `0x${payment.payer.slice(2)}` }]);
      expect(p.core.facilitator.asked).to.deep.equal([]);
      expect(p.signer.asked).to.deep.equal([]);

      const ended = (await p.ending.refused(run, batch, refusal as Refusal))!;
      expect(ended).to.deep.include({ status: "rejected", failedIndex: 0 });
      // Nothing charged: the runner hands the end to the payments (afterRun), which release the reserved payment.
      await p.core.port.afterRun(run.end!);
      expect(await p.core.stores.payments.get(payment.id)).to.deep.include({
        status: "released",
        releaseReason: `the operation failed: ${ended.error}`,
      });
    });

    for (const [outOfGas, cause, owed, why] of [
      [false, "payer", 0, "its call reverts: the payer's failure, its settled payment stays charged"],
      [true, "ours", 1, "out of the gas the service gives it: the service's failure, its settled payment owed back"],
    ] as const) {
      it(`a transaction that would revert is refused unsigned; ${why}`, async () => {
        const p = relayedParts();
        const batch = await p.batch();
        const payment = await p.core.reserve(batch.txId);
        const run = runOf(batch);
        expect(await p.first.payFirst(run, batch, undefined)).to.deep.equal({ carried: undefined });
        expect(await p.core.statusOf(payment.id)).to.equal("settled");
        p.signer.failures.push(new WouldRevert("execution reverted: not whitelisted", outOfGas));

        const refusal = (await p.first.signRelayed(run, batch, batch.transactions[0])) as Refusal;
        expect(refusal).to.deep.include({ cause });
        // The fake refunds read the batch's end from a map of their own; the real ones read the row the end writes.
        p.core.stores.batches.set(batch.txId, "rejected");
        const ended = (await p.ending.refused(run, batch, refusal))!;
        expect(ended).to.deep.include({ status: "rejected", failedIndex: 0 });
        expect(ended.error).to.equal(
          "transaction 1 would revert: execution reverted: not whitelisted; nothing was sent",
        );
        expect((await stored(batch.txId)).transactions[0]).to.deep.include({ status: "refused", txHash: null });
        expect(run.end).to.deep.equal({ kind: "rejected", txId: batch.txId, reason: ended.error, owed });
        // The payer's failure stays charged; ours owes back what was settled (a refund, until it is sent).
        expect(await p.core.statusOf(payment.id)).to.equal("settled");
        expect((await p.core.stores.refunds.get(payment.id))?.status).to.equal(owed ? "owed" : undefined);
      });
    }

    it("abandoning a relayed batch nothing of which was signed releases its reserved payment and gives its credit back", async () => {
      const p = relayedParts();
      const reason = "chain 84532 did not answer for 900 s before anything was sent; nothing was sent";
      const batch = await p.batch();
      const payment = await p.core.reserve(batch.txId);
      const run = runOf(batch);
      const keyId = await newKey(stores);
      const keyed = await p.batch(keyId);
      const keyedRun = runOf(keyed);
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(9);

      const ended = (await p.ending.abandonUnsent(run, batch, reason))!;
      expect(ended).to.deep.include({ status: "rejected", failedIndex: 0, error: reason });
      expect(ended.transactions[0].status).to.equal("refused");
      expect(await p.core.stores.payments.get(payment.id)).to.deep.include({
        status: "released",
        releaseReason: `the operation failed: ${reason}`,
      });
      expect(run.end).to.deep.equal({ kind: "rejected", txId: batch.txId, reason, owed: 0, released: true });

      expect((await p.ending.abandonUnsent(keyedRun, keyed, reason))?.status).to.equal("rejected");
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(10);
      expect(keyedRun.end, "a batch under a key has no payments to tell").to.equal(undefined);
    });

    it("a rejection that finds the batch ended by another writer gives nothing back: its credit stays spent, nothing is owed", async () => {
      const p = relayedParts();
      const keyId = await newKey(stores);
      const batch = await p.batch(keyId);
      const run = runOf(batch);
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(9);
      await stores.db.transaction((q) => stores.batches.markSuccess(q, batch.txId));

      const ended = await p.ending.reject(
        run,
        batch,
        batch.transactions[0],
        "refused",
        "node refused it",
        undefined,
        "ours",
      );
      expect(ended?.status, "as the other writer left it").to.equal("success");
      expect((await stores.credits.balances(keyId)).whitelist).to.equal(9);
      expect(run.end, "a batch under a key has no payments to tell").to.equal(undefined);
    });

    it("abandoning does nothing once something of the batch was signed meanwhile: it may still reach its chain", async () => {
      const p = relayedParts();
      const batch = await p.batch();
      const payment = await p.core.reserve(batch.txId);
      await p.signer.sign(batch, batch.transactions[0]);
      const run = runOf(batch);

      expect(await p.ending.abandonUnsent(run, batch, "chain did not answer")).to.equal(undefined);
      const after = await stored(batch.txId);
      expect([after.status, after.transactions[0].status]).to.deep.equal(["sending", "signed"]);
      expect(await p.core.statusOf(payment.id)).to.equal("reserved");
      expect(run.end).to.equal(undefined);
    });
  });
});

/** `unsigned` signed by its sender. */
function signedBy(wallet: BaseWallet, unsigned: UnsignedTransaction): Promise<string> {
  const { from: _from, value, gasLimit, ...rest } = unsigned;
  return wallet.signTransaction({ ...rest, value: BigInt(value), gasLimit: BigInt(gasLimit) });
}
