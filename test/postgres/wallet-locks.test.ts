import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Pool } from "pg";
import { createLogger } from "../../service/logger";
import { openDb, type Db } from "../../service/store/db";
import { WALLET_LOCK_KEY, WalletLocks, walletLockName } from "../../service/store/wallet-locks";

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
