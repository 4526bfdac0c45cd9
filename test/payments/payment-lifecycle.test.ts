import { expect } from "chai";
import type { TransactionReceipt } from "ethers";
import { NO_SQL } from "../fakes/payment-stores";
import { fakePaymentCore } from "../fakes/payment-core";

/**
 * The payment's state machine (reserved → settling → settled, or released; a settled payment owed back, then refunded)
 * as the payment core drives it: the settler (payments/settler.ts), the runner's port (payments/batch-settlement.ts
 * through RunPayments) and the refunder, on the in-memory stores (held to the database's behaviour by
 * test/contracts-of/payment-store.ts) and a scripted facilitator.
 */
describe("payment lifecycle (payment core on in-memory stores)", () => {
  const noRevert = () => Promise.resolve(undefined);

  describe("one payment's settlement (PaymentSettler.settleOutcome)", () => {
    it("reserved → settled: claimed, sent, settled once, with its payment.settled event", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const p = await core.reserve(b.txId);
      const outcome = await core.settler.settleOutcome(p);
      expect(outcome.kind).to.equal("settled");
      const settled = (await core.stores.payments.get(p.id))!;
      expect(settled).to.deep.include({ status: "settled", payload: null, settleTxRaw: null });
      expect(core.stores.events).to.deep.equal([{ type: "payment.settled", txId: b.txId }]);
      // Idempotent: asked again, it answers the settlement and sends nothing.
      expect(await core.settler.settleOutcome(settled)).to.deep.equal(outcome);
      expect(core.facilitator.asked).to.deep.equal([p.id]);
      expect(core.stores.events).to.have.length(1);
    });

    it("an authorization about to expire is released without asking the facilitator (nothing charged)", async () => {
      const core = fakePaymentCore();
      const p = await core.reserve(core.batch().txId, { validForS: 5 });
      const outcome = await core.settler.settleOutcome(p);
      expect(outcome).to.deep.equal({
        kind: "released",
        reason: "the authorization expired before it could be settled",
      });
      expect(await core.statusOf(p.id)).to.equal("released");
      expect(core.facilitator.asked).to.deep.equal([]);
    });

    for (const failure of ["fails-in-passing", "no-gas"] as const) {
      it(`a failure of ours before anything was sent (${failure}) keeps it owed: back to reserved, settled on the next try`, async () => {
        const core = fakePaymentCore();
        const p = await core.reserve(core.batch().txId);
        core.facilitator.script = [failure];
        expect((await core.settler.settleOutcome(p)).kind).to.equal("pending");
        expect(await core.statusOf(p.id)).to.equal("reserved");
        expect(core.settler.failures).to.deep.equal({ ours: 1, payer: 0 });
        expect((await core.settler.settleOutcome((await core.stores.payments.get(p.id))!)).kind).to.equal("settled");
      });
    }

    it("mined without the transfer while the authorization is still usable: reserved again, without its transaction", async () => {
      const core = fakePaymentCore();
      const p = await core.reserve(core.batch().txId);
      core.facilitator.script = ["mined-without"];
      expect((await core.settler.settleOutcome(p)).kind).to.equal("pending");
      expect(await core.stores.payments.get(p.id)).to.deep.include({ status: "reserved", settleTxHash: null });
    });

    it("refused for good once sent (the authorization cannot be used): released, the payer's failure", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const p = await core.reserve(b.txId);
      core.facilitator.script = ["refused"];
      const outcome = await core.settler.settleOutcome(p);
      expect(outcome.kind).to.equal("released");
      expect(await core.stores.payments.get(p.id)).to.deep.include({ status: "released", payload: null });
      expect(core.settler.failures).to.deep.equal({ ours: 0, payer: 1 });
      expect(core.stores.events).to.deep.equal([{ type: "payment.released", txId: b.txId }]);
    });

    it("a payment another settler claimed is left to it; a released one stays released, never settled", async () => {
      const core = fakePaymentCore();
      const claimed = await core.reserve(null);
      await core.stores.payments.claimForSettlement(claimed.id);
      const outcome = await core.settler.settleOutcome((await core.stores.payments.get(claimed.id))!);
      expect(outcome).to.deep.equal({ kind: "pending", reason: "another settler has it" });
      const released = await core.reserve(null);
      await core.settler.release(released.id, "the operation never ran");
      expect(await core.settler.settleOutcome((await core.stores.payments.get(released.id))!)).to.deep.equal({
        kind: "released",
        reason: "the operation never ran",
      });
      expect(core.facilitator.asked).to.deep.equal([]);
    });

    it("a settled payment is never released; a release of an unknown payment changes nothing", async () => {
      const core = fakePaymentCore();
      const p = await core.reserve(null);
      await core.settler.settleOutcome(p);
      await core.settler.release(p.id, "too late", true);
      expect(await core.statusOf(p.id)).to.equal("settled");
      await core.settler.release("00000000-0000-4000-8000-000000000000", "nothing");
    });
  });

  describe("a batch's payments through the runner's port (RunPayments)", () => {
    it("before the first broadcast: an operation that would revert is refused before its payment is settled", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const p = await core.reserve(b.txId);
      const asked: (string | undefined)[] = [];
      const decision = await core.port.beforeBroadcast(b, {
        canCarry: false,
        wouldRevert: (payer) => {
          asked.push(payer);
          return Promise.resolve("execution reverted: not whitelisted");
        },
      });
      expect(decision).to.deep.equal({ kind: "refused", reason: "execution reverted: not whitelisted" });
      expect(asked).to.deep.equal([p.payer]);
      expect(await core.statusOf(p.id)).to.equal("reserved");
      expect(core.facilitator.asked).to.deep.equal([]);
    });

    it("before the first broadcast: settled first, then go with its payer; a failure of ours waits; a dead authorization refuses", async () => {
      const core = fakePaymentCore();
      const go = core.batch();
      const paid = await core.reserve(go.txId);
      expect(await core.port.beforeBroadcast(go, { canCarry: false, wouldRevert: noRevert })).to.deep.equal({
        kind: "go",
        payer: paid.payer,
      });
      expect(await core.statusOf(paid.id)).to.equal("settled");
      // Once settled, nothing is left to settle first: go, and the wouldRevert check is not asked again.
      const again = await core.port.beforeBroadcast(go, {
        canCarry: false,
        wouldRevert: () => Promise.reject(new Error("not asked")),
      });
      expect(again).to.deep.equal({ kind: "go", carried: undefined, payer: paid.payer });

      const waits = core.batch();
      await core.reserve(waits.txId);
      core.facilitator.script = ["no-gas"];
      expect((await core.port.beforeBroadcast(waits, { canCarry: false, wouldRevert: noRevert })).kind).to.equal(
        "waiting",
      );

      const refused = core.batch();
      const dead = await core.reserve(refused.txId);
      core.facilitator.script = ["refused"];
      const decision = await core.port.beforeBroadcast(refused, { canCarry: false, wouldRevert: noRevert });
      expect(decision.kind).to.equal("refused");
      expect(await core.statusOf(dead.id)).to.equal("released");
    });

    it("a released payment refuses the batch before anything else is asked", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const p = await core.reserve(b.txId);
      await core.settler.release(p.id, "the authorization expired");
      const decision = await core.port.beforeBroadcast(b, { canCarry: false, wouldRevert: noRevert });
      // Released (its authorization expired while the batch waited, say): the batch's work is not done unpaid.
      expect(decision).to.deep.equal({
        kind: "refused",
        reason: "the payment was released: the authorization expired",
      });
    });

    it("a share paid again after its first payment was released goes with the later payment", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const first = await core.reserve(b.txId);
      await core.settler.release(first.id, "send refused: the body named another hash");
      const again = await core.reserve(b.txId);
      const decision = await core.port.beforeBroadcast(b, { canCarry: false, wouldRevert: noRevert });
      expect(decision).to.deep.equal({ kind: "go", payer: again.payer });
      expect(await core.statusOf(again.id)).to.equal("settled");
    });

    it("rejected for a failure of ours: its reserved payments released in the end's transaction, its settled ones owed back once", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const settled = await core.reserve(b.txId, { subject: `prepare:${b.txId}` });
      await core.settler.settleOutcome(settled);
      const reserved = await core.reserve(b.txId);
      core.rejected(b);
      await core.port.releaseReservedInSameTransaction(NO_SQL, b.txId, "the relayer had no gas");
      const owed = await core.port.owedBackInSameTransaction(NO_SQL, b.txId, "the relayer had no gas");
      expect(owed).to.equal(1);
      expect(await core.port.owedBackInSameTransaction(NO_SQL, b.txId, "again")).to.equal(0);
      await core.port.afterRun({
        kind: "rejected",
        txId: b.txId,
        reason: "the relayer had no gas",
        owed,
        released: true,
      });
      expect(await core.stores.payments.get(reserved.id)).to.deep.include({
        status: "released",
        releaseReason: "the operation failed: the relayer had no gas",
      });
      expect(await core.statusOf(settled.id)).to.equal("settled");
      expect(await core.stores.refunds.get(settled.id)).to.deep.include({
        status: "owed",
        reason: "the relayer had no gas",
      });
      expect(core.refunder.outcomes.owed).to.equal(1);
      expect(core.stores.events.map((e) => e.type)).to.deep.equal([
        "payment.settled",
        "payment.released",
        "payment.refund_owed",
      ]);
    });

    it("rejected for the payer's failure: nothing is owed back (its settled payment stays charged), its reserved one released after the run", async () => {
      const core = fakePaymentCore();
      const b = core.batch();
      const settled = await core.reserve(b.txId, { subject: `prepare:${b.txId}` });
      await core.settler.settleOutcome(settled);
      const reserved = await core.reserve(b.txId);
      core.rejected(b);
      await core.port.afterRun({ kind: "rejected", txId: b.txId, reason: "execution reverted", owed: 0 });
      expect(await core.statusOf(reserved.id)).to.equal("released");
      expect(await core.statusOf(settled.id)).to.equal("settled");
      expect(await core.stores.refunds.forBatch(b.txId)).to.deep.equal([]);
    });

    it("a refund is owed only once the batch stands rejected, and is refunded once (by the operator who paid it)", async () => {
      const core = fakePaymentCore();
      const b = core.batch("success");
      const p = await core.reserve(b.txId);
      await core.settler.settleOutcome(p);
      expect(await core.port.owedBackInSameTransaction(NO_SQL, b.txId, "ours")).to.equal(0);
      core.rejected(b);
      expect(await core.port.owedBackInSameTransaction(NO_SQL, b.txId, "ours")).to.equal(1);
      const hash = "0x" + "ab".repeat(32);
      expect(await core.stores.refunds.markPaidBy(p.id, "ops@example.com", hash, 9)).to.deep.include({
        status: "refunded",
      });
      expect(await core.stores.refunds.markPaidBy(p.id, "ops@example.com", hash, 9)).to.equal(undefined);
    });

    it("a confirmed batch's payments still reserved are settled after the run; one settled already is left alone", async () => {
      const core = fakePaymentCore();
      const b = core.batch("success");
      const [first, second] = [
        await core.reserve(b.txId),
        await core.reserve(b.txId, { subject: `prepare:${b.txId}` }),
      ];
      await core.settler.settleOutcome(second);
      await core.port.afterRun({ kind: "success", batch: b, receipts: [], settledHere: [] });
      expect(await core.statusOf(first.id)).to.equal("settled");
      expect(core.facilitator.asked).to.deep.equal([second.id, first.id]);
    });

    it("a deep reorg of a payment's own settlement: settling again, its stored transaction awaited again, settled; answers its batch", async () => {
      const core = fakePaymentCore();
      const b = core.batch("success");
      const p = await core.reserve(b.txId);
      await core.settler.settleOutcome(p);
      expect(await core.port.afterSettlementReorg(p.id)).to.equal(b.txId);
      for (let i = 0; i < 50 && (await core.statusOf(p.id)) !== "settled"; i++)
        await new Promise((resolve) => setImmediate(resolve));
      expect(await core.statusOf(p.id)).to.equal("settled");
      expect(core.facilitator.awaited).to.deep.equal([p.id]);
    });
  });

  describe("the payment a relayed transaction carries, known at the batch's end (RunPayments.knownAtEnd)", () => {
    /** A core whose facilitator settles inside the operation, and a reserved payment its transaction can carry. */
    const carriedSetup = async () => {
      const core = fakePaymentCore();
      core.facilitator.settlesInOperation = true;
      const b = core.batch("sending", { executionMode: "service-relayed" });
      const payer = "0x" + "d0".repeat(20);
      const p = await core.reserve(b.txId, {
        payer,
        payload: {
          x402Version: 2,
          payload: {
            authorization: {
              from: payer,
              to: "0x" + "b0".repeat(20),
              value: "10000",
              validAfter: "0",
              validBefore: String(Math.floor(Date.now() / 1000) + 300),
              nonce: "0x" + "e0".repeat(32),
            },
            signature: "0x" + "11".repeat(32) + "22".repeat(32) + "1b",
          },
        },
      });
      const decision = await core.port.beforeBroadcast(b, { canCarry: true, wouldRevert: noRevert });
      if (decision.kind !== "go" || !decision.carried) throw new Error("the payment was not carried");
      return { core, p, carried: decision.carried };
    };
    const receiptOf = (hash: string) => ({ hash }) as TransactionReceipt;
    const HASH = "0x" + "ab".repeat(32);

    it("bound once and mined in that transaction: the payment as the store then holds it, no read", async () => {
      const { core, p, carried } = await carriedSetup();
      expect(carried.recorded()).to.equal(undefined); // nothing recorded yet
      expect(await carried.bindInSameTransaction(NO_SQL)).to.equal(true);
      await carried.recordHashInSameTransaction(NO_SQL, HASH.toUpperCase().replace("0X", "0x"));
      const known = core.port.knownAtEnd(carried, receiptOf(HASH));
      expect(known).to.deep.equal([await core.stores.payments.get(p.id)]);
      expect(known![0]).to.deep.include({ status: "settling", settleInOperation: true, settleTxHash: HASH });
    });

    it("another transaction mined (a replacement), a second hash recorded, no receipt or nothing carried: read back", async () => {
      const { core, carried } = await carriedSetup();
      await carried.recordHashInSameTransaction(NO_SQL, HASH);
      expect(core.port.knownAtEnd(carried, receiptOf("0x" + "cd".repeat(32)))).to.equal(undefined);
      expect(core.port.knownAtEnd(carried, undefined)).to.equal(undefined);
      expect(core.port.knownAtEnd(undefined, receiptOf(HASH))).to.equal(undefined);
      await carried.recordHashInSameTransaction(NO_SQL, "0x" + "cd".repeat(32));
      expect(core.port.knownAtEnd(carried, receiptOf(HASH))).to.equal(undefined);
      expect(core.port.knownAtEnd(carried, receiptOf("0x" + "cd".repeat(32)))).to.equal(undefined);
    });
  });

  describe("recovery after a restart (PaymentSettler.recover)", () => {
    it("a payment whose operation failed is released; one whose operation never ran is released; a successful one is settled", async () => {
      const core = fakePaymentCore();
      const failed = core.batch("rejected");
      const done = core.batch("success");
      const [a, b, c] = [await core.reserve(failed.txId), await core.reserve(null), await core.reserve(done.txId)];
      await core.settler.recover();
      for (let i = 0; i < 50 && (await core.statusOf(c.id)) !== "settled"; i++)
        await new Promise((resolve) => setImmediate(resolve));
      expect(await core.stores.payments.get(a.id)).to.deep.include({
        status: "released",
        releaseReason: "the operation failed",
      });
      expect(await core.stores.payments.get(b.id)).to.deep.include({
        status: "released",
        releaseReason: "the operation never ran",
      });
      expect(await core.statusOf(c.id)).to.equal("settled");
    });
  });
});
