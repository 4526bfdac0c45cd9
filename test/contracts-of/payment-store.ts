import { randomBytes, randomUUID } from "node:crypto";
import { expect } from "chai";
import { Sealer } from "../../service/crypto/sealed";
import { Batches } from "../../service/store/batches";
import type { Db, Queryable } from "../../service/store/db";
import { PaymentRefunds, type RefundStore } from "../../service/store/payment-refunds";
import {
  PaymentConflict,
  Payments,
  PaymentShortfall,
  type NewPayment,
  type PaymentStore,
} from "../../service/store/payments";

/** One implementation of the payment stores, as the contract drives it. */
export interface PaymentStoresUnderTest {
  payments: PaymentStore;
  refunds: RefundStore;
  /** What the `q` of a method that writes in the caller's transaction is given (outside any transaction here). */
  q: Queryable;
  /** A batch `txId` exists (payments name it) with that status. */
  batch(txId: string, status: "prepared" | "rejected"): Promise<void>;
  /** The payment.* events written for batch `txId`, oldest first. */
  events(txId: string): Promise<string[]>;
  /** The payment last changed `ms` ago (a claim left behind by a crash). */
  backdate(paymentId: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The contract of PaymentStore and RefundStore (service/store/payments.ts, payment-refunds.ts): every case runs
 * against each implementation, the database's and the in-memory fake (test/fakes/payment-stores.ts), so that a unit
 * test on the fake proves what the service would do.
 */
export function describePaymentStoreContract(label: string, open: () => Promise<PaymentStoresUnderTest>): void {
  describe(`payment stores' contract: ${label}`, function () {
    this.timeout(60_000);
    let s: PaymentStoresUnderTest;
    before(async () => (s = await open()));
    after(() => s?.close());

    const asset = "0x" + "aA".repeat(20);
    const newPayer = () => "0x" + randomBytes(20).toString("hex").toUpperCase().replace("0X", "0x");
    const newBatch = async (status: "prepared" | "rejected" = "prepared") => {
      const txId = randomBytes(16).toString("hex");
      await s.batch(txId, status);
      return txId;
    };
    const payment = (over: Partial<NewPayment> = {}): NewPayment => ({
      subject: `send:${randomUUID()}`,
      route: "POST /send-transactions",
      txId: null,
      network: "eip155:84532",
      asset,
      payTo: "0x" + "B".repeat(40),
      amount: "10000",
      payer: newPayer(),
      authorizationNonce: "0x" + randomBytes(32).toString("hex").toUpperCase().replace("0X", "0x"),
      validBefore: Math.floor(Date.now() / 1000) + 300,
      payload: { payload: { authorization: { value: "10000" } } },
      requirements: { scheme: "exact", amount: "10000" },
      ...over,
    });
    const reserve = (over: Partial<NewPayment> = {}) => s.payments.reserve(payment(over));
    const statusOf = async (id: string) => (await s.payments.get(id))?.status;
    const hash = () => "0x" + randomBytes(32).toString("hex").toUpperCase().replace("0X", "0x");

    describe("reserve", () => {
      it("holds the payment reserved, addresses and nonce lower-cased, nothing settled; get and forBatch read it back", async () => {
        const txId = await newBatch();
        const input = payment({ txId });
        const p = await s.payments.reserve(input);
        expect(p).to.deep.include({
          subject: input.subject,
          txId,
          status: "reserved",
          payer: input.payer.toLowerCase(),
          asset: asset.toLowerCase(),
          payTo: input.payTo.toLowerCase(),
          authorizationNonce: input.authorizationNonce.toLowerCase(),
          amount: "10000",
          validBefore: input.validBefore,
          settleTxRaw: null,
          settleTxHash: null,
          settlement: null,
          releaseReason: null,
          settleInOperation: false,
        });
        expect(p.settleTxReplaced).to.deep.equal([]);
        expect(p.payload).to.deep.equal(input.payload);
        expect(p.requirements).to.deep.equal(input.requirements);
        const second = await reserve({ txId });
        expect((await s.payments.get(p.id))!.payload).to.deep.equal(input.payload);
        expect((await s.payments.forBatch(txId)).map((x) => x.id)).to.deep.equal([p.id, second.id]);
        expect(await s.payments.get(randomUUID())).to.equal(undefined);
      });

      it("refuses an authorization used before (same payer and nonce, any case)", async () => {
        const first = await reserve();
        const reused = payment({
          payer: first.payer.toUpperCase().replace("0X", "0x"),
          authorizationNonce: first.authorizationNonce,
        });
        const again = await s.payments.reserve(reused, 1_000_000n).catch((e: unknown) => e);
        expect(again).to.be.instanceOf(PaymentConflict);
        expect((again as PaymentConflict).reason).to.equal("authorization_used");
      });

      it("refuses a second open payment of one subject; once the first is released, a new one is taken", async () => {
        const subject = `send:${randomUUID()}`;
        const first = await reserve({ subject });
        const second = await reserve({ subject }).catch((e: unknown) => e);
        expect(second).to.be.instanceOf(PaymentConflict);
        expect((second as PaymentConflict).reason).to.equal("subject_paid");
        expect(await s.payments.markReleased(first.id, "the operation never ran")).to.equal(true);
        expect((await reserve({ subject })).status).to.equal("reserved");
      });

      it("takes a payment only if the balance covers it with the payer's open ones (reserved and settling)", async () => {
        const payer = newPayer();
        const first = await s.payments.reserve(payment({ payer }), 25_000n);
        await s.payments.claimForSettlement(first.id);
        await s.payments.reserve(payment({ payer }), 25_000n);
        expect(await s.payments.openAmount(payer.toLowerCase(), asset)).to.equal(20_000n);
        const short = await s.payments.reserve(payment({ payer }), 25_000n).catch((e: unknown) => e);
        expect(short).to.be.instanceOf(PaymentShortfall);
        expect(short).to.deep.include({ open: 20_000n, balance: 25_000n });
        // Without a balance read, a payer who owes nothing else is taken; one who does falls short.
        const unread = await s.payments.reserve(payment({ payer })).catch((e: unknown) => e);
        expect(unread).to.be.instanceOf(PaymentShortfall);
        expect((unread as PaymentShortfall).balance).to.equal(undefined);
        await s.payments.markSettled(first.id, { transaction: hash() });
        expect(await s.payments.openAmount(payer, asset.toUpperCase().replace("0X", "0x"))).to.equal(10_000n);
      });
    });

    describe("settlement of its own", () => {
      it("one claim at a time: reserved → settling; unclaimed before anything was stored, claimed again", async () => {
        const p = await reserve();
        expect(await s.payments.claimForSettlement(p.id)).to.equal(true);
        expect(await statusOf(p.id)).to.equal("settling");
        expect(await s.payments.claimForSettlement(p.id)).to.equal(false);
        await s.payments.unclaim(p.id);
        expect(await statusOf(p.id)).to.equal("reserved");
        expect(await s.payments.claimForSettlement(p.id)).to.equal(true);
      });

      it("a claim left without a stored transaction is retaken once old, not before", async () => {
        const p = await reserve();
        await s.payments.claimForSettlement(p.id);
        await s.backdate(p.id, 60_000);
        expect(await s.payments.claimForSettlement(p.id)).to.equal(false);
        await s.backdate(p.id, 180_000);
        expect(await s.payments.claimForSettlement(p.id)).to.equal(true);
      });

      it("a stored settlement transaction is kept by unclaim; unmarkSettling puts the payment back to reserved without it", async () => {
        const p = await reserve();
        await s.payments.claimForSettlement(p.id);
        const tx = hash();
        await s.payments.markSettling(s.q, p.id, "0x02f8", tx, { from: newPayer(), nonce: 4 });
        expect(await s.payments.get(p.id)).to.deep.include({
          status: "settling",
          settleTxHash: tx.toLowerCase(),
          settleTxRaw: "0x02f8",
        });
        await s.payments.unclaim(p.id);
        expect(await statusOf(p.id)).to.equal("settling");
        await s.backdate(p.id, 180_000);
        expect(await s.payments.claimForSettlement(p.id)).to.equal(false);
        await s.payments.unmarkSettling(p.id);
        expect(await s.payments.get(p.id)).to.deep.include({
          status: "reserved",
          settleTxHash: null,
          settleTxRaw: null,
        });
      });

      it("settled once: payload and transaction dropped, payment.settled written once; a second settle changes nothing", async () => {
        const txId = await newBatch();
        const p = await reserve({ txId });
        await s.payments.claimForSettlement(p.id);
        await s.payments.markSettling(s.q, p.id, "0x02f8", hash());
        const settlement = { success: true, transaction: hash() };
        const settled = await s.payments.markSettled(p.id, settlement);
        expect(settled).to.deep.include({ status: "settled", payload: null, settleTxRaw: null, settlement });
        expect(await s.payments.markSettled(p.id, { transaction: hash() })).to.equal(undefined);
        expect((await s.payments.get(p.id))!.settlement).to.deep.equal(settlement);
        expect(await s.events(txId)).to.deep.equal(["payment.settled"]);
      });

      it("released: reserved, or settling before any transaction was stored; with one stored, only when its settlement failed", async () => {
        const txId = await newBatch();
        const reserved = await reserve({ txId });
        expect(await s.payments.markReleased(reserved.id, "expired")).to.equal(true);
        expect(await s.payments.get(reserved.id)).to.deep.include({
          status: "released",
          releaseReason: "expired",
          payload: null,
        });
        expect(await s.payments.markReleased(reserved.id, "again")).to.equal(false);
        const sent = await reserve({ txId });
        await s.payments.claimForSettlement(sent.id);
        await s.payments.markSettling(s.q, sent.id, "0x02f8", hash());
        expect(await s.payments.markReleased(sent.id, "in flight")).to.equal(false);
        expect(await s.payments.markReleased(sent.id, "reverted", true)).to.equal(true);
        expect(await s.payments.markSettled(sent.id, { transaction: hash() })).to.equal(undefined);
        expect(await s.events(txId)).to.deep.equal(["payment.released", "payment.released"]);
      });

      it("a settled payment is never released; a deep reorg makes it settling again (unsettle), and only a settled one", async () => {
        const settled = await reserve();
        await s.payments.markSettled(settled.id, { transaction: hash() });
        expect(await s.payments.markReleased(settled.id, "late", true)).to.equal(false);
        await s.payments.unsettle(settled.id);
        expect(await statusOf(settled.id)).to.equal("settling");
        const reserved = await reserve();
        await s.payments.unsettle(reserved.id);
        expect(await statusOf(reserved.id)).to.equal("reserved");
      });

      it("unfinished: reserved and settling ones, oldest first, only those quiet long enough", async () => {
        const [a, b, c, d] = [await reserve(), await reserve(), await reserve(), await reserve()];
        await s.payments.claimForSettlement(b.id);
        await s.payments.markSettled(c.id, { transaction: hash() });
        await s.payments.markReleased(d.id, "gone");
        const ids = (await s.payments.unfinished()).map((p) => p.id);
        expect(ids.filter((id) => [a.id, b.id, c.id, d.id].includes(id))).to.deep.equal([a.id, b.id]);
        await s.backdate(a.id, 600_000);
        const quiet = (await s.payments.unfinished(300_000)).map((p) => p.id);
        expect(quiet).to.include(a.id);
        expect(quiet).to.not.include(b.id);
      });
    });

    describe("settled with its operation", () => {
      it("bound to the operation only while reserved, written once with its hash; then no settler may claim it, and a re-signed transaction keeps it", async () => {
        const p = await reserve();
        expect(await s.payments.bindToOperation(s.q, p.id)).to.equal(true);
        const tx = hash();
        await s.payments.setOperationHash(s.q, p.id, tx);
        expect(await s.payments.get(p.id)).to.deep.include({
          status: "settling",
          settleInOperation: true,
          settleTxHash: tx.toLowerCase(),
        });
        expect(await s.payments.bindToOperation(s.q, p.id)).to.equal(false);
        expect(await s.payments.claimForSettlement(p.id)).to.equal(false);
        expect(await s.payments.stillBoundToOperation(s.q, p.id)).to.equal(true);
        const again = hash();
        await s.payments.setOperationHash(s.q, p.id, again);
        expect((await s.payments.get(p.id))!.settleTxHash).to.equal(again.toLowerCase());
        await s.payments.unclaim(p.id);
        await s.payments.unmarkSettling(p.id);
        expect(await statusOf(p.id)).to.equal("settling");
        const other = await reserve();
        expect(await s.payments.stillBoundToOperation(s.q, other.id)).to.equal(false);
        await s.payments.markReleased(other.id, "gone");
        await s.payments.setOperationHash(s.q, other.id, hash());
        expect(await s.payments.get(other.id)).to.deep.include({ status: "released", settleTxHash: null });
      });

      it("settleWithin settles it with the batch's end and answers it settled; released with its reverted operation, it names no transaction", async () => {
        const txId = await newBatch();
        const carried = await reserve({ txId });
        await s.payments.bindToOperation(s.q, carried.id);
        await s.payments.setOperationHash(s.q, carried.id, hash());
        const bound = (await s.payments.get(carried.id))!;
        const settlement = { success: true, transaction: bound.settleTxHash! };
        const answered = await s.payments.settleWithin(s.q, bound, settlement, null);
        expect(answered).to.deep.include({ id: bound.id, status: "settled", payload: null, settlement });
        expect(await statusOf(bound.id)).to.equal("settled");
        await s.payments.settleWithin(s.q, bound, settlement, null);
        expect(await s.events(txId)).to.deep.equal(["payment.settled"]);

        const reverted = await reserve({ txId: await newBatch() });
        await s.payments.bindToOperation(s.q, reverted.id);
        await s.payments.setOperationHash(s.q, reverted.id, hash());
        expect(await s.payments.markReleased(reverted.id, "in flight")).to.equal(false);
        expect(await s.payments.markReleased(reverted.id, "the operation reverted", true)).to.equal(true);
        expect(await s.payments.get(reverted.id)).to.deep.include({ status: "released", settleTxHash: null });
      });

      it("releaseReservedWithin releases the batch's reserved payments only", async () => {
        const txId = await newBatch();
        const [reserved, bound, elsewhere] = [await reserve({ txId }), await reserve({ txId }), await reserve()];
        await s.payments.bindToOperation(s.q, bound.id);
        await s.payments.setOperationHash(s.q, bound.id, hash());
        await s.payments.releaseReservedWithin(s.q, txId, "the operation failed: nothing sent");
        expect(await s.payments.get(reserved.id)).to.deep.include({
          status: "released",
          releaseReason: "the operation failed: nothing sent",
        });
        expect(await statusOf(bound.id)).to.equal("settling");
        expect(await statusOf(elsewhere.id)).to.equal("reserved");
        expect(await s.events(txId)).to.deep.equal(["payment.released"]);
      });
    });

    describe("refunds", () => {
      it("owed once, for a rejected batch's payments settled on their own; none for one still running", async () => {
        const txId = await newBatch("rejected");
        const [settled, inOperation, reserved] = [
          await reserve({ txId }),
          await reserve({ txId }),
          await reserve({ txId }),
        ];
        await s.payments.markSettled(settled.id, { transaction: hash() });
        await s.payments.bindToOperation(s.q, inOperation.id);
        await s.payments.setOperationHash(s.q, inOperation.id, hash());
        await s.payments.settleWithin(s.q, (await s.payments.get(inOperation.id))!, { transaction: hash() }, null);
        expect(await s.refunds.recordOwedWithin(s.q, txId, "the relayer had no gas")).to.equal(1);
        expect(await s.refunds.recordOwedWithin(s.q, txId, "again")).to.equal(0);
        const [refund] = await s.refunds.forBatch(txId);
        expect(refund).to.deep.include({
          paymentId: settled.id,
          txId,
          status: "owed",
          amount: "10000",
          payer: settled.payer,
          reason: "the relayer had no gas",
          chainId: 84532,
          attempts: 0,
          txHash: null,
          refundedAt: null,
        });
        expect(await s.refunds.get(reserved.id)).to.equal(undefined);
        expect((await s.events(txId)).filter((e) => e.startsWith("payment.refund"))).to.deep.equal([
          "payment.refund_owed",
        ]);

        const running = await newBatch("prepared");
        const paid = await reserve({ txId: running });
        await s.payments.markSettled(paid.id, { transaction: hash() });
        expect(await s.refunds.recordOwedWithin(s.q, running, "no")).to.equal(0);
      });

      it("an owed refund is postponed while it cannot be sent, and refunded once, by the operator who paid it", async () => {
        const txId = await newBatch("rejected");
        const p = await reserve({ txId });
        await s.payments.markSettled(p.id, { transaction: hash() });
        await s.refunds.recordOwedWithin(s.q, txId, "ours");
        await s.refunds.postpone(p.id, "the wallet lacks the asset", 60_000);
        expect(await s.refunds.get(p.id)).to.deep.include({
          status: "owed",
          attempts: 1,
          lastError: "the wallet lacks the asset",
        });
        expect(await s.refunds.sending("eip155:84532")).to.deep.equal([]);
        const tx = hash();
        const refunded = await s.refunds.markPaidBy(p.id, "ops@example.com", tx, 12);
        expect(refunded).to.deep.include({
          status: "refunded",
          txHash: tx.toLowerCase(),
          blockNumber: 12,
          refundedBy: "ops@example.com",
          lastError: null,
        });
        expect(refunded!.refundedAt).to.be.a("string");
        expect(await s.refunds.markPaidBy(p.id, "ops@example.com", hash(), 13)).to.equal(undefined);
        await s.refunds.postpone(p.id, "late", 1);
        expect((await s.refunds.get(p.id))!.attempts).to.equal(1);
        expect((await s.events(txId)).filter((e) => e.startsWith("payment.refund"))).to.deep.equal([
          "payment.refund_owed",
          "payment.refunded",
        ]);
      });
    });
  });
}

/** The database's payment stores on `db` (migrated), as the contract drives them; `close` ends the database. */
export function databasePaymentStores(db: Db, close: () => Promise<void>): PaymentStoresUnderTest {
  const sealer = new Sealer("s".repeat(64));
  const batches = new Batches(db, sealer);
  return {
    payments: new Payments(db, sealer),
    refunds: new PaymentRefunds(db, sealer),
    q: db,
    async batch(txId, status) {
      await batches.create({
        txId,
        chainId: 84532,
        method: "whitelist",
        executionMode: "service-relayed",
        signer: "0x" + "1".repeat(40),
        apiKeyId: null,
        body: {},
        plan: {},
        info: {},
        transactions: [],
      });
      if (status === "rejected") await db.query("UPDATE batches SET status = 'rejected' WHERE tx_id = $1", [txId]);
    },
    events: async (txId) =>
      (
        await db.query<{ type: string }>(
          "SELECT type FROM events WHERE tx_id = $1 AND type LIKE 'payment.%' ORDER BY id",
          [txId],
        )
      ).map((r) => r.type),
    backdate: async (id, ms) => {
      await db.query(
        "UPDATE payments SET updated_at = now() - make_interval(secs => $2::float8 / 1000) WHERE id = $1",
        [id, ms],
      );
    },
    close,
  };
}
