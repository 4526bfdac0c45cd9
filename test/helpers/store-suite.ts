import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import type { UnsignedTransaction } from "../../service/model/batch";
import { PLANS, PLAN_CREDITS } from "../../service/model/plans";
import { METERED_METHODS } from "../../service/methods/metering";
import { ApiKeys, VERIFIED_KEY_TTL_MS } from "../../service/store/api-keys";
import { Batches, endedElsewhere, NEW_TX_STATE } from "../../service/store/batches";
import { BatchTransactions } from "../../service/store/batch-transactions";
import { Sealer } from "../../service/crypto/sealed";
import { Credits } from "../../service/store/credits";
import type { Db } from "../../service/store/db";
import { migrate, migrationFiles, RENAMED_MIGRATIONS } from "../../service/store/migrate";
import { assertSchemaCurrent, schemaState } from "../../service/store/schema-version";
import { Signers } from "../../service/store/signers";
import { KycStore } from "../../service/store/kyc";
import { KycLinks } from "../../service/store/kyc-links";
import { linkTokenHash } from "../../service/store/kyc-links";
import { Tokens } from "../../service/store/tokens";
import { TOKEN_CONTROL_ACTIONS, TokenControls, type TokenControlAction } from "../../service/store/token-controls";
import { PaymentConflict, Payments, PaymentShortfall } from "../../service/store/payments";
import { IdempotentRequests } from "../../service/store/idempotent-requests";
import { WalletNonces } from "../../service/store/wallet-nonces";

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
    let batchTransactions: BatchTransactions;
    const sealer = new Sealer("s".repeat(64));

    before(async () => {
      db = await open();
      apiKeys = new ApiKeys(db);
      credits = new Credits(db, METERED_METHODS);
      signers = new Signers(db);
      batches = new Batches(db, sealer);
      batchTransactions = new BatchTransactions(db, sealer);
    });

    /** A key's balance of `method` set to `balance`, written whether or not the key had used it yet. */
    const setBalance = (keyId: string, method: string, balance: number) =>
      db.query(
        `INSERT INTO credit_balances (key_id, method, balance) VALUES ($1, $2, $3)
         ON CONFLICT (key_id, method) DO UPDATE SET balance = EXCLUDED.balance`,
        [keyId, method, balance],
      );

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

      it("upgrades a database that recorded its migrations under their old names (007 and 008 were each used twice): renamed, nothing applied again", async () => {
        for (const [old, renamed] of Object.entries(RENAMED_MIGRATIONS)) {
          await db.query("UPDATE schema_migrations SET version = $1 WHERE version = $2", [old, renamed]);
        }
        expect(await schemaState(db)).to.deep.include({ pending: [], unknown: [] });
        await assertSchemaCurrent(db);
        expect(await migrate(db)).to.deep.equal([]);
        const rows = await db.query<{ version: string }>("SELECT version FROM schema_migrations ORDER BY version");
        expect(rows.map((r) => r.version)).to.deep.equal(migrationFiles());
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

      it("answers a key verified moments ago from memory, holding neither the key nor its secret, for at most VERIFIED_KEY_TTL_MS", async () => {
        const { key, record } = await apiKeys.create({ email: "cached@example.com", plan: "Starter" });
        expect((await apiKeys.verify(key))?.id).to.equal(record.id);
        // Revoked behind this instance's back (another instance, or the admin CLI on the server).
        await db.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [record.id]);
        expect((await apiKeys.verify(key))?.id, "still trusted within the TTL").to.equal(record.id);
        const cached = [
          ...(apiKeys as unknown as { verified: { entries: Map<string, unknown> } }).verified.entries.keys(),
        ];
        expect(cached).to.have.length.greaterThan(0);
        // The whole secret (base64url: it may itself hold "_", so not split on it).
        const secret = /^tak_[0-9a-f]{16}_(.{43})$/.exec(key)![1];
        for (const entry of cached) expect(entry.includes(secret) || entry.includes(key), entry).to.equal(false);
        await new Promise((resolve) => setTimeout(resolve, VERIFIED_KEY_TTL_MS + 50));
        expect(await apiKeys.verify(key), "revocation seen after the TTL").to.equal(undefined);
      });

      it("keeps the pepper in the database: a new ApiKeys instance on it accepts earlier keys", async () => {
        const { key } = await apiKeys.create({ email: "pepper@example.com", plan: "Starter" });
        expect(await new ApiKeys(db).verify(key)).to.not.equal(undefined);
        const [{ value }] = await db.query<{ value: string }>(
          "SELECT value FROM deployment_meta WHERE key = 'api_key_pepper'",
        );
        expect(value).to.match(/^[0-9a-f]{64}$/);
      });

      it("list returns the records without any key material", async () => {
        const list = await apiKeys.list();
        expect(list.length).to.be.greaterThanOrEqual(3);
        for (const record of list)
          expect(Object.keys(record).sort()).to.deep.equal(["createdAt", "email", "id", "plan", "revokedAt"]);
      });
    });

    describe("Credits", () => {
      it("grants 10 / 100 / 10000 per metered method and invitations by plan, and 10 faucet claims on every plan", async () => {
        // The promised figures and the original list of 13 metered methods, written out here rather than read from the
        // code; the methods metered since declare it in their own modules (methods/metering.ts reads them).
        const specCredits = { Starter: 10, Professional: 100, Enterprise: 10_000 } as const;
        const promisedMetered = [
          "newTokenization",
          "whitelist",
          "mintToken",
          "burnToken",
          "transferTo",
          "transferFrom",
          "approve",
          "dividendDistribution",
          "newSto",
          "newInvest",
          "claimTokens",
          "closeOffer",
          "patch-token-docs",
        ];
        expect(METERED_METHODS).to.include.members([...promisedMetered, "freezeTokens", "withdrawProceeds"]);
        expect(METERED_METHODS).to.not.include("claimDividends");
        for (const plan of PLANS) {
          const { record } = await apiKeys.create({ email: `${plan.toLowerCase()}@example.com`, plan });
          const balances = await credits.balances(record.id);
          for (const method of METERED_METHODS)
            expect(balances[method], `${plan} ${method}`).to.equal(specCredits[plan]);
          expect(balances.faucet, `${plan} faucet`).to.equal(10);
          expect(balances.invitation, `${plan} invitations`).to.equal(specCredits[plan]);
          expect(Object.keys(balances).sort()).to.deep.equal([...METERED_METHODS, "faucet", "invitation"].sort());
        }
        expect(PLAN_CREDITS).to.deep.equal(specCredits);
      });

      it("a method metered after a key was made: its plan's credits on first use, granted once, without a migration", async () => {
        const { record } = await apiKeys.create({ email: "older-key@example.com", plan: "Professional" });
        // The next version declares one more metered method; the key was made before it.
        const later = new Credits(db, [...METERED_METHODS, "laterMethod", "laterTopUp"]);
        expect((await later.balances(record.id)).laterMethod).to.equal(100);
        expect((await credits.balances(record.id)).laterMethod, "unknown to this version").to.equal(undefined);
        const spend = () => db.transaction((tx) => later.spend(tx, record.id, "laterMethod", "tx-" + randomUUID()));
        expect(await spend()).to.deep.equal({ ok: true, balance: 99 });
        // Granted once: the written row is the balance from then on, whoever grants again.
        await later.grantPlanned(db, record.id, "laterMethod");
        await db.transaction((tx) => later.grantPlanned(tx, record.id, "laterMethod"));
        expect(await spend()).to.deep.equal({ ok: true, balance: 98 });
        expect((await later.balances(record.id)).laterMethod).to.equal(98);
        // A top-up before the first use comes on top of the plan's credits.
        expect(await later.add(record.id, "laterTopUp", 5)).to.equal(105);
        // A balance written before (by an older version's grant at creation, or a migration) is kept as it is.
        await setBalance(record.id, "mintToken", 3);
        await credits.grantPlanned(db, record.id, "mintToken");
        expect((await credits.balances(record.id)).mintToken).to.equal(3);
        // Only metered balances are granted: an unmetered method's stays empty.
        await credits.grantPlanned(db, record.id, "claimDividends");
        expect(
          await db.query("SELECT 1 FROM credit_balances WHERE key_id = $1 AND method = 'claimDividends'", [record.id]),
        ).to.have.length(0);
      });

      it("a balance granted outside a transaction is not asked for again; one granted in a rolled-back transaction is", async () => {
        const { record } = await apiKeys.create({ email: "granted-once@example.com", plan: "Starter" });
        const trips = () => Object.values(db.work.snapshot()).reduce((n, f) => n + f.trips, 0);
        const written = async () =>
          (await db.query("SELECT 1 FROM credit_balances WHERE key_id = $1 AND method = 'mintToken'", [record.id]))
            .length;
        await db
          .transaction(async (tx) => {
            await credits.grantPlanned(tx, record.id, "mintToken");
            throw new Error("rolled back");
          })
          .catch(() => undefined);
        expect(await written(), "rolled back with its transaction").to.equal(0);
        await credits.grantPlanned(db, record.id, "mintToken");
        expect(await written(), "granted once asked again").to.equal(1);
        const before = trips();
        await credits.grantPlanned(db, record.id, "mintToken");
        expect(trips() - before, "a statement that could only do nothing").to.equal(0);
      });

      it("two first spends of a never-used balance grant it once and take two credits", async () => {
        const { record } = await apiKeys.create({ email: "first-use@example.com", plan: "Starter" });
        const results = await Promise.all(
          ["a", "b"].map((n) =>
            db.transaction((tx) => credits.spend(tx, record.id, "pauseToken", `tx-first-${n}-${record.id}`)),
          ),
        );
        expect(results.map((r) => (r.ok ? r.balance : -1)).sort()).to.deep.equal([8, 9]);
        expect((await credits.balances(record.id)).pauseToken).to.equal(8);
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
        const charges = await db.query<{ tx_id: string }>("SELECT tx_id FROM credit_charges WHERE key_id = $1", [
          record.id,
        ]);
        expect(charges.map((c) => c.tx_id).sort()).to.deep.equal(txIds.slice(0, 10).sort());

        // A method the key has no balance for cannot be spent.
        expect(
          await db.transaction((tx) =>
            credits.spend(tx, record.id, "noSuchMethod", "tx-" + randomBytes(8).toString("hex")),
          ),
        ).to.deep.equal({
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
        await setBalance(record.id, "newSto", 1);
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
          if (s.status === "fulfilled" && !s.value.ok)
            expect(s.value).to.deep.equal({ ok: false, reason: "already_charged" });
        }
        expect((await credits.balances(record.id)).approve).to.equal(9);
        expect(await db.query("SELECT 1 FROM credit_charges WHERE tx_id = $1", [txId])).to.have.length(1);
      });

      it("many concurrent spends never overdraw", async () => {
        const { record } = await apiKeys.create({ email: "race2@example.com", plan: "Starter" });
        await setBalance(record.id, "closeOffer", 3);
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
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "burnToken", txId))).to.deep.equal({
          ok: true,
          balance: 99,
        });
        expect(await db.transaction((tx) => credits.refund(tx, txId))).to.equal(true);
        expect((await credits.balances(record.id)).burnToken).to.equal(100);
        expect(await db.transaction((tx) => credits.refund(tx, txId))).to.equal(false);
        expect((await credits.balances(record.id)).burnToken).to.equal(100);
        const [charge] = await db.query<{ refunded_at: unknown }>(
          "SELECT refunded_at FROM credit_charges WHERE tx_id = $1",
          [txId],
        );
        expect(charge.refunded_at).to.not.equal(null);
        // A refunded batch that is sent again (a reopened client-broadcast batch) is charged again, once.
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "burnToken", txId))).to.deep.equal({
          ok: true,
          balance: 99,
        });
        expect(await db.transaction((tx) => credits.spend(tx, record.id, "burnToken", txId))).to.deep.equal({
          ok: false,
          reason: "already_charged",
        });
        expect((await credits.balances(record.id)).burnToken).to.equal(99);
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

      it("adds per key (idempotently, any case), lists checksummed, checks case-insensitively and per key, and removes", async () => {
        const a = (await apiKeys.create({ email: "a@signers.test", plan: "Starter" })).record.id;
        const b = (await apiKeys.create({ email: "b@signers.test", plan: "Starter" })).record.id;
        expect(await signers.list()).to.deep.equal([]);
        await signers.add(alice.toLowerCase(), { keyId: a });
        await signers.add(alice.toUpperCase().replace("0X", "0x"), { keyId: a });
        await signers.add(bob, "all-keys");
        await signers.add(bob, "all-keys");
        expect(await signers.list()).to.have.deep.members([
          { address: alice, keyId: a },
          { address: bob, keyId: null },
        ]);
        expect(await signers.list()).to.have.length(2);
        expect(await signers.list({ keyId: b })).to.deep.equal([{ address: bob, keyId: null }]);
        const stored = await db.query<{ address: string }>("SELECT address FROM signers ORDER BY address");
        expect(stored.map((r) => r.address)).to.have.members([alice.toLowerCase(), bob.toLowerCase()]);

        expect(await signers.isAllowed(alice, a)).to.equal(true);
        expect(await signers.isAllowed(alice.toLowerCase(), a)).to.equal(true);
        expect(await signers.isAllowed("0x" + alice.slice(2).toUpperCase(), a)).to.equal(true);
        expect(await signers.isAllowed(alice, b), "another key").to.equal(false);
        expect(await signers.isAllowed(alice, undefined), "no key").to.equal(false);
        for (const key of [a, b, undefined]) expect(await signers.isAllowed(bob, key), `bob for ${key}`).to.equal(true);
        expect(await signers.isAllowed("0x90F79bf6EB2c4f870365E785982E1f101E93b906", a)).to.equal(false);

        expect(await signers.remove(alice, { keyId: b })).to.equal(false);
        expect(await signers.remove(alice.toUpperCase().replace("0X", "0x"), { keyId: a })).to.equal(true);
        expect(await signers.remove(alice, { keyId: a })).to.equal(false);
        expect(await signers.isAllowed(alice, a)).to.equal(false);
        expect(await signers.remove(bob, { keyId: a }), "an all-keys entry is removed as such").to.equal(false);
        expect(await signers.list()).to.deep.equal([{ address: bob, keyId: null }]);
        expect(await signers.remove(bob, "all-keys")).to.equal(true);
        expect(await signers.list()).to.deep.equal([]);
      });
    });

    describe("TokenControls", () => {
      it("records every action of TOKEN_CONTROL_ACTIONS (the one list: no CHECK repeats it) and refuses any other", async () => {
        const wallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        const tokenId = randomUUID();
        await new Tokens(db).insert(db, {
          id: tokenId,
          chainId: 11155111,
          symbol: `C${randomBytes(3).toString("hex").toUpperCase()}`,
          name: "n",
          tokenName: "n",
          tokenType: "EQUITY",
          tokenizerEmail: "controls@example.com",
          tokenizerAddress: wallet,
          companyWalletAddress: wallet,
          apiKeyId: null,
          tokenAddress: wallet,
          escrowAddress: wallet,
          paymentToken: { symbol: "USDC", address: wallet, decimals: 6 },
          decimals: 18,
          supplyCap: "0",
          initialSupply: "0",
          url: "",
          createdTxId: "tx",
          createdTxHash: "0x" + "00".repeat(32),
          createdBlock: 1,
        });
        const controls = new TokenControls(db);
        const none = { account: null, counterparty: null, amount: null, role: null, agent: null, blockNumber: 1 };
        const txHash = "0x" + "ab".repeat(32);
        for (const [logIndex, action] of TOKEN_CONTROL_ACTIONS.entries())
          await db.transaction((tx) => controls.record(tx, tokenId, { ...none, action, txHash, logIndex }));
        const { controls: recorded } = await controls.list(tokenId, { limit: 100, offset: 0 });
        expect(recorded.map((c) => c.action)).to.deep.equal([...TOKEN_CONTROL_ACTIONS]);
        const unknown = { ...none, action: "melted" as TokenControlAction, txHash, logIndex: 99 };
        const refused = await db.transaction((tx) => controls.record(tx, tokenId, unknown)).catch((e: Error) => e);
        expect(String(refused)).to.include("unknown token control action melted");
      });
    });

    describe("KycStore", () => {
      const wallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
      /** A token row tokenized under `keyId` with `tokenizerEmail` (what the scope follows). */
      const tokenize = async (keyId: string, tokenizerEmail: string) => {
        await new Tokens(db).insert(db, {
          id: randomUUID(),
          chainId: 11155111,
          symbol: `S${randomBytes(3).toString("hex").toUpperCase()}`,
          name: "n",
          tokenName: "n",
          tokenType: "EQUITY",
          tokenizerEmail,
          tokenizerAddress: wallet,
          companyWalletAddress: wallet,
          apiKeyId: keyId,
          tokenAddress: wallet,
          escrowAddress: wallet,
          paymentToken: { symbol: "USDC", address: wallet, decimals: 6 },
          decimals: 18,
          supplyCap: "0",
          initialSupply: "0",
          url: "",
          createdTxId: "tx",
          createdTxHash: "0x" + "00".repeat(32),
          createdBlock: 1,
        });
      };

      it("scopes: a key and the keys that share one of its tokenizer e-mails; the caller's own record wins; one entry per e-mail", async () => {
        const kyc = new KycStore(db, sealer);
        const a = (await apiKeys.create({ email: "a@kyc.example", plan: "Starter" })).record.id;
        const b = (await apiKeys.create({ email: "b@kyc.example", plan: "Starter" })).record.id;
        const c = (await apiKeys.create({ email: "c@kyc.example", plan: "Starter" })).record.id;
        await tokenize(a, "issuer@kyc.example");
        await tokenize(b, "issuer@kyc.example");
        await tokenize(c, "other@kyc.example");
        // issuer@ belongs to a, which tokenized first; the operator shares it with b.
        const tokens = new Tokens(db);
        await db.transaction((q) => tokens.claimEmail(q, "issuer@kyc.example", a));
        await tokens.bindEmail("issuer@kyc.example", b);
        await db.transaction((q) => tokens.claimEmail(q, "other@kyc.example", c));
        expect(await kyc.scopeOfKey(a)).to.have.members([a, b]);
        expect(await kyc.scopeOfKey(c)).to.deep.equal([c]);
        expect(await kyc.scopeOfTokenizer("issuer@kyc.example", a)).to.have.members([a, b]);
        expect(await kyc.scopeOfTokenizer("nobody@kyc.example", c)).to.deep.equal([c]);

        const byB = await db.transaction((q) =>
          kyc.insert(q, { id: randomUUID(), apiKeyId: b, email: "Inv@Kyc.Example", needKyc: true, status: "invited" }),
        );
        expect(byB.email).to.equal("inv@kyc.example");
        expect((await kyc.findInScope(await kyc.scopeOfKey(a), a, "INV@kyc.example"))?.id).to.equal(byB.id);
        expect(await kyc.findInScope(await kyc.scopeOfKey(c), c, "inv@kyc.example")).to.equal(undefined);
        const byA = await db.transaction((q) =>
          kyc.insert(q, { id: randomUUID(), apiKeyId: a, email: "inv@kyc.example", needKyc: false, status: "none" }),
        );
        expect((await kyc.findInScope([a, b], a, "inv@kyc.example"))?.id).to.equal(byA.id);
        expect((await kyc.findInScope([a, b], b, "inv@kyc.example"))?.id).to.equal(byB.id);
        const listed = await kyc.listInScope([a, b], a);
        expect(listed.map((r) => [r.email, r.id])).to.deep.equal([["inv@kyc.example", byA.id]]);
        expect(await kyc.listInScope([a, b], a, { status: "invited" })).to.deep.equal([]);
        expect((await kyc.list({ email: "inv@kyc.example" })).map((r) => r.apiKeyId)).to.have.members([a, b]);
        let duplicate: unknown;
        await db
          .transaction((q) =>
            kyc.insert(q, {
              id: randomUUID(),
              apiKeyId: a,
              email: "inv@kyc.example",
              needKyc: true,
              status: "invited",
            }),
          )
          .catch((e) => (duplicate = e));
        expect(duplicate, "one record per (key, e-mail)").to.be.instanceOf(Error);
      });

      it("links: stored by the token's hash (never the token); void the open ones, use, lock after failures; submissions and decisions; the event log", async () => {
        const kyc = new KycStore(db, sealer);
        const kycLinks = new KycLinks(db);
        const key = (await apiKeys.create({ email: "links@kyc.example", plan: "Starter" })).record.id;
        const investor = await db.transaction((q) =>
          kyc.insert(q, { id: randomUUID(), apiKeyId: key, email: "l@kyc.example", needKyc: true, status: "invited" }),
        );
        const expiresAt = new Date(Date.now() + 3600_000);
        const tokens = { first: "t".repeat(43), second: "u".repeat(43), third: "v".repeat(43) };
        const first = await db.transaction((q) =>
          kycLinks.insertLink(q, {
            token: tokens.first,
            tokenSealed: "sealed-first",
            investorId: investor.id,
            nonce: "nonce0001",
            expiresAt,
          }),
        );
        expect(first).to.deep.include({
          usedAt: null,
          voidedAt: null,
          lockedAt: null,
          failedAttempts: 0,
          expiresAt: expiresAt.toISOString(),
          tokenSealed: "sealed-first",
        });
        expect(first.tokenHash)
          .to.equal(linkTokenHash(tokens.first))
          .and.to.match(/^[0-9a-f]{64}$/);
        const stored = JSON.stringify(await db.query("SELECT * FROM kyc_links"));
        expect(stored, "the token itself is not stored").not.to.include(tokens.first);
        expect(await db.transaction((q) => kycLinks.voidLinks(q, investor.id))).to.equal(1);
        expect((await kycLinks.linkByToken(tokens.first))?.tokenSealed, "a voided link keeps no sealed token").to.equal(
          null,
        );
        const second = await db.transaction((q) =>
          kycLinks.insertLink(q, {
            token: tokens.second,
            tokenSealed: "sealed-second",
            investorId: investor.id,
            nonce: "nonce0002",
            expiresAt,
          }),
        );
        expect((await kycLinks.openLink(investor.id))?.tokenHash).to.equal(second.tokenHash);
        expect((await kycLinks.linkByToken(tokens.first))?.voidedAt).to.be.a("string");
        expect(await kycLinks.linkByToken("w".repeat(43))).to.equal(undefined);
        await kycLinks.recordInvitation(second.tokenHash, { messageId: "<m@x>" });
        expect((await kycLinks.linkByToken(tokens.second))?.invitationMessageId).to.equal("<m@x>");
        // A third investor's link is locked at the limit of refused submissions and keeps no sealed token.
        const other = await db.transaction((q) =>
          kyc.insert(q, {
            id: randomUUID(),
            apiKeyId: key,
            email: "lock@kyc.example",
            needKyc: true,
            status: "invited",
          }),
        );
        const third = await db.transaction((q) =>
          kycLinks.insertLink(q, {
            token: tokens.third,
            tokenSealed: "sealed-third",
            investorId: other.id,
            nonce: "nonce0003",
            expiresAt,
          }),
        );
        expect(await kycLinks.recordLinkFailure(third.tokenHash, 2)).to.deep.equal({
          failedAttempts: 1,
          locked: false,
        });
        expect(await kycLinks.recordLinkFailure(third.tokenHash, 2)).to.deep.equal({ failedAttempts: 2, locked: true });
        expect(await kycLinks.linkByToken(tokens.third)).to.deep.include({ failedAttempts: 2, tokenSealed: null });
        expect((await kycLinks.linkByToken(tokens.third))?.lockedAt).to.be.a("string");
        await db.transaction(async (q) => {
          expect((await kycLinks.linkByToken(tokens.second, q, true))?.usedAt).to.equal(null);
          await kycLinks.markLinkUsed(q, second.tokenHash);
          const submitted = await kyc.submit(q, investor.id, {
            firstName: "Zoë",
            lastName: "O'Neil",
            country: "IE",
            walletAddress: wallet,
            proofMessage: "signed text",
          });
          expect(submitted).to.deep.include({
            status: "submitted",
            firstName: "Zoë",
            lastName: "O'Neil",
            walletAddress: wallet,
            proofMessage: "signed text",
          });
          await kyc.addEvent(q, investor.id, "submitted", "investor", { walletAddress: wallet });
        });
        expect(await kycLinks.openLink(investor.id)).to.equal(undefined);
        expect((await kycLinks.linkByToken(tokens.second))?.tokenSealed, "a used link keeps no sealed token").to.equal(
          null,
        );
        const approved = await db.transaction((q) => kyc.decide(q, investor.id, "approved", "operator", null));
        expect(approved).to.deep.include({ status: "approved", reviewedBy: "operator", reviewReason: null });
        const restarted = await db.transaction((q) => kyc.restart(q, investor.id, true, "invited"));
        expect(restarted).to.deep.include({
          status: "invited",
          walletAddress: null,
          firstName: null,
          reviewedBy: null,
          submittedAt: null,
        });
        expect((await kyc.events(investor.id)).map((e) => [e.event, e.actor, e.detail])).to.deep.equal([
          ["submitted", "investor", { walletAddress: wallet }],
        ]);
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
        expect(batch!.transactions).to.deep.equal(input.transactions.map((t) => ({ ...t, ...NEW_TX_STATE })));
        expect(await batches.get("no-such-batch")).to.equal(undefined);
        expect(await batches.inFlight()).to.not.include(txId);
      });

      it("markSending / setTxBroadcast / setTxConfirmed / reject: a batch whose second transaction reverted; each answers what it wrote", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        const { sent } = await db.transaction(async (tx) => {
          expect(await batches.lock(tx, txId)).to.equal("prepared");
          return batches.markSending(tx, txId, [
            { index: 0, signedRaw: "0x02aa", txHash: hash(0xa1).toUpperCase().replace("0X", "0x"), status: "signed" },
            { index: 1, signedRaw: "0x02bb", txHash: hash(0xb2), status: "signed" },
          ]);
        });
        let batch = (await batches.get(txId))!;
        expect(sent).to.deep.equal(batch);
        expect(batch.status).to.equal("sending");
        expect(batch.transactions.map((t) => [t.status, t.signedRaw, t.txHash])).to.deep.equal([
          ["signed", "0x02aa", hash(0xa1)],
          ["signed", "0x02bb", hash(0xb2)],
        ]);
        // Stored sealed, bound to its hash: the column holds no signed bytes.
        const stored = await db.query<{ signed_raw: string }>(
          "SELECT signed_raw FROM batch_transactions WHERE tx_id = $1 ORDER BY index",
          [txId],
        );
        expect(stored.map((r) => r.signed_raw.slice(0, 3))).to.deep.equal(["v1.", "v1."]);
        expect(await batches.inFlight()).to.include(txId);
        expect(await batchTransactions.txIdByHash(hash(0xa1).toUpperCase().replace("0X", "0x"))).to.equal(txId);

        const broadcast = await batchTransactions.setTxBroadcast(txId, 0, 7, { batch, tx: batch.transactions[0] });
        expect(broadcast).to.deep.equal(await batchTransactions.transaction(txId, 0));
        expect(broadcast).to.deep.include({ status: "broadcast", broadcastBlock: 7 });
        // Broadcast already: nothing written, nothing answered.
        expect(await batchTransactions.setTxBroadcast(txId, 0, 8, { batch, tx: batch.transactions[0] })).to.equal(
          undefined,
        );
        const confirmed = await batchTransactions.setTxConfirmed(txId, 0, 42, 21_000n);
        expect(confirmed).to.deep.equal(await batchTransactions.transaction(txId, 0));
        expect(await batchTransactions.setTxConfirmed(txId, 0, 42, 21_000n)).to.equal(undefined);
        const rejected = await batches.reject(txId, 1, "reverted", "execution reverted: NotWhitelisted", {
          blockNumber: 43,
          gasUsed: 30_000n,
        });
        batch = (await batches.get(txId))!;
        expect(rejected).to.deep.equal(batch);
        expect(batch.status).to.equal("rejected");
        expect(batch.failedIndex).to.equal(1);
        expect(batch.error).to.equal("execution reverted: NotWhitelisted");
        expect(batch.transactions[0]).to.deep.include({
          status: "confirmed",
          blockNumber: 42,
          gasUsed: "21000",
          error: null,
        });
        expect(batch.transactions[1]).to.deep.include({
          status: "reverted",
          blockNumber: 43,
          gasUsed: "30000",
          error: "execution reverted: NotWhitelisted",
        });
        expect(await batches.inFlight()).to.not.include(txId);
      });

      it("reject: a transaction the node refused, and the signed ones after it, lose their signed bytes (still broadcastable); mined ones keep them", async () => {
        const txId = randomBytes(16).toString("hex");
        const batch = newBatch(txId, null);
        batch.transactions.push({ ...batch.transactions[1], index: 2, unsigned: unsigned(9) });
        await batches.create(batch);
        await batches.markSending(db, txId, [
          { index: 0, signedRaw: "0x02a0", txHash: hash(0xa0), status: "signed" },
          { index: 1, signedRaw: "0x02a1", txHash: hash(0xa1a), status: "signed" },
          { index: 2, signedRaw: "0x02a2", txHash: hash(0xa2), status: "signed" },
        ]);
        await batchTransactions.setTxConfirmed(txId, 0, 60, 21_000n);
        await batches.reject(txId, 1, "refused", "replacement transaction underpriced");
        const rejected = (await batches.get(txId))!;
        expect(rejected.transactions.map((t) => [t.status, t.signedRaw])).to.deep.equal([
          ["confirmed", "0x02a0"],
          ["refused", null],
          ["signed", null],
        ]);
      });

      it("markSuccess ends a sending batch as success with its records written", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        await batches.markSending(db, txId, [
          { index: 0, signedRaw: "0x02cc", txHash: hash(0xc3), status: "signed" },
          { index: 1, signedRaw: "0x02dd", txHash: hash(0xd4), status: "signed" },
        ]);
        await batchTransactions.setTxConfirmed(txId, 0, 50, 60_000n);
        await batchTransactions.setTxConfirmed(txId, 1, 51, 2n ** 70n);
        const ended = await db.transaction((tx) => batches.markSuccess(tx, txId));
        const batch = (await batches.get(txId))!;
        expect(ended).to.deep.equal(batch);
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

      it("markSuccess's events are numbered in commit order (the embedded database numbers them as they are inserted), each gets its deliveries, and setOutcome reaches the batch.completed of that transaction", async () => {
        const { record } = await apiKeys.create({ email: `outbox-${randomUUID()}@example.com`, plan: "Starter" });
        await db.query(
          "INSERT INTO webhook_endpoints (id, api_key_id, url, secret_sealed) VALUES ($1, $2, 'https://example.com/', 'sealed')",
          [`wh_${record.id}`, record.id],
        );
        const finish = async (txId: string, outcome: Record<string, unknown>) => {
          await batches.create({
            ...newBatch(txId, record.id),
            transactions: newBatch(txId, record.id).transactions.slice(0, 1),
          });
          await batches.markSending(db, txId, [
            { index: 0, signedRaw: "0x02ee", txHash: hash(Number.parseInt(txId.slice(0, 6), 16)), status: "signed" },
          ]);
          const sending = (await batches.get(txId))!;
          return db.transaction(async (tx) => {
            const ended = await batches.markSuccess(
              tx,
              txId,
              { index: 0, blockNumber: 9, gasUsed: 21_000n, blockHash: hash(9) },
              sending,
            );
            expect(ended).to.deep.include({ status: "success" });
            expect(ended.transactions[0]).to.deep.include({ status: "confirmed", blockNumber: 9, blockHash: hash(9) });
            await batches.setOutcome(tx, txId, outcome);
            return tx.query<{ position: string | null }>(
              "SELECT position::text AS position FROM events WHERE tx_id = $1",
              [txId],
            );
          });
        };
        const [first, second] = [randomBytes(16).toString("hex"), randomBytes(16).toString("hex")];
        const pending = await finish(first, { first: true });
        expect(pending).to.have.length(3); // transaction.broadcast, transaction.confirmed, batch.completed
        // Inside the writing transaction: numbered already on the embedded database, at commit on the server.
        for (const row of pending) expect(row.position === null).to.equal(db.kind === "postgres");
        await finish(second, { second: true });
        const rows = await db.query<{
          position: string;
          tx_id: string;
          type: string;
          outcome: unknown;
          deliveries: number;
        }>(
          `SELECT e.position::text AS position, e.tx_id, e.type, e.data->'outcome' AS outcome,
                  (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
           FROM events e WHERE e.tx_id IN ($1, $2) ORDER BY e.id`,
          [first, second],
        );
        expect(rows.map((r) => [r.tx_id, r.type])).to.deep.equal(
          [first, second].flatMap((t) => [
            [t, "transaction.broadcast"],
            [t, "transaction.confirmed"],
            [t, "batch.completed"],
          ]),
        );
        const positions = rows.map((r) => BigInt(r.position));
        expect(
          positions.every((p, i) => i === 0 || p > positions[i - 1]),
          "positions grow in the order the transactions committed",
        ).to.equal(true);
        expect(rows.map((r) => r.deliveries)).to.deep.equal([1, 1, 1, 1, 1, 1]);
        expect(
          rows
            .filter((r) => r.type === "batch.completed")
            .map((r) => (typeof r.outcome === "string" ? JSON.parse(r.outcome) : r.outcome)),
        ).to.deep.equal([{ first: true }, { second: true }]);
      });

      it("markSending moves only a prepared batch: a second call finds it moved and writes nothing", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        const first = [
          { index: 0, signedRaw: "0x02e1", txHash: hash(0xe1), status: "signed" as const },
          { index: 1, signedRaw: "0x02e2", txHash: hash(0xe2), status: "signed" as const },
        ];
        expect(await db.transaction((tx) => batches.markSending(tx, txId, first))).to.deep.include({
          moved: true,
          outOfCredits: false,
        });
        const second = first.map((t) => ({ ...t, signedRaw: "0x02ff", txHash: hash(0xff) }));
        expect((await db.transaction((tx) => batches.markSending(tx, txId, second))).moved).to.equal(false);
        const batch = (await batches.get(txId))!;
        expect(batch.status).to.equal("sending");
        expect(batch.transactions.map((t) => t.txHash)).to.deep.equal([hash(0xe1), hash(0xe2)]);
        expect((await db.transaction((tx) => batches.markSending(tx, "no-such-batch", first))).moved).to.equal(false);
      });

      it("markSending refuses a hash another batch holds: nothing moves, nothing is spent, and it names that batch", async () => {
        const { record } = await apiKeys.create({ email: "mark-taken@example.com", plan: "Starter" });
        await setBalance(record.id, "whitelist", 1);
        const credit = { keyId: record.id, method: "whitelist" };
        const holder = randomBytes(16).toString("hex");
        await batches.create(newBatch(holder, null));
        await batches.markSending(db, holder, [
          { index: 0, signedRaw: "0x025a", txHash: hash(0x5a), status: "signed" },
        ]);
        const late = randomBytes(16).toString("hex");
        await batches.create(newBatch(late, record.id));
        const claim = [
          { index: 0, signedRaw: null, txHash: hash(0x5b), status: "broadcast" as const },
          {
            index: 1,
            signedRaw: null,
            txHash: hash(0x5a).toUpperCase().replace("0X", "0x"),
            status: "broadcast" as const,
          },
        ];
        const result = await db.transaction((tx) => batches.markSending(tx, late, claim, credit));
        expect(result).to.deep.equal({
          moved: false,
          outOfCredits: false,
          hashOwners: new Map([[hash(0x5a), holder]]),
        });
        const batch = (await batches.get(late))!;
        expect(batch.status).to.equal("prepared");
        expect(batch.transactions.map((t) => t.txHash)).to.deep.equal([null, null]);
        expect(await db.query("SELECT 1 FROM credit_charges WHERE tx_id = $1", [late])).to.deep.equal([]);
        expect(
          (
            await db.query<{ balance: number }>(
              "SELECT balance FROM credit_balances WHERE key_id = $1 AND method = 'whitelist'",
              [record.id],
            )
          )[0].balance,
        ).to.equal(1);
        // A batch's own hashes are not another batch's: the holder, already sending, is just not moved again.
        const again = await batches.markSending(db, holder, [
          { index: 0, signedRaw: "0x025a", txHash: hash(0x5a), status: "signed" },
        ]);
        expect(again).to.deep.equal({ moved: false, outOfCredits: false, hashOwners: new Map() });
      });

      it("markSending with a credit spends it in the same statement: once per batch, never below 0, nothing without a credit", async () => {
        const { record } = await apiKeys.create({ email: "mark-spend@example.com", plan: "Starter" });
        await setBalance(record.id, "whitelist", 1);
        const credit = { keyId: record.id, method: "whitelist" };
        const balance = async () =>
          (
            await db.query<{ balance: number }>(
              "SELECT balance FROM credit_balances WHERE key_id = $1 AND method = 'whitelist'",
              [record.id],
            )
          )[0].balance;
        const signed = (n: number) => [{ index: 0, signedRaw: "0x02c1", txHash: hash(n), status: "signed" as const }];

        const paid = randomBytes(16).toString("hex");
        await batches.create(newBatch(paid, record.id));
        expect(await batches.markSending(db, paid, signed(0xc1), credit)).to.deep.include({
          moved: true,
          outOfCredits: false,
        });
        expect(await balance()).to.equal(0);
        // Not moved again, so not charged again.
        expect((await batches.markSending(db, paid, signed(0xc1), credit)).moved).to.equal(false);
        expect(await balance()).to.equal(0);

        // Out of credits: nothing moves and nothing is written, with no transaction to roll back.
        const unpaid = randomBytes(16).toString("hex");
        await batches.create(newBatch(unpaid, record.id));
        expect(await batches.markSending(db, unpaid, signed(0xc2), credit)).to.deep.include({
          moved: false,
          outOfCredits: true,
        });
        const batch = (await batches.get(unpaid))!;
        expect(batch.status).to.equal("prepared");
        expect(batch.transactions.map((t) => t.txHash)).to.deep.equal([null, null]);
        expect(await db.query("SELECT 1 FROM credit_charges WHERE tx_id = $1", [unpaid])).to.deep.equal([]);
        expect(await balance()).to.equal(0);
      });

      it("markSending: of sends of two batches on a key's last credit, made at once, exactly one moves and spends it", async () => {
        const { record } = await apiKeys.create({ email: "mark-race@example.com", plan: "Starter" });
        const credit = { keyId: record.id, method: "whitelist" };
        for (let round = 0; round < 5; round++) {
          await setBalance(record.id, "whitelist", 1);
          const ids = [randomBytes(16).toString("hex"), randomBytes(16).toString("hex")];
          for (const id of ids) await batches.create(newBatch(id, record.id));
          const results = await Promise.all(
            ids.map((id) =>
              batches.markSending(
                db,
                id,
                [{ index: 0, signedRaw: "0x02c9", txHash: "0x" + randomBytes(32).toString("hex"), status: "signed" }],
                credit,
              ),
            ),
          );
          expect(results.map((r) => [r.moved, r.outOfCredits]).sort(), `round ${round}`).to.deep.equal([
            [false, true],
            [true, false],
          ]);
          const [row] = await db.query<{ balance: number; charges: number }>(
            "SELECT balance, (SELECT count(*)::int FROM credit_charges WHERE tx_id = ANY($2::text[])) AS charges FROM credit_balances WHERE key_id = $1 AND method = 'whitelist'",
            [record.id, ids],
          );
          expect(row).to.deep.equal({ balance: 0, charges: 1 });
        }
      });

      it("markSuccess with the last confirmation writes both at once, once; getWithHashOwners names other batches' hashes", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        await batches.markSending(db, txId, [
          { index: 0, signedRaw: "0x02f1", txHash: hash(0xf1), status: "signed" },
          { index: 1, signedRaw: "0x02f2", txHash: hash(0xf2), status: "signed" },
        ]);
        await batchTransactions.setTxConfirmed(txId, 0, 60, 1n);
        const ended = await db.transaction((tx) =>
          batches.markSuccess(tx, txId, { index: 1, blockNumber: 61, gasUsed: 2n }),
        );
        // A second end (another runner's) fails its transaction before what travels with it runs: the COMMIT, and a
        // write issued after it, leave nothing.
        let failed: unknown;
        await db
          .transaction(async (tx) => {
            const again = batches.markSuccess(tx, txId, { index: 1, blockNumber: 99, gasUsed: 9n });
            await tx.write("UPDATE batches SET error = $2 WHERE tx_id = $1", [txId, "written by the loser"]);
            return again;
          })
          .catch((error) => (failed = error));
        expect(endedElsewhere(failed), String(failed)).to.equal(true);
        expect(endedElsewhere(new Error("another"))).to.equal(false);
        const batch = (await batches.get(txId))!;
        expect(batch.error).to.equal(null);
        expect(ended).to.deep.equal(batch);
        expect(batch.status).to.equal("success");
        expect(batch.transactions.map((t) => [t.status, t.blockNumber, t.gasUsed])).to.deep.equal([
          ["confirmed", 60, "1"],
          ["confirmed", 61, "2"],
        ]);

        const other = randomBytes(16).toString("hex");
        await batches.create(newBatch(other, null));
        const seen = await batches.getWithHashOwners(other, [
          hash(0xf1),
          hash(0xf2).toUpperCase().replace("0X", "0x"),
          hash(0x99),
        ]);
        expect(seen.batch?.txId).to.equal(other);
        expect([...seen.hashOwners]).to.deep.equal([
          [hash(0xf1), txId],
          [hash(0xf2), txId],
        ]);
        // A batch's own hashes are not "owned by another batch".
        expect([...(await batches.getWithHashOwners(txId, [hash(0xf1)])).hashOwners]).to.deep.equal([]);
        expect((await batches.getWithHashOwners("no-such-batch", [hash(0xf1)])).batch).to.equal(undefined);
      });

      it("forSend: a batch kept for its first send equals what the database gives back, serves every attempt until one marks it sending, and its status is checked when marked", async () => {
        const here = new Batches(db, sealer);
        const elsewhere = new Batches(db, sealer); // another instance on the same database
        const txId = randomBytes(16).toString("hex");
        await here.create(newBatch(txId, null));
        const stored = await elsewhere.get(txId);
        const first = await here.forSend(txId, [hash(0x77)]);
        expect(first.batch).to.deep.equal(stored);
        expect([...first.hashOwners]).to.deep.equal([]);

        const again = randomBytes(16).toString("hex");
        await here.create(newBatch(again, null));
        // Sent through the other instance meanwhile: the kept copy still says prepared, marking it finds it moved.
        await elsewhere.markSending(db, again, [
          { index: 0, signedRaw: "0x02a7", txHash: hash(0xa7), status: "signed" },
        ]);
        const kept = await here.forSend(again, [hash(0xa7)]);
        expect(kept.batch!.status).to.equal("prepared");
        expect([...kept.hashOwners]).to.deep.equal([]); // its own hash is not another batch's
        expect((await db.transaction((tx) => here.markSending(tx, again, []))).moved).to.equal(false);
        // Once a send tried to mark it, it is read from the database.
        expect((await here.forSend(again, [])).batch!.status).to.equal("sending");
        expect([...(await here.forSend(txId, [hash(0xa7)])).hashOwners]).to.deep.equal([[hash(0xa7), again]]);

        // A send that wrote nothing (e.g. only quoted its price: 402) leaves it in memory for the paid attempt.
        const quoted = randomBytes(16).toString("hex");
        await here.create(newBatch(quoted, null));
        const looked = (await here.forSend(quoted, [])).batch!;
        expect((await here.forSend(quoted, [])).batch).to.equal(looked); // the same object: from memory, no statement
        const { sent } = await db.transaction((tx) => here.markSending(tx, quoted, []));
        const reread = (await here.forSend(quoted, [])).batch!;
        expect(reread).to.not.equal(looked); // read from the database again
        expect(reread).to.deep.equal(sent);
        expect(reread.status).to.equal("sending");
      });

      it("the writes that answer from what the caller holds (batch-known.ts) answer what a read then gives: marked sending (signed, reported), signed over the locked row (replaced forms kept, fees changed), ended with a broadcast never recorded", async () => {
        const txId = randomBytes(16).toString("hex");
        await batches.create(newBatch(txId, null));
        const prepared = (await batches.get(txId))!;
        const signed = [
          {
            index: 0,
            signedRaw: "0x02e1",
            txHash: hash(0x5e1).toUpperCase().replace("0X", "0x"),
            status: "signed" as const,
          },
          { index: 1, signedRaw: "0x02e2", txHash: hash(0x5e2), status: "signed" as const },
        ];
        const { sent } = await batches.markSending(db, txId, signed, undefined, prepared);
        expect(sent).to.deep.equal(await batches.get(txId));

        const reported = randomBytes(16).toString("hex");
        await batches.create(newBatch(reported, null));
        const moved = await batches.markSending(
          db,
          reported,
          [0, 1].map((index) => ({
            index,
            signedRaw: null,
            txHash: hash(0x5100 + index),
            status: "broadcast" as const,
          })),
          undefined,
          await batches.get(reported),
        );
        expect(moved.sent!.transactions[0].broadcastAt).to.be.a("string");
        expect(moved.sent).to.deep.equal(await batches.get(reported));

        // Relayed (nothing signed yet), no credit: the move alone; a second move from the same prepared copy finds it moved.
        const relayed = randomBytes(16).toString("hex");
        await batches.create(newBatch(relayed, null));
        const stale = (await batches.get(relayed))!;
        const alone = await batches.markSending(db, relayed, [], undefined, stale);
        expect(alone.sent).to.deep.equal(await batches.get(relayed));
        expect(alone.sent!.status).to.equal("sending");
        expect(await batches.markSending(db, relayed, [], undefined, stale)).to.deep.equal({
          moved: false,
          outOfCredits: false,
          hashOwners: new Map(),
        });

        // Replaced once (its former form listed), then signed again over the locked row with other fees.
        await batchTransactions.replaceSigned(
          db,
          txId,
          0,
          hash(0x5e1),
          { signedRaw: "0x02e3", txHash: hash(0x5e3) },
          { maxFeePerGas: 5n, maxPriorityFeePerGas: 1n },
        );
        const before = await batchTransactions.transaction(txId, 0);
        const resigned = await db.transaction(async (q) => {
          const locked = await batchTransactions.lockTransaction(q, txId, 0);
          expect(locked).to.deep.equal(before);
          return batchTransactions.setTxSigned(
            q,
            txId,
            locked,
            "0x02e4",
            hash(0x5e4).toUpperCase().replace("0X", "0x"),
            {
              ...unsigned(7),
              maxFeePerGas: "3000000000",
            },
          );
        });
        expect(resigned.replaced?.map((r) => r.hash)).to.deep.equal([hash(0x5e1)]);
        expect(resigned).to.deep.equal(await batchTransactions.transaction(txId, 0));

        // Ended from the batch as it was sending, its last transaction's broadcast never recorded: the end's time.
        await batchTransactions.setTxConfirmed(txId, 0, 70, 1n);
        const sending = (await batches.get(txId))!;
        expect(sending.transactions[1].broadcastAt).to.equal(null);
        const ended = await db.transaction((tx) =>
          batches.markSuccess(tx, txId, { index: 1, blockNumber: 71, gasUsed: 2n, blockHash: hash(0x571) }, sending),
        );
        expect(ended.transactions[1].broadcastAt).to.be.a("string");
        expect(ended).to.deep.equal(await batches.get(txId));
      });
    });

    describe("Payments", () => {
      let payments: Payments;
      before(() => (payments = new Payments(db, sealer)));
      const asset = "0x" + "a".repeat(40);
      const reservation = (payer: string, subject = `send:${randomUUID()}`) => ({
        subject,
        route: "POST /send-transactions",
        txId: null,
        network: "eip155:84532",
        asset,
        payTo: "0x" + "b".repeat(40),
        amount: "10000",
        payer,
        authorizationNonce: "0x" + randomBytes(32).toString("hex"),
        validBefore: Math.floor(Date.now() / 1000) + 300,
        payload: { payload: { authorization: {} } },
        requirements: {},
      });
      const newPayer = () => "0x" + randomBytes(20).toString("hex");

      it("one balance, one payment: of four reservations at once against a balance of one price, one is taken, three fall short", async () => {
        const payer = newPayer();
        const outcomes = await Promise.allSettled(
          [0, 1, 2, 3].map(() => payments.reserve(reservation(payer), 10_000n)),
        );
        expect(outcomes.filter((o) => o.status === "fulfilled")).to.have.length(1);
        for (const o of outcomes.filter((x) => x.status === "rejected")) {
          const error = o.reason;
          expect(error).to.be.instanceOf(PaymentShortfall);
          expect(error.open).to.equal(10_000n);
        }
        expect(await payments.openAmount(payer, asset)).to.equal(10_000n);
        // Without a balance read, only a payer with no open payment is taken (the verification covered this one alone).
        await payments.reserve(reservation(payer), 30_000n);
        expect(await payments.openAmount(payer, asset)).to.equal(20_000n);
        const another = newPayer();
        await payments.reserve(reservation(another));
        const refused = await payments.reserve(reservation(another)).catch((e) => e);
        expect(refused).to.be.instanceOf(PaymentShortfall);
        expect(refused.balance).to.equal(undefined);
      });

      it("a subject is paid once while its payment is open or settled; a released payment does not block a new one; bySubject finds the open one, else the latest released", async () => {
        const subject = `send:${randomUUID()}`;
        // Mixed-case addresses and nonce, a quote with nested fields: the reservation answers the row it wrote (built
        // from what it was given: store/payments.ts), as a read gives it, payload included.
        const given = {
          ...reservation(newPayer().toUpperCase().replace("0X", "0x"), subject),
          payTo: "0x" + "Bc".repeat(20),
          authorizationNonce: "0x" + randomBytes(32).toString("hex").toUpperCase(),
          payload: { x402Version: 1, payload: { authorization: { from: "0xAb", value: "10000" }, signature: "0x01" } },
          requirements: {
            scheme: "exact",
            amount: "10000",
            extra: { name: "USDC", version: "2" },
            maxTimeoutSeconds: 60,
          },
        };
        const first = await payments.reserve(given);
        const stored = (await payments.get(first.id))!;
        expect({ ...first }).to.deep.equal({ ...stored });
        expect(first.payload).to.deep.equal(given.payload);
        const second = await payments.reserve(reservation(newPayer(), subject)).catch((e) => e);
        expect(second).to.be.instanceOf(PaymentConflict);
        expect(second.reason).to.equal("subject_paid");
        expect(await payments.markReleased(first.id, "the operation never ran")).to.equal(true);
        const again = await payments.reserve(reservation(newPayer(), subject));
        expect((await payments.bySubject(subject))!.id).to.equal(again.id);
        expect((await payments.get(first.id))!.status).to.equal("released");
        // With none open or settled, the subject's payment is the latest released one.
        expect(await payments.markReleased(again.id, "the operation never ran")).to.equal(true);
        expect((await payments.bySubject(subject))!.id).to.equal(again.id);
        expect(await payments.bySubject(`send:${randomUUID()}`)).to.equal(undefined);
      });

      it("unfinished(quietForMs) leaves out payments changed within that time", async () => {
        const fresh = await payments.reserve(reservation(newPayer()));
        expect((await payments.unfinished()).some((p) => p.id === fresh.id)).to.equal(true);
        expect((await payments.unfinished(60_000)).some((p) => p.id === fresh.id)).to.equal(false);
      });
    });

    describe("IdempotentRequests", () => {
      let kept: IdempotentRequests;
      before(() => (kept = new IdempotentRequests(db)));

      it("the first request under a key holds it; the same request is answered again once kept; another request, or one still running, is a conflict; a key let go is taken again", async () => {
        const key = randomUUID();
        expect(await kept.start("scope-a", key, "/send-transactions", "h1")).to.deep.equal({ kind: "new" });
        expect(await kept.start("scope-a", key, "/send-transactions", "h1")).to.deep.equal({
          kind: "conflict",
          reason: "in progress",
        });
        expect(await kept.start("scope-a", key, "/send-transactions", "h2")).to.deep.equal({
          kind: "conflict",
          reason: "another request",
        });
        expect(
          await kept.start("scope-b", key, "/send-transactions", "h2"),
          "another scope has its own keys",
        ).to.deep.equal({ kind: "new" });
        await kept.keep("scope-a", key, {
          status: 202,
          body: { txId: "0x1", nested: { n: 1 } },
          headers: { "PAYMENT-RESPONSE": "abc" },
        });
        expect(await kept.start("scope-a", key, "/send-transactions", "h1")).to.deep.equal({
          kind: "replay",
          answer: { status: 202, body: { txId: "0x1", nested: { n: 1 } }, headers: { "PAYMENT-RESPONSE": "abc" } },
        });
        await kept.letGo("scope-b", key);
        expect(await kept.start("scope-b", key, "/prepare-transactions", "h3")).to.deep.equal({ kind: "new" });
      });

      it("of two requests under one new key at once, one holds it and the other is told it is in progress", async () => {
        const key = randomUUID();
        const outcomes = await Promise.all([0, 1].map(() => kept.start("scope-c", key, "/x", "h")));
        expect(outcomes.map((o) => o.kind).sort()).to.deep.equal(["conflict", "new"]);
      });
    });

    describe("WalletNonces", () => {
      it("heal reads the nonces in use and rewinds the counter in one transaction: nonces taken meanwhile are never reused", async () => {
        const nonces = new WalletNonces(db);
        const payments = new Payments(db, sealer);
        const address = "0x" + randomBytes(20).toString("hex");
        await nonces.syncFloor(1, address, 10);
        // Each take stores what it signed in its own transaction (here a settlement, as the x402 facilitator does), so
        // a heal sees it in use once it committed; a heal between a take's nonce and its commit would rewind under it.
        const take = async () => {
          const payment = await payments.reserve({
            subject: `settle:${randomUUID()}`,
            route: "POST /x",
            txId: null,
            network: "eip155:1",
            asset: "0x" + "a".repeat(40),
            payTo: "0x" + "b".repeat(40),
            amount: "1",
            payer: "0x" + randomBytes(20).toString("hex"),
            authorizationNonce: "0x" + randomBytes(32).toString("hex"),
            validBefore: Math.floor(Date.now() / 1000) + 300,
            payload: {},
            requirements: {},
          });
          return db.transaction(async (q) => {
            const nonce = await nonces.take(q, 1, address, async () => 0);
            await payments.markSettling(q, payment.id, "0x00", "0x" + randomBytes(32).toString("hex"), {
              from: address,
              nonce,
            });
            return nonce;
          });
        };
        const taken: number[] = [];
        await Promise.all([
          ...Array.from({ length: 12 }, async () => taken.push(await take())),
          ...Array.from({ length: 6 }, () => nonces.heal(1, address, 10)),
        ]);
        expect(new Set(taken).size, `nonces ${taken.sort((a, b) => a - b).join(",")}`).to.equal(taken.length);
      });
    });

    describe("parameters", () => {
      it("round-trip every kind of value a query is given, quotes and backslashes included, and refuse a NUL", async () => {
        const text = `it's a "quote", a back\\slash \\x00, a comma, {braces}, ünïcødé 🙂 and E'x'`;
        const when = new Date("2026-11-23T10:20:30.456Z");
        const [row] = await db.query<Record<string, unknown>>(
          `SELECT $1::text AS text, $2::int AS int, $3::int8::text AS big, $4::numeric::text AS amount, $5::boolean AS yes, $6::timestamptz AS at,
                  $7::text[] AS list, $8::jsonb AS doc, $9::bytea AS bytes, $10::text AS nothing, $11::text[] AS empty`,
          [
            text,
            42,
            (2n ** 62n).toString(),
            "123456789012345678901234567890.5",
            true,
            when,
            ["a", 'b"c', "d\\e", "f,g", "{h}"],
            JSON.stringify({ text, n: 1 }),
            Buffer.from([0, 1, 254, 255]),
            null,
            [],
          ],
        );
        expect(row.text).to.equal(text);
        expect(row.int).to.equal(42);
        expect(row.big).to.equal((2n ** 62n).toString());
        expect(row.amount).to.equal("123456789012345678901234567890.5");
        expect(row.yes).to.equal(true);
        expect(new Date(row.at as string).toISOString()).to.equal(when.toISOString());
        expect(row.list).to.deep.equal(["a", 'b"c', "d\\e", "f,g", "{h}"]);
        expect(row.doc).to.deep.equal({ text, n: 1 });
        expect(Buffer.from(row.bytes as Uint8Array).equals(Buffer.from([0, 1, 254, 255]))).to.equal(true);
        expect(row.nothing).to.equal(null);
        expect(row.empty).to.deep.equal([]);
        // A value is data, never SQL.
        const [echo] = await db.query<{ v: string }>("SELECT $1::text AS v", ["'); DROP TABLE batches; --"]);
        expect(echo.v).to.equal("'); DROP TABLE batches; --");
        expect(await batches.get("'); DROP TABLE batches; --")).to.equal(undefined);
        let refused: unknown;
        await db.query("SELECT $1::text AS v", ["a\u0000b"]).catch((error) => (refused = error));
        expect(refused).to.be.an("error");
      });

      it("a statement first run inside a rolled-back transaction, or by many callers at once, runs again later", async () => {
        const sql = "SELECT $1::int + 1 AS n";
        await db
          .transaction(async (tx) => {
            expect(await tx.query(sql, [1])).to.deep.equal([{ n: 2 }]);
            throw new Error("roll back");
          })
          .catch(() => undefined);
        expect(await db.query(sql, [2])).to.deep.equal([{ n: 3 }]);
        const many = await Promise.all(
          Array.from({ length: 20 }, (_, i) => db.query<{ n: number }>("SELECT $1::int * 2 AS n", [i])),
        );
        expect(many.map(([r]) => r.n)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i * 2));
        let failed: unknown;
        await db.query("SELECT no_such_column FROM batches WHERE tx_id = $1", ["x"]).catch((error) => (failed = error));
        expect((failed as { code?: string })?.code).to.equal("42703");
      });
    });

    describe("transactions", () => {
      before(async () => {
        await db.query("CREATE TABLE IF NOT EXISTS tx_probe (id int PRIMARY KEY, v text)");
      });
      const probe = async (id: number) =>
        (await db.query<{ v: string }>("SELECT v FROM tx_probe WHERE id = $1", [id]))[0]?.v;

      it("a write whose rows nobody reads is committed with the transaction, and read back by its later statements", async () => {
        const seen = await db.transaction(async (tx) => {
          await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [1, "one"]);
          await tx.write("UPDATE tx_probe SET v = v || $2 WHERE id = $1", [1, "+"]);
          return (await tx.query<{ v: string }>("SELECT v FROM tx_probe WHERE id = $1", [1]))[0]?.v;
        });
        expect(seen).to.equal("one+");
        expect(await probe(1)).to.equal("one+");
        // Only writes (the first one without parameters): committed all the same.
        await db.transaction(async (tx) => {
          await tx.write("UPDATE tx_probe SET v = 'bare' WHERE id = 1");
          await tx.write("UPDATE tx_probe SET v = v || $2 WHERE id = $1", [1, "!"]);
        });
        expect(await probe(1)).to.equal("bare!");
        // Nothing at all: nothing to commit, and the connection is free afterwards.
        expect(await db.transaction(async () => 7)).to.equal(7);
        expect(await probe(1)).to.equal("bare!");
      });

      it("a failing write fails its transaction (at the latest when it commits): nothing of it stays, and the error is thrown", async () => {
        await db.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", [2, "kept"]);
        let failed: unknown;
        await db
          .transaction(async (tx) => {
            await tx.write("UPDATE tx_probe SET v = $2 WHERE id = $1", [2, "changed"]);
            await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [2, "duplicate"]);
          })
          .catch((error) => (failed = error));
        expect((failed as { code?: string })?.code).to.equal("23505");
        expect(await probe(2)).to.equal("kept");
        // A statement after a failing write does not run either, and the error reaches its caller.
        let reached = false;
        failed = undefined;
        await db
          .transaction(async (tx) => {
            await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [2, "duplicate"]);
            await tx.query("UPDATE tx_probe SET v = $2 WHERE id = $1", [2, "after"]);
            reached = true;
          })
          .catch((error) => (failed = error));
        expect((failed as { code?: string })?.code).to.equal("23505");
        expect(reached).to.equal(false);
        expect(await probe(2)).to.equal("kept");
        // An error caught inside the transaction still ends it without committing anything.
        failed = undefined;
        await db
          .transaction(async (tx) => {
            await tx.query("UPDATE tx_probe SET v = $2 WHERE id = $1", [2, "lost"]);
            await tx.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [2, "duplicate"]).catch(() => undefined);
          })
          .catch((error) => (failed = error));
        expect(failed).to.be.an("error");
        expect(await probe(2)).to.equal("kept");
        // The connection is usable afterwards.
        await db.transaction((tx) => tx.write("UPDATE tx_probe SET v = $2 WHERE id = $1", [2, "later"]));
        expect(await probe(2)).to.equal("later");
      });

      it("statements issued together each answer with their own rows; one failing fails the transaction", async () => {
        await db.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v", [
          6,
          "six",
        ]);
        const read = "SELECT v FROM tx_probe WHERE id = $1";
        const bump = "UPDATE tx_probe SET v = v || $2 WHERE id = $1 RETURNING v";
        await db.query(read, [6]);
        await db.query(bump, [0, "prepared"]);
        const [before, bumped, fresh] = await db.transaction(async (tx) => {
          await tx.write("UPDATE tx_probe SET v = v || $2 WHERE id = $1", [6, "+"]);
          return tx.together(
            () =>
              [
                tx.query<{ v: string }>(read, [6]),
                tx.query<{ v: string }>(bump, [7, "never"]),
                // Not run before (on the embedded database: prepared now, in its own trip).
                tx.query<{ n: number }>("SELECT $1::int + 1 AS n", [41]),
              ] as const,
          );
        });
        expect(before).to.deep.equal([{ v: "six+" }]);
        expect(bumped).to.deep.equal([]);
        expect(fresh).to.deep.equal([{ n: 42 }]);
        expect(await probe(6)).to.equal("six+");

        let failed: unknown;
        await db
          .transaction(async (tx) => {
            await tx.together(
              () =>
                [
                  tx.query(bump, [6, "!"]),
                  tx.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [6, "duplicate"]),
                ] as const,
            );
          })
          .catch((error) => (failed = error));
        expect((failed as { code?: string })?.code).to.equal("23505");
        expect(await probe(6)).to.equal("six+");
        // Outside a transaction they run as issued.
        expect(
          await db.together(
            () =>
              [db.query<{ v: string }>(read, [6]), db.query<{ n: number }>("SELECT $1::int + 1 AS n", [1])] as const,
          ),
        ).to.deep.equal([[{ v: "six+" }], [{ n: 2 }]]);
      });

      it("a statement whose rows are read later (ahead) travels with the next statement or the COMMIT, or alone at the end of the turn; failing, it fails the transaction and what carried it", async () => {
        await db.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v", [
          8,
          "eight",
        ]);
        const bump = "UPDATE tx_probe SET v = v || $2 WHERE id = $1 RETURNING v";
        const read = "SELECT v FROM tx_probe WHERE id = $1";
        const append = "UPDATE tx_probe SET v = v || $2 WHERE id = $1";
        // Each prepared before it is counted (on the embedded database, a statement's first run prepares it: a trip).
        await db.query(bump, [0, "prepared"]);
        await db.query(read, [0]);
        await db.query(append, [0, "prepared"]);
        const trips = () => Object.values(db.work.snapshot()).reduce((n, f) => n + f.trips, 0);
        // Carried by the next statement: one trip for both, each with its own rows, in the order issued.
        let before = trips();
        const [bumped, after] = await db.transaction(async (tx) => {
          const ahead = tx.ahead<{ v: string }>(bump, [8, "+a"]);
          const read8 = await tx.query<{ v: string }>(read, [8]);
          return [await ahead, read8];
        });
        expect(bumped).to.deep.equal([{ v: "eight+a" }]);
        expect(after).to.deep.equal([{ v: "eight+a" }]);
        // BEGIN, both statements, then the COMMIT: two trips on the embedded database (BEGIN travels with them).
        if (db.kind === "pglite") expect(trips() - before).to.equal(2);
        // Carried by the COMMIT when nobody reads its rows before the transaction ends: one trip in all.
        before = trips();
        let later: Promise<{ v: string }[]> | undefined;
        await db.transaction(async (tx) => {
          later = tx.ahead<{ v: string }>(bump, [8, "+b"]);
          await tx.write(append, [8, "+c"]);
        });
        if (db.kind === "pglite") expect(trips() - before).to.equal(1);
        expect(await later).to.deep.equal([{ v: "eight+a+b" }]);
        expect(await probe(8)).to.equal("eight+a+b+c");
        // Awaited with nothing to carry it: it goes alone at the end of the turn, and its transaction goes on.
        const alone = await db.transaction(async (tx) => {
          const rows = await tx.ahead<{ v: string }>(bump, [8, "+d"]);
          await tx.write(append, [8, "+e"]);
          return rows;
        });
        expect(alone).to.deep.equal([{ v: "eight+a+b+c+d" }]);
        expect(await probe(8)).to.equal("eight+a+b+c+d+e");
        // Failing: the transaction fails there; it and its carrier reject with the error, nothing after it runs.
        let failed: unknown;
        let ahead: Promise<unknown> | undefined;
        let reached = false;
        await db
          .transaction(async (tx) => {
            ahead = tx.ahead("INSERT INTO tx_probe (id, v) VALUES ($1, $2) RETURNING v", [8, "duplicate"]);
            await tx.query(bump, [8, "+never"]);
            reached = true;
          })
          .catch((error) => (failed = error));
        expect((failed as { code?: string })?.code).to.equal("23505");
        expect(reached).to.equal(false);
        expect(
          await ahead!.then(
            () => "answered",
            (error: { code?: string }) => error.code,
          ),
        ).to.equal("23505");
        expect(await probe(8)).to.equal("eight+a+b+c+d+e");
        // Issued in a transaction that threw before any trip: it hears that error, and nothing ran.
        let orphan: Promise<unknown> | undefined;
        await db
          .transaction(async (tx) => {
            orphan = tx.ahead(bump, [8, "+orphan"]);
            throw new Error("changed my mind");
          })
          .catch(() => undefined);
        expect(
          await orphan!.then(
            () => "answered",
            (error: Error) => error.message,
          ),
        ).to.equal("changed my mind");
        expect(await probe(8)).to.equal("eight+a+b+c+d+e");
        // Outside a transaction it is a query.
        expect(await db.ahead<{ v: string }>(read, [8])).to.deep.equal([{ v: "eight+a+b+c+d+e" }]);
      });

      it("a transaction that throws leaves nothing of its writes, queued or run", async () => {
        await db
          .transaction(async (tx) => {
            await tx.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [3, "ran"]);
            await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [4, "queued"]);
            throw new Error("changed my mind");
          })
          .catch(() => undefined);
        expect(await probe(3)).to.equal(undefined);
        expect(await probe(4)).to.equal(undefined);
        // Thrown before any statement ran: nothing to roll back.
        await db
          .transaction(async (tx) => {
            await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [4, "queued"]);
            throw new Error("before the first trip");
          })
          .catch(() => undefined);
        expect(await probe(4)).to.equal(undefined);
      });

      it("statements from outside a transaction never see or join its uncommitted work", async () => {
        await db.query("INSERT INTO tx_probe (id, v) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v", [
          5,
          "before",
        ]);
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let outside: Promise<string | undefined> | undefined;
        const inside = db.transaction(async (tx) => {
          await tx.query("UPDATE tx_probe SET v = $2 WHERE id = $1", [5, "inside"]);
          outside = probe(5);
          await held;
          await tx.write("UPDATE tx_probe SET v = v || $2 WHERE id = $1", [5, "+"]);
          throw new Error("roll back");
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        release();
        await inside.catch(() => undefined);
        // Ran after the transaction (embedded database: one connection) or beside it (server): never saw "inside".
        expect(await outside).to.equal("before");
        expect(await probe(5)).to.equal("before");
      });

      it("a listener hears what a transaction notifies once it commits, and nothing of one rolled back", async () => {
        const heard: number[] = [];
        const stop = await db.listen("tak_probe", () => heard.push(Date.now()));
        const quiet = heard.length; // a listener is called once when it starts (anything committed meanwhile)
        const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
        try {
          await db
            .transaction(async (tx) => {
              await tx.query("SELECT pg_notify('tak_probe', $1)", ["rolled back"]);
              throw new Error("roll back");
            })
            .catch(() => undefined);
          await settle();
          expect(heard.length, "rolled back").to.equal(quiet);
          await db.transaction(async (tx) => {
            await tx.write("INSERT INTO tx_probe (id, v) VALUES ($1, $2)", [16, "notified"]);
            await tx.query("SELECT pg_notify('tak_probe', $1)", ["in a transaction"]);
          });
          await db.query("SELECT pg_notify('tak_probe', $1)", ["alone"]);
          for (let waited = 0; heard.length < quiet + 2 && waited < 3000; waited += 50)
            await new Promise((resolve) => setTimeout(resolve, 50));
          expect(heard.length, "the transaction's and the statement's").to.equal(quiet + 2);
        } finally {
          await stop();
        }
      });
    });
  });
}
