import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import type { UnsignedTransaction } from "../../service/engine/types";
import { FAUCET_CREDIT_METHOD, METERED_METHODS, PLANS, PLAN_CREDITS } from "../../service/auth/plans";
import { ApiKeys } from "../../service/store/api-keys";
import { Batches } from "../../service/store/batches";
import { Credits } from "../../service/store/credits";
import type { Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Signers } from "../../service/store/signers";

/**
 * The store's contract, run against one backend. Each call opens its own database (a fresh in-memory PGlite, or a fresh
 * schema on the PostgreSQL server), so runs never collide; `open` must return an empty, unmigrated database.
 */
export function describeStore(label: string, open: () => Promise<Db>, cleanup?: () => Promise<void>): void {
  describe(`store on ${label}`, function () {
    this.timeout(60_000);
    let db: Db;
    let apiKeys: ApiKeys;
    let credits: Credits;
    let signers: Signers;
    let batches: Batches;

    before(async () => {
      db = await open();
      apiKeys = new ApiKeys(db);
      credits = new Credits(db);
      signers = new Signers(db);
      batches = new Batches(db);
    });

    after(async () => {
      await db?.close();
      await cleanup?.();
    });

    describe("migrate", () => {
      it("applies 001_init.sql (and every later migration, in order) on an empty database, then nothing on a second call", async () => {
        const files = fs
          .readdirSync(path.join(__dirname, "../../service/store/migrations"))
          .filter((f) => /^\d+_.+\.sql$/.test(f))
          .sort();
        expect(files[0]).to.equal("001_init.sql");
        expect(await migrate(db)).to.deep.equal(files);
        expect(await migrate(db)).to.deep.equal([]);
        const rows = await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version");
        expect(rows.map((r) => r.version)).to.deep.equal(files);
        const [{ n }] = await db.query<{ n: string | number }>("SELECT count(*)::int AS n FROM api_keys");
        expect(Number(n)).to.equal(0);
      });
    });

    describe("ApiKeys", () => {
      it("creates a key tak_<16 hex>_<43 base64url> and stores only a 64-hex HMAC of it", async () => {
        const { key, record } = await apiKeys.create({ email: "issuer@example.com", plan: "Starter" });
        const match = /^tak_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/.exec(key);
        expect(match, key).to.not.equal(null);
        expect(record.id).to.equal(match![1]);
        expect(record).to.include({ email: "issuer@example.com", plan: "Starter", revokedAt: null });
        expect(new Date(record.createdAt).getTime()).to.be.greaterThan(0);

        const rows = await db.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = $1", [record.id]);
        expect(rows).to.have.length(1);
        const keyHash = rows[0].key_hash as string;
        expect(keyHash).to.match(/^[0-9a-f]{64}$/);
        const secret = match![2];
        for (const value of Object.values(rows[0])) {
          const text = value instanceof Date ? value.toISOString() : String(value);
          expect(text).to.not.include(secret);
          expect(text).to.not.include(key);
        }
        expect(keyHash).to.not.include(secret);
      });

      it("verify accepts the key (also with surrounding spaces) and rejects tampered, malformed and revoked keys", async () => {
        const { key, record } = await apiKeys.create({ email: "verify@example.com", plan: "Professional" });
        const verified = await apiKeys.verify(key);
        expect(verified).to.deep.equal(record);
        expect((await apiKeys.verify(` ${key} `))?.id).to.equal(record.id);

        const last = key[key.length - 1];
        const tamperedSecret = key.slice(0, -1) + (last === "A" ? "B" : "A");
        expect(await apiKeys.verify(tamperedSecret)).to.equal(undefined);
        const middle = key.indexOf("_", 4) + 5;
        const tamperedMiddle = key.slice(0, middle) + (key[middle] === "x" ? "y" : "x") + key.slice(middle + 1);
        expect(tamperedMiddle).to.have.length(key.length);
        expect(await apiKeys.verify(tamperedMiddle)).to.equal(undefined);
        const idChar = key[4] === "0" ? "1" : "0";
        expect(await apiKeys.verify("tak_" + idChar + key.slice(5))).to.equal(undefined);

        for (const malformed of ["", "tak_", "not-a-key", key.slice(0, -1), key + "A", key.replace("tak_", "tok_")]) {
          expect(await apiKeys.verify(malformed), malformed).to.equal(undefined);
        }

        expect(await apiKeys.revoke(record.id)).to.equal(true);
        expect(await apiKeys.verify(key)).to.equal(undefined);
        const revoked = await apiKeys.get(record.id);
        expect(revoked?.revokedAt).to.be.a("string");
        // Revoking twice keeps the first time; an unknown id is reported.
        expect(await apiKeys.revoke(record.id)).to.equal(true);
        expect((await apiKeys.get(record.id))?.revokedAt).to.equal(revoked!.revokedAt);
        expect(await apiKeys.revoke("0000000000000000")).to.equal(false);
      });

      it("keeps the pepper in the database: a new ApiKeys instance on it accepts earlier keys", async () => {
        const { key } = await apiKeys.create({ email: "pepper@example.com", plan: "Starter" });
        expect(await new ApiKeys(db).verify(key)).to.not.equal(undefined);
        const [{ value }] = await db.query<{ value: string }>("SELECT value FROM deployment_meta WHERE key = 'api_key_pepper'");
        expect(value).to.match(/^[0-9a-f]{64}$/);
      });

      it("list returns the records without any key material", async () => {
        const list = await apiKeys.list();
        expect(list.length).to.be.greaterThanOrEqual(3);
        for (const record of list) expect(Object.keys(record).sort()).to.deep.equal(["createdAt", "email", "id", "plan", "revokedAt"]);
      });
    });

    describe("Credits", () => {
      it("grants 10 / 100 / 10000 per metered method by plan, and 10 faucet claims on every plan", async () => {
        expect(PLAN_CREDITS).to.deep.equal({ Starter: 10, Professional: 100, Enterprise: 10_000 });
        for (const plan of PLANS) {
          const { record } = await apiKeys.create({ email: `${plan.toLowerCase()}@example.com`, plan });
          const balances = await credits.balances(record.id);
          const expected: Record<string, number> = { [FAUCET_CREDIT_METHOD]: 10 };
          for (const method of METERED_METHODS) expected[method] = PLAN_CREDITS[plan];
          expect(balances, plan).to.deep.equal(expected);
        }
        expect(METERED_METHODS).to.include.members(["newTokenization", "whitelist", "mintToken", "dividendDistribution", "patch-token-docs"]);
      });

      it("spend inside a transaction decrements, charges a txId once and stops at 0", async () => {
        const { record } = await apiKeys.create({ email: "spender@example.com", plan: "Starter" });
        const txIds = Array.from({ length: 11 }, () => "tx-" + randomBytes(8).toString("hex"));
        const first = await db.transaction((tx) => credits.spend(tx, record.id, "mintToken", txIds[0]));
        expect(first).to.deep.equal({ ok: true, balance: 9 });
        expect((await credits.balances(record.id)).mintToken).to.equal(9);

        const again = await db.transaction((tx) => credits.spend(tx, record.id, "mintToken", txIds[0]));
        expect(again).to.deep.equal({ ok: false, reason: "already_charged" });
        expect((await credits.balances(record.id)).mintToken).to.equal(9);
        // The charge is per batch: the same txId under another method is still already charged.
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "whitelist", txIds[0]))).to.deep.equal({
          ok: false,
          reason: "already_charged",
        });
        expect((await credits.balances(record.id)).whitelist).to.equal(10);

        for (let i = 1; i < 10; i++) {
          const result = await db.transaction((tx) => credits.spend(tx, record.id, "mintToken", txIds[i]));
          expect(result).to.deep.equal({ ok: true, balance: 9 - i });
        }
        expect((await credits.balances(record.id)).mintToken).to.equal(0);
        const empty = await db.transaction((tx) => credits.spend(tx, record.id, "mintToken", txIds[10]));
        expect(empty).to.deep.equal({ ok: false, reason: "out_of_credits" });
        expect((await credits.balances(record.id)).mintToken).to.equal(0);
        const charges = await db.query<{ tx_id: string }>("SELECT tx_id FROM credit_charges WHERE key_id = $1", [record.id]);
        expect(charges.map((c) => c.tx_id).sort()).to.deep.equal(txIds.slice(0, 10).sort());

        // A method the key has no balance for cannot be spent.
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "noSuchMethod", "tx-" + randomBytes(8).toString("hex")))).to.deep.equal({
          ok: false,
          reason: "out_of_credits",
        });
      });

      it("a spend whose transaction rolls back leaves no charge and no decrement", async () => {
        const { record } = await apiKeys.create({ email: "rollback@example.com", plan: "Starter" });
        const txId = "tx-" + randomBytes(8).toString("hex");
        let spent: unknown;
        const failure = await db
          .transaction(async (tx) => {
            spent = await credits.spend(tx, record.id, "whitelist", txId);
            throw new Error("boom");
          })
          .then(
            () => undefined,
            (e: Error) => e,
          );
        expect(failure?.message).to.equal("boom");
        expect(spent).to.deep.equal({ ok: true, balance: 9 });
        expect((await credits.balances(record.id)).whitelist).to.equal(10);
        expect(await db.query("SELECT 1 FROM credit_charges WHERE tx_id = $1", [txId])).to.have.length(0);
      });

      it("two concurrent spends of the last credit: exactly one succeeds", async () => {
        const { record } = await apiKeys.create({ email: "race@example.com", plan: "Starter" });
        await db.query("UPDATE credit_balances SET balance = 1 WHERE key_id = $1 AND method = 'newSto'", [record.id]);
        const a = "tx-" + randomBytes(8).toString("hex");
        const b = "tx-" + randomBytes(8).toString("hex");
        const results = await Promise.all([
          db.transaction((tx) => credits.spend(tx, record.id, "newSto", a)),
          db.transaction((tx) => credits.spend(tx, record.id, "newSto", b)),
        ]);
        const ok = results.filter((r) => r.ok);
        expect(ok, JSON.stringify(results)).to.have.length(1);
        expect(ok[0]).to.deep.equal({ ok: true, balance: 0 });
        expect(results.filter((r) => !r.ok)).to.deep.equal([{ ok: false, reason: "out_of_credits" }]);
        expect((await credits.balances(record.id)).newSto).to.equal(0);
        const charges = await db.query("SELECT tx_id FROM credit_charges WHERE key_id = $1", [record.id]);
        expect(charges).to.have.length(1);
      });

      it("two concurrent spends of the same txId charge it once (the loser reports already_charged or fails)", async () => {
        const { record } = await apiKeys.create({ email: "same-tx@example.com", plan: "Starter" });
        const txId = "tx-" + randomBytes(8).toString("hex");
        const settled = await Promise.allSettled([
          db.transaction((tx) => credits.spend(tx, record.id, "approve", txId)),
          db.transaction((tx) => credits.spend(tx, record.id, "approve", txId)),
        ]);
        const ok = settled.filter((s) => s.status === "fulfilled" && s.value.ok);
        expect(ok, JSON.stringify(settled)).to.have.length(1);
        for (const s of settled) {
          if (s.status === "fulfilled" && !s.value.ok) expect(s.value).to.deep.equal({ ok: false, reason: "already_charged" });
        }
        expect((await credits.balances(record.id)).approve).to.equal(9);
        expect(await db.query("SELECT 1 FROM credit_charges WHERE tx_id = $1", [txId])).to.have.length(1);
      });

      it("many concurrent spends never overdraw", async () => {
        const { record } = await apiKeys.create({ email: "race2@example.com", plan: "Starter" });
        await db.query("UPDATE credit_balances SET balance = 3 WHERE key_id = $1 AND method = 'closeOffer'", [record.id]);
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            db.transaction((tx) => credits.spend(tx, record.id, "closeOffer", "tx-" + randomBytes(8).toString("hex"))),
          ),
        );
        expect(results.filter((r) => r.ok)).to.have.length(3);
        expect((await credits.balances(record.id)).closeOffer).to.equal(0);
      });

      it("refund gives the credit back once; unknown txIds refund nothing", async () => {
        const { record } = await apiKeys.create({ email: "refund@example.com", plan: "Professional" });
        const txId = "tx-" + randomBytes(8).toString("hex");
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "burnToken", txId))).to.deep.equal({ ok: true, balance: 99 });
        expect(await db.transaction((tx) => credits.refund(tx, txId))).to.equal(true);
        expect((await credits.balances(record.id)).burnToken).to.equal(100);
        expect(await db.transaction((tx) => credits.refund(tx, txId))).to.equal(false);
        expect((await credits.balances(record.id)).burnToken).to.equal(100);
        const [charge] = await db.query<{ refunded_at: unknown }>("SELECT refunded_at FROM credit_charges WHERE tx_id = $1", [txId]);
        expect(charge.refunded_at).to.not.equal(null);
        // A refunded batch is still charged: the same txId cannot be spent again.
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "burnToken", txId))).to.deep.equal({
          ok: false,
          reason: "already_charged",
        });
        expect(await db.transaction((tx) => credits.refund(tx, "tx-unknown"))).to.equal(false);
      });

      it("add tops up an existing balance and creates a missing one", async () => {
        const { record } = await apiKeys.create({ email: "topup@example.com", plan: "Starter" });
        expect(await credits.add(record.id, "mintToken", 5)).to.equal(15);
        expect(await credits.add(record.id, "mintToken", 1)).to.equal(16);
        expect(await credits.add(record.id, "someNewMethod", 7)).to.equal(7);
        const balances = await credits.balances(record.id);
        expect(balances.mintToken).to.equal(16);
        expect(balances.someNewMethod).to.equal(7);
        expect(balances.whitelist).to.equal(10);
      });
    });

    describe("Signers", () => {
      const alice = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
      const bob = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

      it("adds (idempotently, any case), lists checksummed, checks case-insensitively and removes", async () => {
        expect(await signers.list()).to.deep.equal([]);
        await signers.add(alice.toLowerCase());
        await signers.add(alice.toUpperCase().replace("0X", "0x"));
        await signers.add(bob);
        expect(await signers.list()).to.have.members([alice, bob]);
        expect(await signers.list()).to.have.length(2);
        const stored = await db.query<{ address: string }>("SELECT address FROM signers ORDER BY address");
        expect(stored.map((r) => r.address)).to.have.members([alice.toLowerCase(), bob.toLowerCase()]);

        expect(await signers.isAllowed(alice)).to.equal(true);
        expect(await signers.isAllowed(alice.toLowerCase())).to.equal(true);
        expect(await signers.isAllowed("0x" + alice.slice(2).toUpperCase())).to.equal(true);
        expect(await signers.isAllowed("0x90F79bf6EB2c4f870365E785982E1f101E93b906")).to.equal(false);

        expect(await signers.remove(alice.toUpperCase().replace("0X", "0x"))).to.equal(true);
        expect(await signers.remove(alice)).to.equal(false);
        expect(await signers.isAllowed(alice)).to.equal(false);
        expect(await signers.list()).to.deep.equal([bob]);
      });
    });

    describe("Batches", () => {
      const signer = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
      const unsigned = (nonce: number): UnsignedTransaction => ({
        from: signer,
        to: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        value: "0x00",
        nonce,
        chainId: 11155111,
        data: "0xabcdef",
        type: 2,
        maxPriorityFeePerGas: "1000000",
        maxFeePerGas: "2000000000",
        gasLimit: "0x0189dd",
      });
      const newBatch = (txId: string, apiKeyId: string | null): Parameters<Batches["create"]>[0] => ({
        txId,
        chainId: 11155111,
        method: "whitelist",
        executionMode: "client-signed",
        signer,
        apiKeyId,
        body: { method: "whitelist", chainId: "aa36a7", nested: { list: [1, "two"] } },
        plan: { amount: "1000000000000000000000000" },
        info: { description: "whitelist two wallets" },
        transactions: [0, 1].map((index) => ({
          index,
          unsigned: unsigned(7 + index),
          signedRaw: null,
          txHash: null,
          status: "prepared" as const,
          blockNumber: null,
          gasUsed: null,
          error: null,
        })),
      });
      const hash = (n: number) => "0x" + n.toString(16).padStart(64, "0");

      it("create / get round-trip the batch and its transactions", async () => {
        const { record } = await apiKeys.create({ email: "batches@example.com", plan: "Starter" });
        const txId = randomBytes(16).toString("hex");
        const input = newBatch(txId, record.id);
        await batches.create(input);
        const batch = await batches.get(txId);
        expect(batch).to.not.equal(undefined);
        expect(batch!).to.deep.include({
          txId,
          chainId: 11155111,
          method: "whitelist",
          executionMode: "client-signed",
          signer,
          apiKeyId: record.id,
          status: "prepared",
          body: input.body,
          plan: input.plan,
          info: input.info,
          failedIndex: null,
          error: null,
        });
        expect(new Date(batch!.createdAt).toISOString()).to.equal(batch!.createdAt);
        expect(batch!.transactions).to.deep.equal(input.transactions);
        expect(await batches.get("no-such-batch")).to.equal(undefined);
        expect(await batches.inFlight()).to.not.include(txId);
      });

      it("markSending / setTxConfirmed / reject: a batch whose second transaction reverted", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        await db.transaction(async (tx) => {
          expect(await batches.lock(tx, txId)).to.equal("prepared");
          await batches.markSending(tx, txId, [
            { index: 0, signedRaw: "0x02aa", txHash: hash(0xa1).toUpperCase().replace("0X", "0x"), status: "signed" },
            { index: 1, signedRaw: "0x02bb", txHash: hash(0xb2), status: "signed" },
          ]);
        });
        let batch = (await batches.get(txId))!;
        expect(batch.status).to.equal("sending");
        expect(batch.transactions.map((t) => [t.status, t.signedRaw, t.txHash])).to.deep.equal([
          ["signed", "0x02aa", hash(0xa1)],
          ["signed", "0x02bb", hash(0xb2)],
        ]);
        expect(await batches.inFlight()).to.include(txId);
        expect(await batches.txIdByHash(hash(0xa1).toUpperCase().replace("0X", "0x"))).to.equal(txId);

        await batches.setTxBroadcast(txId, 0);
        await batches.setTxConfirmed(txId, 0, 42, 21_000n);
        await batches.reject(txId, 1, "reverted", "execution reverted: NotWhitelisted", { blockNumber: 43, gasUsed: 30_000n });
        batch = (await batches.get(txId))!;
        expect(batch.status).to.equal("rejected");
        expect(batch.failedIndex).to.equal(1);
        expect(batch.error).to.equal("execution reverted: NotWhitelisted");
        expect(batch.transactions[0]).to.deep.include({ status: "confirmed", blockNumber: 42, gasUsed: "21000", error: null });
        expect(batch.transactions[1]).to.deep.include({
          status: "reverted",
          blockNumber: 43,
          gasUsed: "30000",
          error: "execution reverted: NotWhitelisted",
        });
        expect(await batches.inFlight()).to.not.include(txId);
      });

      it("markSuccess ends a sending batch as success with its records written", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        await batches.markSending(db, txId, [
          { index: 0, signedRaw: "0x02cc", txHash: hash(0xc3), status: "signed" },
          { index: 1, signedRaw: "0x02dd", txHash: hash(0xd4), status: "signed" },
        ]);
        await batches.setTxConfirmed(txId, 0, 50, 60_000n);
        await batches.setTxConfirmed(txId, 1, 51, 2n ** 70n);
        await db.transaction((tx) => batches.markSuccess(tx, txId));
        const batch = (await batches.get(txId))!;
        expect(batch.status).to.equal("success");
        expect(batch.failedIndex).to.equal(null);
        expect(batch.transactions.map((t) => [t.status, t.blockNumber, t.gasUsed])).to.deep.equal([
          ["confirmed", 50, "60000"],
          ["confirmed", 51, (2n ** 70n).toString()],
        ]);
        const [row] = await db.query<{ records_written: boolean; completed_at: unknown }>(
          "SELECT records_written, completed_at FROM batches WHERE tx_id = $1",
          [txId],
        );
        expect(row.records_written).to.equal(true);
        expect(row.completed_at).to.not.equal(null);
        // reject only ends a batch that is still sending.
        await batches.reject(txId, 0, "refused", "late", undefined);
        expect((await batches.get(txId))!.status).to.equal("success");
      });
    });
  });
}
