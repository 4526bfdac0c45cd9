import { createHash, randomBytes, randomUUID } from "node:crypto";
import { expect } from "chai";
import { Sealer } from "../../service/crypto/sealed";
import type { Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Batches } from "../../service/store/batches";
import { BatchTransactions } from "../../service/store/batch-transactions";
import { Payments } from "../../service/store/payments";
import { KycStore } from "../../service/store/kyc";
import { pruneEvents } from "../../service/store/outbox";

/** A signed-looking EIP-3009 payment payload: what must never stay usable in the database. */
export function fakePaymentPayload() {
  const signature = "0x" + randomBytes(65).toString("hex");
  const nonce = "0x" + randomBytes(32).toString("hex");
  return {
    signature,
    nonce,
    payload: {
      x402Version: 2,
      accepted: {
        scheme: "exact",
        network: "eip155:84532",
        asset: "0x" + "11".repeat(20),
        amount: "10000",
        payTo: "0x" + "22".repeat(20),
      },
      payload: {
        signature,
        authorization: {
          from: "0x" + "33".repeat(20),
          to: "0x" + "22".repeat(20),
          value: "10000",
          validAfter: "0",
          validBefore: "9999999999",
          nonce,
        },
      },
    },
  };
}

const requirements = {
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x" + "11".repeat(20),
  amount: "10000",
  payTo: "0x" + "22".repeat(20),
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};

/**
 * A payment of 0.01 USDC for the send of `txId` (or of nothing), reserved; the payer's balance (one balance, one payment)
 * covers every payment these tests reserve for it.
 */
function reservePayment(payments: Payments, p: ReturnType<typeof fakePaymentPayload>, txId: string | null = null) {
  return payments.reserve(
    {
      subject: `send:${txId ?? randomUUID()}`,
      route: "POST /send-transactions",
      txId,
      network: "eip155:84532",
      asset: requirements.asset,
      payTo: requirements.payTo,
      amount: "10000",
      payer: "0x" + "33".repeat(20),
      authorizationNonce: p.nonce,
      validBefore: 9999999999,
      payload: p.payload,
      requirements,
    },
    10n ** 12n,
  );
}

/**
 * Payments at rest and migration 008 against one backend. `open` returns an empty, unmigrated database each call.
 */
export function describeAtRest(label: string, open: () => Promise<Db>, cleanup?: () => Promise<void>): void {
  describe(`nothing usable at rest, on ${label}`, function () {
    this.timeout(60_000);
    const sealer = new Sealer("k".repeat(64));
    const opened: Db[] = [];
    const fresh = async () => {
      const db = await open();
      opened.push(db);
      return db;
    };
    after(async () => {
      for (const db of opened) await db.close();
      await cleanup?.();
    });

    it("a payment's authorization is stored sealed while reserved, opened when read, and gone once settled or released; so is its settlement transaction", async () => {
      const db = await fresh();
      await migrate(db);
      const payments = new Payments(db, sealer);
      const reserve = (p: ReturnType<typeof fakePaymentPayload>) => reservePayment(payments, p);
      const raw = async () => JSON.stringify(await db.query("SELECT * FROM payments"));

      const a = fakePaymentPayload();
      const reserved = await reserve(a);
      expect(await raw(), "the signature is not in any column").not.to.include(a.signature.slice(2));
      expect((await payments.get(reserved.id))!.payload).to.deep.equal(a.payload);
      const settleTx = "0x02" + randomBytes(120).toString("hex");
      await db.transaction((q) => payments.markSettling(q, reserved.id, settleTx, "0x" + "ab".repeat(32)));
      expect(await raw(), "the settlement transaction is sealed while settling").not.to.include(settleTx.slice(2));
      expect((await payments.get(reserved.id))!.settleTxRaw).to.equal(settleTx);
      await payments.markSettled(reserved.id, {
        success: true,
        transaction: "0x" + "ab".repeat(32),
        network: "eip155:84532",
        payer: "0x" + "33".repeat(20),
      });
      const settled = (await payments.get(reserved.id))!;
      expect(settled).to.deep.include({
        status: "settled",
        settleTxRaw: null,
        settleTxHash: "0x" + "ab".repeat(32),
        authorizationNonce: a.nonce,
        amount: "10000",
      });
      expect(settled.payload).to.equal(null);
      const [row] = await db.query<Record<string, unknown>>(
        "SELECT payload, payload_sealed, settle_tx_raw FROM payments WHERE id = $1",
        [reserved.id],
      );
      expect(row).to.deep.equal({ payload: null, payload_sealed: null, settle_tx_raw: null });

      const b = fakePaymentPayload();
      const released = await reserve(b);
      expect(await payments.markReleased(released.id, "the operation failed")).to.equal(true);
      const [releasedRow] = await db.query<Record<string, unknown>>(
        "SELECT payload, payload_sealed, settle_tx_raw, status FROM payments WHERE id = $1",
        [released.id],
      );
      expect(releasedRow).to.deep.equal({
        payload: null,
        payload_sealed: null,
        settle_tx_raw: null,
        status: "released",
      });

      // Sealed for one payment, it cannot be opened as another's; with another key it cannot be opened at all.
      const c = fakePaymentPayload();
      const other = await reserve(c);
      await db.query(
        "UPDATE payments SET payload_sealed = (SELECT payload_sealed FROM payments WHERE id = $2) WHERE id = $1",
        [other.id, (await reserve(fakePaymentPayload())).id],
      );
      let moved: unknown;
      await payments
        .get(other.id)
        .then((p) => p!.payload)
        .catch((e) => (moved = e));
      expect((moved as Error)?.message).to.match(/cannot be opened/);
      let otherKey: unknown;
      const d = await reserve(fakePaymentPayload());
      await new Payments(db, new Sealer("z".repeat(64)))
        .get(d.id)
        .then((p) => p!.payload)
        .catch((e) => (otherKey = e));
      expect((otherKey as Error)?.message).to.match(/cannot be opened/);

      // The table itself refuses an ended payment that still holds an authorization.
      let refused: unknown;
      await db
        .query("UPDATE payments SET payload_sealed = 'v1.x.y.z' WHERE id = $1", [released.id])
        .catch((e) => (refused = e));
      expect(refused, "CHECK payments_ended_hold_nothing_usable").to.be.an("error");
    });

    it("a payment settled with what is known (one statement) ends as one settled by id: same row, same event, once", async () => {
      const db = await fresh();
      await migrate(db);
      const payments = new Payments(db, sealer);
      const settleOne = async (known: boolean) => {
        const txId = "0x" + randomBytes(32).toString("hex");
        await db.query(
          "INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, status, body, plan, info) VALUES ($1, 84532, 'agentCreateToken', 'service-relayed', $2, 'success', '{}', '{}', '{}')",
          [txId, "0x" + "44".repeat(20)],
        );
        const reserved = await reservePayment(payments, fakePaymentPayload(), txId);
        await db.transaction(async (q) => {
          await payments.bindToOperation(q, reserved.id);
          await payments.setOperationHash(q, reserved.id, "0x" + "cd".repeat(32));
        });
        const bound = (await payments.get(reserved.id))!;
        const settlement = {
          success: true,
          transaction: "0x" + "cd".repeat(32),
          network: "eip155:84532",
          payer: bound.payer,
        };
        const answered = await payments.markSettled(
          bound.id,
          settlement,
          known ? { payment: bound, apiKeyId: null } : undefined,
        );
        const again = await payments.markSettled(
          bound.id,
          settlement,
          known ? { payment: bound, apiKeyId: null } : undefined,
        );
        const events = await db.query<{ type: string; hash: string; data: { txId: string } }>(
          "SELECT type, hash, data FROM events WHERE tx_id = $1",
          [txId],
        );
        const stored = (await payments.get(bound.id))!;
        const same = (r: typeof stored) => ({
          ...r,
          id: "id",
          subject: "subject",
          txId: "txId",
          authorizationNonce: "nonce",
        });
        return {
          answered: answered && same(answered),
          again,
          stored: same(stored),
          events: events.map((e) => ({ ...e, data: { ...e.data, txId: "txId" } })),
        };
      };
      const byId = await settleOne(false);
      const withKnown = await settleOne(true);
      expect(withKnown.stored).to.deep.include({
        status: "settled",
        payload: null,
        settleTxRaw: null,
        settleTxHash: "0x" + "cd".repeat(32),
      });
      expect(withKnown.answered).to.deep.equal(withKnown.stored);
      expect(withKnown.again).to.equal(undefined);
      expect(withKnown.events).to.have.length(1);
      expect(withKnown.events[0]).to.deep.include({ type: "payment.settled", hash: "0x" + "cd".repeat(32) });
      expect(withKnown.events).to.deep.equal(byId.events);
      expect(withKnown.stored).to.deep.equal(byId.stored);
    });

    it("a settlement transaction shared by several payments is replaced and promoted on all of them at once, sealed for each", async () => {
      const db = await fresh();
      await migrate(db);
      const payments = new Payments(db, sealer);
      const hash = (n: number) => "0x" + n.toString(16).padStart(2, "0").repeat(32);
      const rawOf = (n: number) => "0x02" + n.toString(16).padStart(2, "0").repeat(100);
      const batch = await Promise.all([0, 1, 2].map(() => reservePayment(payments, fakePaymentPayload())));
      const other = await reservePayment(payments, fakePaymentPayload());
      await db.transaction(async (q) => {
        for (const p of batch)
          await payments.markSettling(q, p.id, rawOf(1), hash(1), { from: "0x" + "44".repeat(20), nonce: 7 });
        await payments.markSettling(q, other.id, rawOf(9), hash(9));
      });
      expect((await payments.carriedBy(hash(1))).map((p) => p.id).sort()).to.deep.equal(batch.map((p) => p.id).sort());

      expect(await payments.replaceSettlement(hash(1), rawOf(2), hash(2))).to.equal(true);
      expect(await payments.replaceSettlement(hash(1), rawOf(3), hash(3)), "already replaced").to.equal(false);
      const replaced = await payments.carriedBy(hash(2));
      expect(replaced).to.have.length(3);
      for (const p of replaced)
        expect(p).to.deep.include({ settleTxRaw: rawOf(2), settleTxReplaced: [{ hash: hash(1), raw: rawOf(1) }] });
      const sealedRaws = await db.query<{ settle_tx_raw: string }>(
        "SELECT settle_tx_raw FROM payments WHERE settle_tx_hash = $1",
        [hash(2)],
      );
      expect(new Set(sealedRaws.map((r) => r.settle_tx_raw)).size, "each payment's copy is sealed for it").to.equal(3);
      expect(JSON.stringify(sealedRaws)).not.to.include(rawOf(2).slice(4));

      // The replaced one was mined after all: it is every payment's settlement again, the replacement kept as replaced.
      await payments.promoteSettlement(hash(2), hash(1));
      const promoted = await payments.carriedBy(hash(1));
      expect(promoted).to.have.length(3);
      for (const p of promoted)
        expect(p).to.deep.include({ settleTxRaw: rawOf(1), settleTxReplaced: [{ hash: hash(2), raw: rawOf(2) }] });
      expect(await payments.get(other.id)).to.deep.include({
        settleTxHash: hash(9),
        settleTxRaw: rawOf(9),
        settleTxReplaced: [],
      });
    });

    it("KYC details are sealed: an investor's e-mail, names, country, wallet, signed message and reason are in no column of any table, events carry identifiers only, and the records are found by e-mail and read whole", async () => {
      const db = await fresh();
      await migrate(db);
      const kyc = new KycStore(db, sealer);
      await db.query("INSERT INTO api_keys (id, key_hash, email, plan) VALUES ('k1', 'h', 'tenant@x', 'Starter')");
      const unique = randomBytes(4).toString("hex");
      const person = {
        email: `ada-${unique}@investor.test`,
        firstName: `Ada${unique.replace(/[0-9]/g, "")}x`,
        lastName: `Lovelace${unique.replace(/[0-9]/g, "")}y`,
        country: "GB",
        walletAddress: "0x" + randomBytes(20).toString("hex"),
        proofMessage: `127.0.0.1 wants you to sign in with your Ethereum account: marker-${unique}`,
        reason: `documents of ${unique} do not match`,
      };
      const invited = await db.transaction(async (q) => {
        const r = await kyc.insert(q, {
          id: randomUUID(),
          apiKeyId: "k1",
          email: person.email,
          needKyc: true,
          status: "invited",
        });
        await kyc.addEvent(q, r.id, "created", "key:k1", { needKyc: true });
        return r;
      });
      await db.transaction(async (q) => {
        await kyc.submit(q, invited.id, {
          firstName: person.firstName,
          lastName: person.lastName,
          country: person.country,
          walletAddress: person.walletAddress,
          proofMessage: person.proofMessage,
        });
        await kyc.addEvent(q, invited.id, "submitted", "investor", { walletAddress: person.walletAddress });
      });
      await db.transaction(async (q) => {
        await kyc.decide(q, invited.id, "rejected", "operator", person.reason);
        await kyc.addEvent(q, invited.id, "rejected", "operator", {
          reason: person.reason,
          previousStatus: "submitted",
        });
      });

      // Read back whole, found by its e-mail in any case.
      const found = (await kyc.findInScope(["k1"], "k1", person.email.toUpperCase()))!;
      expect(found).to.deep.include({
        email: person.email,
        firstName: person.firstName,
        lastName: person.lastName,
        country: "GB",
        walletAddress: person.walletAddress,
        proofMessage: person.proofMessage,
        reviewReason: person.reason,
      });
      expect((await kyc.list({ email: person.email })).map((r) => r.id)).to.deep.equal([invited.id]);
      expect((await kyc.events(invited.id)).map((e) => e.detail)).to.deep.equal([
        { needKyc: true },
        { walletAddress: person.walletAddress },
        { reason: person.reason, previousStatus: "submitted" },
      ]);

      // Nothing of it in any row of any table (the e-mail's keyed hash reveals nothing without the data key).
      const tables = await db.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
      );
      let dump = "";
      for (const { name } of tables) dump += JSON.stringify(await db.query(`SELECT * FROM "${name}"`)).toLowerCase();
      // (The country, two letters, is too short to look for in a dump: it is sealed with the names.)
      for (const [field, value] of Object.entries(person).filter(([f]) => f !== "country"))
        expect(dump, field).not.to.include(value.toLowerCase().replace(/^0x/, ""));
      const events = await db.query<{ type: string; data: Record<string, unknown> }>(
        "SELECT type, data FROM events WHERE type LIKE 'kyc.%' ORDER BY id",
      );
      expect(events.map((e) => e.type)).to.deep.equal(["kyc.submitted", "kyc.rejected"]);
      for (const e of events)
        expect(Object.keys(e.data).sort()).to.deep.equal([
          "investorId",
          "needKyc",
          "reviewedAt",
          "reviewedBy",
          "status",
          "submittedAt",
        ]);

      // Sealed for one record, a value cannot be opened as another's; the table refuses a clear value written again.
      const other = await db.transaction((q) =>
        kyc.insert(q, {
          id: randomUUID(),
          apiKeyId: "k1",
          email: `other-${unique}@investor.test`,
          needKyc: true,
          status: "invited",
        }),
      );
      await db.query(
        "UPDATE kyc_investors SET details_sealed = (SELECT details_sealed FROM kyc_investors WHERE id = $2) WHERE id = $1",
        [other.id, invited.id],
      );
      let moved: unknown;
      await kyc.get(other.id).catch((e) => (moved = e));
      expect((moved as Error)?.message).to.match(/unable to authenticate|Unsupported state/);
      let refused: unknown;
      await db
        .query("UPDATE kyc_investors SET first_name = 'Clear' WHERE id = $1", [invited.id])
        .catch((e) => (refused = e));
      expect(refused, "CHECK kyc_investors_nothing_in_clear").to.be.an("error");
    });

    it("migration 056 and the next start seal what an older version stored in clear (investors, their history) and strip the personal data its KYC events carried", async () => {
      const db = await fresh();
      expect(await migrate(db, { before: "056" })).to.include("055_signers_per_key.sql");
      const unique = randomBytes(4).toString("hex");
      const clear = {
        email: `old-${unique}@investor.test`,
        firstName: `Grace${unique.replace(/[0-9]/g, "")}q`,
        lastName: `Hopper${unique.replace(/[0-9]/g, "")}z`,
        wallet: "0x" + randomBytes(20).toString("hex"),
        reason: `stale ${unique}`,
      };
      await db.query("INSERT INTO api_keys (id, key_hash, email, plan) VALUES ('k1', 'h', 'tenant@x', 'Starter')");
      const id = randomUUID();
      await db.query(
        `INSERT INTO kyc_investors (id, api_key_id, email, need_kyc, status, first_name, last_name, country, wallet_address, proof_message, submitted_at, reviewed_by, reviewed_at, review_reason)
         VALUES ($1, 'k1', $2, true, 'rejected', $3, $4, 'FR', $5, $6, now(), 'operator', now(), $7)`,
        [id, clear.email, clear.firstName, clear.lastName, clear.wallet, `message of ${clear.email}`, clear.reason],
      );
      await db.query(
        "INSERT INTO kyc_events (investor_id, event, actor, detail) VALUES ($1, 'submitted', 'investor', $2), ($1, 'rejected', 'operator', $3)",
        [
          id,
          JSON.stringify({ walletAddress: clear.wallet }),
          JSON.stringify({ reason: clear.reason, previousStatus: "submitted" }),
        ],
      );
      await db.query("INSERT INTO events (type, api_key_id, data) VALUES ('kyc.rejected', 'k1', $1)", [
        JSON.stringify({
          investorId: id,
          email: clear.email,
          kyc: {
            status: "rejected",
            needKyc: true,
            firstName: clear.firstName,
            lastName: clear.lastName,
            walletAddress: clear.wallet,
            reason: clear.reason,
            submittedAt: null,
            reviewedAt: null,
            reviewedBy: "operator",
          },
        }),
      ]);

      expect(await migrate(db)).to.include("056_kyc_sealed.sql");
      const [event] = await db.query<{ data: Record<string, unknown> }>(
        "SELECT data FROM events WHERE type = 'kyc.rejected'",
      );
      expect(event.data).to.deep.equal({
        investorId: id,
        status: "rejected",
        needKyc: true,
        submittedAt: null,
        reviewedAt: null,
        reviewedBy: "operator",
      });
      const kyc = new KycStore(db, sealer);
      expect(await kyc.sealClearDetails()).to.equal(3);
      const dump = JSON.stringify([
        await db.query("SELECT * FROM kyc_investors"),
        await db.query("SELECT * FROM kyc_events"),
        await db.query("SELECT * FROM events"),
      ]).toLowerCase();
      for (const [field, value] of Object.entries(clear))
        expect(dump, field).not.to.include(value.toLowerCase().replace(/^0x/, ""));
      expect(await kyc.findInScope(["k1"], "k1", clear.email)).to.deep.include({
        id,
        email: clear.email,
        firstName: clear.firstName,
        country: "FR",
        walletAddress: clear.wallet,
        reviewReason: clear.reason,
      });
      expect((await kyc.events(id)).map((e) => e.detail)).to.deep.equal([
        { walletAddress: clear.wallet },
        { reason: clear.reason, previousStatus: "submitted" },
      ]);
      expect(await kyc.sealClearDetails(), "nothing left in clear").to.equal(0);
    });

    it("events are purged on schedule: an event older than the retention window goes even while a disabled endpoint still owes it", async () => {
      const db = await fresh();
      await migrate(db);
      await db.query("INSERT INTO api_keys (id, key_hash, email, plan) VALUES ('k1', 'h', 'tenant@x', 'Starter')");
      await db.query(
        "INSERT INTO webhook_endpoints (id, api_key_id, url, secret_sealed) VALUES ('wh_1', 'k1', 'https://example.com/h', 'v1.x.y.z')",
      );
      await db.transaction((q) =>
        q.query("INSERT INTO events (type, api_key_id, data) VALUES ('kyc.submitted', 'k1', '{}')"),
      );
      // The endpoint failed for a day and was disabled: what it is owed waits for it to be enabled again.
      await db.query("UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'failing for a day'");
      const [{ n }] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'",
      );
      expect(n, "a delivery is owed").to.equal(1);
      await db.query("UPDATE events SET created_at = now() - interval '8 days'");
      expect(await pruneEvents(db, 7 * 86_400_000)).to.equal(1);
      expect(await db.query("SELECT * FROM events")).to.deep.equal([]);
      expect(await db.query("SELECT * FROM webhook_deliveries")).to.deep.equal([]);
    });

    it("migration 008 scrubs what older versions stored: ended payments' authorizations and settlement transactions, link tokens, unsent signed transactions of rejected batches", async () => {
      const db = await fresh();
      const before = await migrate(db, { before: "007" });
      expect(before).to.include("006_rams.sql").and.not.to.include("008_security.sql");
      const payloads = {
        settled: fakePaymentPayload(),
        released: fakePaymentPayload(),
        reserved: fakePaymentPayload(),
        settling: fakePaymentPayload(),
      };
      const settleRaw = "0x02" + randomBytes(100).toString("hex");
      const ids: Record<string, string> = {};
      for (const [status, p] of Object.entries(payloads)) {
        ids[status] = randomUUID();
        await db.query(
          `INSERT INTO payments (id, subject, route, network, asset, pay_to, amount, payer, authorization_nonce, valid_before, payload, requirements, status, settle_tx_raw, settle_tx_hash)
           VALUES ($1, $2, 'POST /send-transactions', 'eip155:84532', 'a', 'b', 10000, 'p', $3, 9999999999, $4, $5, $6, $7, $8)`,
          [
            ids[status],
            `send:${status}`,
            p.nonce,
            JSON.stringify(p.payload),
            JSON.stringify(requirements),
            status,
            status === "settled" || status === "settling" ? settleRaw : null,
            status === "settled" || status === "settling" ? "0x" + "cd".repeat(32) : null,
          ],
        );
      }
      await db.query("INSERT INTO api_keys (id, key_hash, email, plan) VALUES ('k1', 'h', 'e@x', 'Starter')");
      const investor = randomUUID();
      await db.query(
        "INSERT INTO kyc_investors (id, api_key_id, email, need_kyc, status) VALUES ($1, 'k1', 'i@x', true, 'invited')",
        [investor],
      );
      const token = randomBytes(32).toString("base64url");
      await db.query(
        "INSERT INTO kyc_links (token, investor_id, nonce, expires_at) VALUES ($1, $2, 'n1', now() + interval '1 day')",
        [token, investor],
      );
      const signedRaw = (n: number) => "0x02f8" + n.toString(16).padStart(2, "0") + randomBytes(90).toString("hex");
      const raws = {
        confirmed: signedRaw(1),
        reverted: signedRaw(2),
        signed: signedRaw(3),
        pendingBatch: signedRaw(4),
      };
      for (const [txId, status] of [
        ["0xrejected", "rejected"],
        ["0xsending", "sending"],
      ]) {
        await db.query(
          "INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, status, body, plan, info) VALUES ($1, 1, 'm', 'client-signed', 's', $2, '{}', '{}', '{}')",
          [txId, status],
        );
      }
      const tx = (txId: string, index: number, raw: string, status: string) =>
        db.query(
          "INSERT INTO batch_transactions (tx_id, index, unsigned, signed_raw, tx_hash, status) VALUES ($1, $2, '{}', $3, $4, $5)",
          [txId, index, raw, "0x" + randomBytes(32).toString("hex"), status],
        );
      await tx("0xrejected", 0, raws.confirmed, "confirmed");
      await tx("0xrejected", 1, raws.reverted, "reverted");
      await tx("0xrejected", 2, raws.signed, "signed");
      await tx("0xsending", 0, raws.pendingBatch, "signed");

      expect(await migrate(db)).to.include("008_security.sql");
      const dump = async (): Promise<string> =>
        JSON.stringify(
          await Promise.all(["payments", "kyc_links", "batch_transactions"].map((t) => db.query(`SELECT * FROM ${t}`))),
        );
      let all = await dump();
      for (const status of ["settled", "released"] as const)
        expect(all, `${status} payment's signature`).not.to.include(payloads[status].signature.slice(2));
      expect(all, "link token").not.to.include(token);
      expect(all, "an unsent transaction of a rejected batch").not.to.include(raws.signed.slice(2));
      expect(all, "a sending batch keeps its signed transaction").to.include(raws.pendingBatch.slice(2));
      expect(all, "mined transactions are kept (not usable: their nonce is spent)").to.include(raws.confirmed.slice(2));
      const [link] = await db.query<{ token_hash: string }>("SELECT token_hash FROM kyc_links");
      expect(link.token_hash).to.equal(createHash("sha256").update(token).digest("hex"));

      // What is still waiting to be settled is sealed at the service's next start, and stays usable by the service.
      const payments = new Payments(db, sealer);
      expect(await payments.sealClearSecrets()).to.equal(2);
      all = await dump();
      for (const status of ["reserved", "settling"] as const)
        expect(all, `${status} payment's signature`).not.to.include(payloads[status].signature.slice(2));
      expect(all, "a settlement transaction being settled is sealed").not.to.include(settleRaw.slice(2));
      expect((await payments.get(ids.reserved))!.payload).to.deep.equal(payloads.reserved.payload);
      expect((await payments.get(ids.settling))!.settleTxRaw).to.equal(settleRaw);
      expect(await payments.sealClearSecrets()).to.equal(0);
      // So is a signed transaction not mined yet; mined ones stay as they are (their nonce is spent).
      const batches = new Batches(db, sealer);
      const batchTransactions = new BatchTransactions(db, sealer);
      expect(await batchTransactions.sealClearSigned()).to.equal(1);
      all = await dump();
      expect(all, "a pending batch's signed transaction is sealed").not.to.include(raws.pendingBatch.slice(2));
      expect((await batches.get("0xsending"))!.transactions[0].signedRaw).to.equal(raws.pendingBatch);
      expect((await batches.get("0xrejected"))!.transactions.map((t) => t.signedRaw)).to.deep.equal([
        raws.confirmed,
        raws.reverted,
        null,
      ]);
      expect(await batchTransactions.sealClearSigned()).to.equal(0);
    });
  });
}
