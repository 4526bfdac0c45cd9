import { randomUUID } from "node:crypto";
import type { BatchStatus } from "../../service/model/batch";
import type { Queryable } from "../../service/store/db";
import type { PaymentEventType } from "../../service/store/payment-events";
import type { RefundRecord, RefundStore } from "../../service/store/payment-refunds";
import {
  PaymentConflict,
  PaymentShortfall,
  type NewPayment,
  type PaymentRecord,
  type PaymentStore,
  type Settlement,
} from "../../service/store/payments";

/** The `q` a fake store is handed where the real one writes in the caller's transaction: any SQL through it fails. */
export const NO_SQL: Queryable = {
  query: () => Promise.reject(new Error("an in-memory fake runs no SQL")),
  write: () => Promise.reject(new Error("an in-memory fake runs no SQL")),
  finalQuery: () => Promise.reject(new Error("an in-memory fake runs no SQL")),
} as unknown as Queryable;

/**
 * In-memory payments and refunds (service/store/payments.ts PaymentStore, payment-refunds.ts RefundStore), sharing
 * one state: the payments, their refunds, the status of the batches they pay for, and the events the real stores
 * write to the outbox (type and txId only). The `q` of a method that writes inside the caller's transaction is
 * ignored: a write here is at once and never rolled back. test/contracts-of/payment-store.ts holds these to the
 * database's behaviour.
 */
export class FakePaymentStores {
  readonly payments: FakePayments;
  readonly refunds: FakeRefunds;
  /** The batches' status, as the refunds read it (a refund is owed only for a rejected batch). */
  readonly batches = new Map<string, BatchStatus>();
  /** payment.* events as the outbox would hold them, oldest first. */
  readonly events: { type: PaymentEventType; txId: string }[] = [];

  constructor() {
    this.payments = new FakePayments(this);
    this.refunds = new FakeRefunds(this);
  }

  /** An event of a batch's payment (a payment of a paid read belongs to no batch: none, as paymentEvent decides). */
  emit(type: PaymentEventType, payment: PaymentRecord): void {
    if (payment.txId) this.events.push({ type, txId: payment.txId });
  }
}

interface Row {
  record: PaymentRecord;
  created: number;
  updatedAt: number;
}

/** How long a claim without a stored transaction holds before another settler may retake it (Payments: 2 minutes). */
const STALE_CLAIM_MS = 120_000;

/** The payment as a reader gets it: a copy, so that a caller's change never reaches the store. */
const copy = (p: PaymentRecord): PaymentRecord => structuredClone(p);

export class FakePayments implements PaymentStore {
  private readonly rows = new Map<string, Row>();
  private created = 0;

  constructor(private readonly stores: FakePaymentStores) {}

  /** The clock the rows are stamped with (a test moves it to age a claim). */
  now: () => number = () => Date.now();

  /** The payment as if it last changed `ms` ago. */
  backdate(id: string, ms: number): void {
    const row = this.rows.get(id);
    if (row) row.updatedAt = this.now() - ms;
  }

  private row(id: string): Row | undefined {
    return this.rows.get(id);
  }

  private touch(row: Row, change: Partial<PaymentRecord>): PaymentRecord {
    row.record = { ...row.record, ...change };
    row.updatedAt = this.now();
    return copy(row.record);
  }

  /** What an ended payment stops holding (Payments' ENDED_CLEARS). */
  private static ended(p: PaymentRecord): Partial<PaymentRecord> {
    return {
      payload: null,
      settleTxRaw: null,
      settleTxReplaced: p.settleTxReplaced.map((e) => ({ hash: e.hash, raw: null as unknown as string })),
    };
  }

  private open(payer: string, asset: string): bigint {
    let total = 0n;
    for (const { record: p } of this.rows.values())
      if (p.payer === payer && p.asset === asset && (p.status === "reserved" || p.status === "settling"))
        total += BigInt(p.amount);
    return total;
  }

  reserve(p: NewPayment, balance?: bigint): Promise<PaymentRecord> {
    const [payer, asset] = [p.payer.toLowerCase(), p.asset.toLowerCase()];
    const nonce = p.authorizationNonce.toLowerCase();
    const open = this.open(payer, asset);
    if (open + BigInt(p.amount) > (balance ?? BigInt(p.amount)))
      return Promise.reject(new PaymentShortfall(open, balance));
    for (const { record } of this.rows.values()) {
      if (record.payer === payer && record.authorizationNonce === nonce)
        return Promise.reject(new PaymentConflict("authorization_used"));
      if (record.subject === p.subject && record.status !== "released")
        return Promise.reject(new PaymentConflict("subject_paid"));
    }
    const record: PaymentRecord = {
      ...structuredClone(p),
      id: randomUUID(),
      payer,
      asset,
      payTo: p.payTo.toLowerCase(),
      authorizationNonce: nonce,
      status: "reserved",
      settleTxRaw: null,
      settleTxHash: null,
      settleTxReplaced: [],
      settlement: null,
      releaseReason: null,
      settleInOperation: false,
    };
    this.rows.set(record.id, { record, created: this.created++, updatedAt: this.now() });
    return Promise.resolve(copy(record));
  }

  openAmount(payer: string, asset: string): Promise<bigint> {
    return Promise.resolve(this.open(payer.toLowerCase(), asset.toLowerCase()));
  }

  get(id: string): Promise<PaymentRecord | undefined> {
    const row = this.row(id);
    return Promise.resolve(row && copy(row.record));
  }

  private sorted(keep: (p: PaymentRecord, row: Row) => boolean): PaymentRecord[] {
    return [...this.rows.values()]
      .filter((row) => keep(row.record, row))
      .sort((a, b) => a.created - b.created)
      .map((row) => copy(row.record));
  }

  forBatch(txId: string): Promise<PaymentRecord[]> {
    return Promise.resolve(this.sorted((p) => p.txId === txId));
  }

  unfinished(quietForMs = 0): Promise<PaymentRecord[]> {
    const before = this.now() - quietForMs;
    return Promise.resolve(
      this.sorted((p, row) => (p.status === "reserved" || p.status === "settling") && row.updatedAt <= before),
    );
  }

  claimForSettlement(id: string): Promise<boolean> {
    const row = this.row(id);
    const p = row?.record;
    const stale = row !== undefined && row.updatedAt < this.now() - STALE_CLAIM_MS;
    if (!row || !p || p.settleInOperation) return Promise.resolve(false);
    if (p.status !== "reserved" && !(p.status === "settling" && p.settleTxHash === null && stale))
      return Promise.resolve(false);
    this.touch(row, { status: "settling" });
    return Promise.resolve(true);
  }

  // The real store locks the row in bind / stillBound and writes it once in setOperationHash, in one transaction.
  bindToOperation(_q: unknown, id: string): Promise<boolean> {
    return Promise.resolve(this.row(id)?.record.status === "reserved");
  }

  stillBoundToOperation(_q: unknown, id: string): Promise<boolean> {
    const record = this.row(id)?.record;
    return Promise.resolve(record?.status === "settling" && record.settleInOperation === true);
  }

  setOperationHash(_q: unknown, id: string, hash: string): Promise<void> {
    const row = this.row(id);
    const bindable =
      row?.record.status === "reserved" || (row?.record.status === "settling" && row.record.settleInOperation);
    if (row && bindable)
      this.touch(row, { status: "settling", settleInOperation: true, settleTxHash: hash.toLowerCase() });
    return Promise.resolve();
  }

  markSettling(_q: unknown, id: string, raw: string, hash: string): Promise<void> {
    const row = this.row(id);
    if (row) this.touch(row, { status: "settling", settleTxRaw: raw, settleTxHash: hash.toLowerCase() });
    return Promise.resolve();
  }

  unmarkSettling(id: string): Promise<void> {
    const row = this.row(id);
    if (row?.record.status === "settling" && !row.record.settleInOperation)
      this.touch(row, { status: "reserved", settleTxRaw: null, settleTxHash: null, settleTxReplaced: [] });
    return Promise.resolve();
  }

  unclaim(id: string): Promise<void> {
    const row = this.row(id);
    const p = row?.record;
    if (row && p?.status === "settling" && p.settleTxHash === null && !p.settleInOperation)
      this.touch(row, { status: "reserved" });
    return Promise.resolve();
  }

  unsettle(id: string): Promise<void> {
    const row = this.row(id);
    if (row?.record.status === "settled") this.touch(row, { status: "settling" });
    return Promise.resolve();
  }

  /** Settles a payment still reserved or settling; undefined (nothing changed) otherwise. */
  private settle(id: string, settlement: Settlement): PaymentRecord | undefined {
    const row = this.row(id);
    const p = row?.record;
    if (!row || !p || (p.status !== "reserved" && p.status !== "settling")) return undefined;
    const settled = this.touch(row, {
      ...FakePayments.ended(p),
      status: "settled",
      settlement: structuredClone(settlement),
    });
    this.stores.emit("payment.settled", settled);
    return settled;
  }

  markSettled(id: string, settlement: Settlement): Promise<PaymentRecord | undefined> {
    return Promise.resolve(this.settle(id, settlement));
  }

  /**
   * In the caller's database transaction `q`, as the real store writes it: applied once the trip that carries it ran
   * (so never when a statement before it failed the transaction, as another runner's end makes markSuccess fail);
   * with no transaction (NO_SQL), at once.
   */
  settleWithin(q: Queryable, payment: PaymentRecord, settlement: Settlement): Promise<PaymentRecord> {
    const apply = () => void this.settle(payment.id, settlement);
    if (q === NO_SQL) apply();
    else q.ahead("SELECT $1::int AS settled_within", [1]).then(apply, () => undefined);
    return Promise.resolve({
      ...copy(payment),
      ...FakePayments.ended(payment),
      status: "settled",
      settlement: structuredClone(settlement),
      releaseReason: null,
    });
  }

  markReleased(id: string, reason: string, settlementFailed = false): Promise<boolean> {
    const row = this.row(id);
    const p = row?.record;
    const releasable =
      p?.status === "reserved" || (p?.status === "settling" && (p.settleTxHash === null || settlementFailed));
    if (!row || !p || !releasable) return Promise.resolve(false);
    this.stores.emit("payment.released", this.release(row, reason));
    return Promise.resolve(true);
  }

  private release(row: Row, reason: string): PaymentRecord {
    const p = row.record;
    return this.touch(row, {
      ...FakePayments.ended(p),
      status: "released",
      releaseReason: reason,
      // A payment released with its operation's transaction names no settlement transaction: that one settled nothing.
      settleTxHash: p.settleInOperation ? null : p.settleTxHash,
    });
  }

  releaseReservedWithin(_q: unknown, txId: string, reason: string): Promise<void> {
    for (const row of this.rows.values())
      if (row.record.txId === txId && row.record.status === "reserved")
        this.stores.emit("payment.released", this.release(row, reason));
    return Promise.resolve();
  }
}

export class FakeRefunds implements RefundStore {
  private readonly rows = new Map<string, RefundRecord>();

  constructor(private readonly stores: FakePaymentStores) {}

  async recordOwedWithin(_q: unknown, txId: string, reason: string): Promise<number> {
    if (this.stores.batches.get(txId) !== "rejected") return 0;
    let owed = 0;
    for (const p of await this.stores.payments.forBatch(txId)) {
      if (p.status !== "settled" || p.settleInOperation || this.rows.has(p.id)) continue;
      const now = new Date().toISOString();
      this.rows.set(p.id, {
        paymentId: p.id,
        txId,
        network: p.network,
        chainId: Number(p.network.split(":")[1]),
        asset: p.asset,
        payer: p.payer,
        amount: p.amount,
        reason,
        status: "owed",
        attempts: 0,
        nextAttemptAt: now,
        lastError: null,
        txHash: null,
        txReplaced: [],
        txRaw: null,
        txFrom: null,
        txNonce: null,
        blockNumber: null,
        refundedBy: null,
        createdAt: now,
        refundedAt: null,
      });
      this.stores.emit("payment.refund_owed", p);
      owed++;
    }
    return owed;
  }

  get(paymentId: string): Promise<RefundRecord | undefined> {
    const refund = this.rows.get(paymentId);
    return Promise.resolve(refund && structuredClone(refund));
  }

  forBatch(txId: string): Promise<RefundRecord[]> {
    return Promise.resolve([...this.rows.values()].filter((r) => r.txId === txId).map((r) => structuredClone(r)));
  }

  /** Only the refund wallet's transactions make a refund sending; the fake sends none. */
  sending(network: string): Promise<RefundRecord[]> {
    const sending = [...this.rows.values()].filter((r) => r.status === "sending" && r.network === network);
    return Promise.resolve(sending.map((r) => structuredClone(r)));
  }

  postpone(paymentId: string, problem: string, retryInMs: number): Promise<void> {
    const refund = this.rows.get(paymentId);
    if (refund?.status === "owed")
      Object.assign(refund, {
        lastError: problem,
        attempts: refund.attempts + 1,
        nextAttemptAt: new Date(Date.now() + retryInMs).toISOString(),
      });
    return Promise.resolve();
  }

  async markPaidBy(
    paymentId: string,
    operator: string,
    hash: string,
    blockNumber: number,
  ): Promise<RefundRecord | undefined> {
    const refund = this.rows.get(paymentId);
    if (refund?.status !== "owed") return undefined;
    Object.assign(refund, {
      status: "refunded",
      txHash: hash.toLowerCase(),
      blockNumber,
      refundedBy: operator,
      lastError: null,
      refundedAt: new Date().toISOString(),
    });
    const payment = await this.stores.payments.get(paymentId);
    if (payment) this.stores.emit("payment.refunded", payment);
    return structuredClone(refund);
  }
}
