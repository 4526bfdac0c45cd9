import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Pool } from "pg";
import { createLogger } from "../../service/logger";
import { openDb, type Db } from "../../service/store/db";
import { WALLET_LOCK_KEY, WalletLocks, walletLockName } from "../../service/store/wallet-locks";
import { countedAs } from "../../service/store/db-work";

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const WALLET = "0x" + "ab".repeat(20);
const CHAIN_ID = 84532;

describe("PostgreSQL server: a service wallet's lock across instances", function () {
  this.timeout(60_000);
  const schema = "wlock_" + randomBytes(6).toString("hex");
  let dbs: Db[];
  let probe: Pool;

  before(async () => {
    dbs = [await openDb({ databaseUrl: DATABASE_URL, schema }), await openDb({ databaseUrl: DATABASE_URL, schema })];
    probe = new Pool({ connectionString: DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
  });
  after(async () => {
    for (const db of dbs) await db.close();
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await probe.end();
  });

  /** True when no session holds the wallet's lock (taken and given back at once by the probe). */
  async function lockIsFree(): Promise<boolean> {
    const [row] = (
      await probe.query(`SELECT pg_try_advisory_lock(${WALLET_LOCK_KEY}) AS free`, [walletLockName(CHAIN_ID, WALLET)])
    ).rows;
    if (row.free)
      await probe.query(`SELECT pg_advisory_unlock(${WALLET_LOCK_KEY})`, [walletLockName(CHAIN_ID, WALLET)]);
    return row.free;
  }

  /** Resolves once some session waits for the wallet's lock (read from pg_locks, not timed). */
  async function untilSomeoneWaits(): Promise<void> {
    for (;;) {
      const { rows } = await probe.query(
        `SELECT count(*)::int AS waiting FROM pg_locks l, (SELECT ${WALLET_LOCK_KEY}) AS k(class, obj)
          WHERE l.locktype = 'advisory' AND NOT l.granted AND l.classid = k.class::oid AND l.objid = k.obj::oid AND l.objsubid = 2`,
        [walletLockName(CHAIN_ID, WALLET)],
      );
      if (rows[0].waiting > 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("holders in one instance share a turn; the other instance waits for its end; every lock is given back", async () => {
    const [a, b] = dbs.map((db) => new WalletLocks(db, createLogger("silent")));
    const events: string[] = [];
    const releaseA1 = await a.hold(CHAIN_ID, WALLET);
    const releaseA2 = await a.hold(CHAIN_ID, WALLET.toUpperCase().replace("0X", "0x")); // same wallet, same turn
    expect(await lockIsFree()).to.equal(false);
    const heldB = b.hold(CHAIN_ID, WALLET).then((release) => {
      events.push("B held");
      return release;
    });
    await untilSomeoneWaits();
    events.push("A1 released");
    await releaseA1();
    expect(events).to.deep.equal(["A1 released"]); // A2 still holds the turn
    events.push("A2 released");
    await releaseA2();
    const releaseB = await heldB;
    expect(events).to.deep.equal(["A1 released", "A2 released", "B held"]);
    expect(await lockIsFree()).to.equal(false);
    await releaseB();
    await releaseB(); // a second release does nothing
    expect(await lockIsFree()).to.equal(true);
  });

  it("a hold that opens the turn takes the lock with its transaction's first trip; the turn's other holders wait for it", async () => {
    const [a, b] = dbs.map((db) => new WalletLocks(db, createLogger("silent")));
    const kind = "carried " + randomBytes(4).toString("hex");
    const events: string[] = [];
    await countedAs(kind, async () => {
      const opening = await a.take(CHAIN_ID, WALLET);
      const joining = a.take(CHAIN_ID, WALLET).then((hold) => {
        events.push("joined");
        return hold;
      });
      const value = await opening.transaction(async (q) => {
        const [row] = await q.query<{ one: number }>("SELECT 1 AS one");
        events.push("first trip");
        return row.one;
      });
      expect(value).to.equal(1);
      const joined = await joining;
      expect(events).to.deep.equal(["first trip", "joined"]);
      expect(await lockIsFree()).to.equal(false);
      // Another instance waits until this one's turn ends.
      const other = b.hold(CHAIN_ID, WALLET).then((release) => {
        events.push("other instance held");
        return release;
      });
      await untilSomeoneWaits();
      await joined.transaction((q) => q.query("SELECT 2"));
      await opening.release();
      await joined.release();
      await (
        await other
      )();
    });
    expect(events).to.deep.equal(["first trip", "joined", "other instance held"]);
    expect(await lockIsFree()).to.equal(true);
    // The opening transaction: one trip (BEGIN, the lock, its statement) and its COMMIT; the joiner's two; the lock given
    // back; the other instance's lock and its release.
    expect(dbs[0].work.snapshot()[kind].trips).to.equal(2 + 2 + 1);
  });

  it("an opening transaction that fails after the lock was taken keeps the turn; the lock is given back at release", async () => {
    const locks = new WalletLocks(dbs[0], createLogger("silent"));
    const hold = await locks.take(CHAIN_ID, WALLET);
    const failure = await hold
      .transaction(async (q) => {
        await q.query("SELECT 1");
        throw new Error("signed elsewhere");
      })
      .catch((error: Error) => error);
    expect(failure.message).to.equal("signed elsewhere");
    expect(await lockIsFree()).to.equal(false);
    await hold.release();
    expect(await lockIsFree()).to.equal(true);
  });

  it("an opening transaction whose first statement fails: the lock is not kept, the turn's other holders still get it", async () => {
    const locks = new WalletLocks(dbs[0], createLogger("silent"));
    const hold = await locks.take(CHAIN_ID, WALLET);
    const joining = locks.take(CHAIN_ID, WALLET);
    const failure = await hold
      .transaction((q) => q.query("SELECT * FROM no_such_table"))
      .catch((error: { code?: string }) => error);
    expect((failure as { code?: string }).code).to.equal("42P01");
    const joined = await joining;
    expect(await lockIsFree()).to.equal(false);
    await hold.release();
    await joined.release();
    expect(await lockIsFree()).to.equal(true);
  });

  it("a hold released after a failed broadcast gives the lock back", async () => {
    const locks = new WalletLocks(dbs[0], createLogger("silent"));
    const broadcast = async () => {
      const release = await locks.hold(CHAIN_ID, WALLET);
      try {
        throw new Error("node refused");
      } finally {
        await release();
      }
    };
    const failure = await broadcast().catch((error: Error) => error);
    expect(failure.message).to.equal("node refused");
    expect(await lockIsFree()).to.equal(true);
  });
});
