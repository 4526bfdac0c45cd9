import { expect } from "chai";
import { ApiKeys } from "../../service/store/api-keys";
import { AuditLog } from "../../service/store/audit-log";
import { BatchSearch } from "../../service/store/batch-search";
import type { Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { OperatorSessions } from "../../service/store/operator-sessions";
import { Operators } from "../../service/store/operators";
import { PaymentSearch } from "../../service/store/payment-search";
import { WebhookAdmin } from "../../service/store/webhook-admin";

/**
 * The operator console's stores against one backend (a fresh, unmigrated database from `open`): accounts, links and
 * sessions; the audit log; and the lists the console pages through (batches, payments, webhook deliveries), filled
 * in SQL as the engine would have left them.
 */
export function describeConsoleStores(label: string, open: () => Promise<Db>, cleanup?: () => Promise<void>): void {
  describe(`the console's stores on ${label}`, function () {
    this.timeout(60_000);
    let db: Db;
    let keyId: string;

    before(async () => {
      db = await open();
      await migrate(db);
      keyId = (await new ApiKeys(db).create({ email: "tenant@store.test", plan: "Starter" })).record.id;
      // 120 batches, three to a second (ties on created_at), every tenth relayed and in flight, every seventh rejected.
      await db.query(
        `INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, api_key_id, status, body, plan, info, created_at, sent_at, completed_at)
         SELECT '0x' || lpad(to_hex(i), 64, '0'), 84532, 'mintToken', CASE WHEN i % 10 = 0 THEN 'service-relayed' ELSE 'client-signed' END,
                '0x' || lpad(to_hex(i % 4), 40, '0'), CASE WHEN i % 10 = 0 THEN NULL ELSE $1 END,
                CASE WHEN i % 10 = 0 THEN 'sending' WHEN i % 7 = 0 THEN 'rejected' ELSE 'success' END, '{}', '{}', '{}',
                date_trunc('second', now()) - make_interval(secs => i / 3), now() - interval '10 minutes',
                CASE WHEN i % 10 = 0 THEN NULL ELSE now() - interval '10 minutes' + make_interval(secs => i % 5) END
         FROM generate_series(1, 120) i`,
        [keyId],
      );
      await db.query(
        `INSERT INTO batch_transactions (tx_id, index, unsigned, tx_hash, status)
         SELECT tx_id, 0, jsonb_build_object('from', signer, 'to', '0x' || lpad('ee', 40, '0'), 'nonce', 1), '0x' || md5(tx_id) || md5('x' || tx_id),
                CASE status WHEN 'sending' THEN 'broadcast' WHEN 'rejected' THEN 'reverted' ELSE 'confirmed' END
         FROM batches`,
      );
    });
    after(async () => {
      await db?.close();
      await cleanup?.();
    });

    it("operators: one live account per e-mail; a link signs in once, until it expires; removal ends sessions and links", async () => {
      const operators = new Operators(db);
      const sessions = new OperatorSessions(db);
      const ada = (await operators.add({ email: "Ada@Store.test", role: "admin", passwordHash: null }))!;
      expect(ada).to.include({ email: "ada@store.test", role: "admin", hasPassword: false });
      expect(await operators.add({ email: "ada@store.test", role: "viewer", passwordHash: null })).to.equal(undefined);
      await operators.addLink(ada.id, "link-token", new Date(Date.now() + 60_000));
      await operators.addLink(ada.id, "old-token", new Date(Date.now() - 1_000));
      expect(await db.transaction((q) => operators.useLink(q, "old-token"))).to.equal("expired");
      expect(await db.transaction((q) => operators.useLink(q, "nobody's"))).to.equal("unknown");
      expect(await db.transaction((q) => operators.useLink(q, "link-token"))).to.deep.include({
        email: "ada@store.test",
      });
      expect(await db.transaction((q) => operators.useLink(q, "link-token"))).to.equal("used");
      await sessions.open(db, ada.id, "session-token", "link", 60_000);
      const found = (await sessions.find("session-token"))!;
      expect(found.operator.email).to.equal("ada@store.test");
      expect(Date.parse(found.expiresAt) - Date.now()).to.be.within(50_000, 61_000);
      expect(found.revokedAt).to.equal(null);
      await operators.addLink(ada.id, "unused-token", new Date(Date.now() + 60_000));
      expect(await operators.remove("ada@store.test")).to.include({ id: ada.id });
      expect(await sessions.find("session-token")).to.equal(undefined);
      expect(await db.transaction((q) => operators.useLink(q, "unused-token"))).to.equal("used");
      const again = (await operators.add({ email: "ada@store.test", role: "viewer", passwordHash: "scrypt$…" }))!;
      expect(again.id).to.not.equal(ada.id);
      expect(again.hasPassword).to.equal(true);
      await sessions.open(db, again.id, "second-session", "password", 60_000);
      expect(await sessions.revokeAll(again.id)).to.equal(1);
      expect((await sessions.find("second-session"))!.revokedAt).to.be.a("string");
    });

    it("the audit log: newest first by entry (not by text: entry 10 after 9), a page before an entry, one actor's", async () => {
      const audit = new AuditLog(db);
      for (let i = 1; i <= 12; i++)
        await audit.record({
          actor: i % 2 ? "odd@store.test" : "even@store.test",
          action: "credits.add",
          target: keyId,
          before: { n: i - 1 },
          after: { n: i },
        });
      const first = await audit.list({ limit: 5 });
      expect(first.map((e) => (e.after as { n: number }).n)).to.deep.equal([12, 11, 10, 9, 8]);
      expect(
        (await audit.list({ limit: 5, before: first[4].id })).map((e) => (e.after as { n: number }).n),
      ).to.deep.equal([7, 6, 5, 4, 3]);
      expect(
        (await audit.list({ limit: 3, actor: "EVEN@store.test" })).map((e) => (e.after as { n: number }).n),
      ).to.deep.equal([12, 10, 8]);
      expect(await audit.list({ limit: 50, target: "nothing" })).to.deep.equal([]);
    });

    it("batches: pages newest first whose cursor never skips rows of one timestamp; by status, key, address or txId", async () => {
      const search = new BatchSearch(db);
      const seen: string[] = [];
      let before: { createdAt: string; txId: string } | undefined;
      for (;;) {
        const page = await search.page({ limit: 25, before });
        seen.push(...page.map((b) => b.txId));
        if (page.length < 25) break;
        before = { createdAt: page[24].createdAt, txId: page[24].txId };
      }
      expect(seen).to.have.length(120);
      expect(new Set(seen).size).to.equal(120);
      expect(
        (await search.page({ status: "sending", limit: 50 })).every(
          (b) => b.status === "sending" && b.hashes.length === 1,
        ),
      ).to.equal(true);
      expect((await search.page({ status: "sending", limit: 50 })).length).to.equal(12);
      expect((await search.page({ apiKeyId: keyId, limit: 200 })).length).to.equal(108);
      expect((await search.page({ address: "0x" + "0".repeat(39) + "1", limit: 200 })).length).to.equal(30);
      expect((await search.page({ address: "0x" + "0".repeat(38) + "ee", limit: 200 })).length).to.equal(120);
      const one = "0x" + "0".repeat(62) + "2a";
      expect((await search.page({ txId: one, limit: 1 })).map((b) => b.txId)).to.deep.equal([one]);
      expect(await search.queueDepth()).to.deep.equal({ prepared: 0, sending: 12 });
      expect(await search.inFlight(84532, "0x" + "0".repeat(40))).to.equal(6); // 20, 40, … 120: in flight, signed by 0x0…0
    });

    it("activity: batches ended per bucket by outcome with p50/p95 time to confirmed; payments settled and released", async () => {
      const search = new BatchSearch(db);
      const hour = await search.activity(60, 1);
      expect(hour).to.have.length(60);
      const busy = hour.filter((b) => b.success + b.rejected > 0);
      expect(busy.reduce((n, b) => n + b.success, 0)).to.equal(108 - 16);
      expect(busy.reduce((n, b) => n + b.rejected, 0)).to.equal(16); // multiples of 7 but 70
      const p95 = Math.max(...busy.map((b) => b.p95Ms ?? 0));
      expect(p95).to.be.within(3_000, 4_000);
      expect(Date.parse(hour[59].at)).to.be.at.most(Date.now());
      expect(await search.activity(48, 30)).to.have.length(48);
    });

    it("payments: pages by state, payer, batch or settlement transaction; the others of a Multicall3 batch; totals per day and operation", async () => {
      await db.query(
        `INSERT INTO payments (id, subject, route, tx_id, network, asset, pay_to, amount, payer, authorization_nonce, valid_before, requirements, status, settle_tx_hash, settlement, release_reason, created_at)
         SELECT gen_random_uuid(), 'send:' || i, '/send-transactions', CASE WHEN i <= 6 THEN '0x' || lpad(to_hex(i * 10), 64, '0') END, 'eip155:84532', '0xaa', '0xbb', 10000 * i,
                '0x' || lpad(to_hex(i % 2), 40, '0'), 'n' || i, 1, '{}', CASE WHEN i = 7 THEN 'released' ELSE 'settled' END,
                CASE WHEN i < 7 THEN '0x' || lpad(to_hex(i / 4), 64, 'c') END, CASE WHEN i < 7 THEN jsonb_build_object('transaction', '0x' || lpad(to_hex(i / 4), 64, 'c')) END,
                CASE WHEN i = 7 THEN 'the operation failed' END, date_trunc('second', now()) - make_interval(secs => i / 2)
         FROM generate_series(1, 7) i`,
      );
      const search = new PaymentSearch(db);
      const all = await search.page({ limit: 10 });
      expect(all).to.have.length(7);
      expect(all.map((p) => p.subject)).to.include.members(["send:1", "send:7"]);
      expect(all.find((p) => p.subject === "send:3")!.method).to.equal("mintToken");
      const page1 = await search.page({ limit: 4 });
      const page2 = await search.page({ limit: 4, before: { createdAt: page1[3].createdAt, id: page1[3].id } });
      expect([...page1, ...page2].map((p) => p.id).sort()).to.deep.equal(all.map((p) => p.id).sort());
      const shared = "0x" + "c".repeat(63) + "1";
      expect(
        (await search.page({ settlementTransaction: shared, limit: 10 })).map((p) => p.subject).sort(),
      ).to.deep.equal(["send:4", "send:5", "send:6"]);
      expect((await search.page({ status: "released", limit: 10 }))[0]).to.include({
        subject: "send:7",
        releaseReason: "the operation failed",
        settlementTransaction: null,
      });
      expect((await search.page({ payer: "0x" + "0".repeat(39) + "1", limit: 10 })).length).to.equal(4);
      const row = (await search.get(all[0].id))!;
      expect(row.id).to.equal(all[0].id);
      expect(await search.get("not-a-uuid")).to.equal(undefined);
      const totals = await search.totals(7);
      const mint = totals.find((t) => t.operation === "mintToken")!;
      expect(mint).to.include({ settled: 6, amount: String(10000 * 21), released: 0 });
      expect(totals.find((t) => t.operation === "/send-transactions")).to.include({ settled: 0, released: 1 });
      expect(await search.counts()).to.deep.equal({ reserved: 0, settling: 0, settled: 6, released: 1 });
      expect(await search.settlementsInFlight()).to.equal(0);
    });

    it("webhooks: every tenant's endpoints with their backlog; an endpoint's deliveries with attempts, paged; the failed of a range; disable", async () => {
      const admin = new WebhookAdmin(db);
      // The events first: a commit gives every enabled endpoint of the key a delivery of its own (migration 010).
      await db.query(
        "INSERT INTO events (type, api_key_id, tx_id, data) SELECT 'batch.completed', $1, tx_id, '{}' FROM batches WHERE api_key_id IS NOT NULL ORDER BY tx_id LIMIT 12",
        [keyId],
      );
      await db.query(
        "INSERT INTO webhook_endpoints (id, api_key_id, url, event_types, secret_sealed) VALUES ('wh_a', $1, 'https://a.example/hook', '{}', 'sealed')",
        [keyId],
      );
      await db.query(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, position, status, attempts, created_at)
         SELECT 'wh_a', id, COALESCE(position, id), CASE WHEN id % 3 = 0 THEN 'failed' WHEN id % 3 = 1 THEN 'delivered' ELSE 'pending' END, 1, now() - make_interval(mins => id::int)
         FROM events ORDER BY id`,
      );
      await db.query(
        "INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code) SELECT id, 1, created_at, 12, CASE status WHEN 'failed' THEN 500 ELSE 200 END FROM webhook_deliveries",
      );
      const [endpoint] = await admin.endpoints({ limit: 10 });
      expect(endpoint).to.include({
        id: "wh_a",
        keyEmail: "tenant@store.test",
        pending: 4,
        failed: 4,
        delivered: 4,
        disabledAt: null,
      });
      const first = await admin.deliveries("wh_a", { limit: 5 });
      const rest = await admin.deliveries("wh_a", { limit: 20, before: first[4].id });
      expect([...first, ...rest]).to.have.length(12);
      expect(first[0].attempts[0]).to.include({ attempt: 1, durationMs: 12 });
      const failed = await admin.deliveries("wh_a", { limit: 20, status: "failed" });
      expect(failed.every((d) => d.attempts[0].statusCode === 500)).to.equal(true);
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const inRange = await admin.failedIn("wh_a", from, new Date().toISOString(), 100);
      expect(inRange.sort()).to.deep.equal(failed.map((d) => d.id).sort());
      expect(
        await admin.failedIn("wh_a", new Date().toISOString(), new Date(Date.now() + 1000).toISOString(), 100),
      ).to.deep.equal([]);
      expect(await admin.disable("wh_a", "by the operator")).to.equal(true);
      expect(await admin.disable("wh_a", "twice")).to.equal(false);
      expect(await admin.endpoint("wh_a")).to.include({ disabledReason: "by the operator" });
      expect(await admin.endpoints({ limit: 10, state: "active" })).to.deep.equal([]);
      expect(await admin.endpoint("wh_none")).to.equal(undefined);
    });
  });
}
