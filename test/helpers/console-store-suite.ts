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
import { WebhookDeliveries } from "../../service/store/webhook-deliveries";

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
      expect(await db.transaction((q) => operators.useLink(q, "old-token"))).to.deep.equal({
        refused: "expired",
        email: "ada@store.test",
      });
      expect(await db.transaction((q) => operators.useLink(q, "nobody's"))).to.deep.equal({ refused: "unknown" });
      expect(await db.transaction((q) => operators.useLink(q, "link-token"))).to.deep.include({
        email: "ada@store.test",
      });
      expect(await db.transaction((q) => operators.useLink(q, "link-token"))).to.deep.include({ refused: "used" });
      await sessions.open(db, ada.id, "session-token", "link", 60_000);
      const found = (await sessions.find("session-token"))!;
      expect(found.operator.email).to.equal("ada@store.test");
      expect(Date.parse(found.expiresAt) - Date.now()).to.be.within(50_000, 61_000);
      expect(found.revokedAt).to.equal(null);
      await operators.addLink(ada.id, "unused-token", new Date(Date.now() + 60_000));
      expect(await operators.remove("ada@store.test")).to.include({ id: ada.id });
      expect(await sessions.find("session-token")).to.equal(undefined);
      expect(await db.transaction((q) => operators.useLink(q, "unused-token"))).to.deep.include({ refused: "used" });
      const again = (await operators.add({ email: "ada@store.test", role: "viewer", passwordHash: "scrypt$…" }))!;
      expect(again.id).to.not.equal(ada.id);
      expect(again.hasPassword).to.equal(true);
      await sessions.open(db, again.id, "second-session", "password", 60_000);
      await sessions.open(db, again.id, "third-session", "password", 60_000);
      // A password change ends every session but the one that made it.
      expect(await sessions.revokeAll(again.id, "third-session")).to.equal(1);
      expect((await sessions.find("second-session"))!.revokedAt).to.be.a("string");
      expect((await sessions.find("third-session"))!.revokedAt).to.equal(null);
      expect(await sessions.revokeAll(again.id)).to.equal(1);
      // A session's use is written (the idle timeout counts from it).
      await db.query("UPDATE operator_sessions SET last_seen_at = now() - interval '1 hour'");
      await sessions.touch("third-session");
      expect(Date.now() - Date.parse((await sessions.find("third-session"))!.lastSeenAt)).to.be.below(60_000);
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
      await audit.record({ actor: "odd@store.test", action: "keys.revoke", target: keyId });
      expect(await audit.actions()).to.deep.equal(["credits.add", "keys.revoke"]);
      expect(await audit.count({ action: "credits.add" })).to.deep.equal({ total: 12, newer: 0 });
      expect(await audit.count({ actor: "odd@store.test" }, first[1].id)).to.deep.equal({ total: 7, newer: 1 });
      const back = await audit.list({ limit: 3, after: first[3].id, action: "credits.add" });
      expect(back.map((e) => (e.after as { n: number }).n)).to.deep.equal([12, 11, 10]);
      const since = (await audit.list({ limit: 1 }))[0].at;
      expect((await audit.list({ limit: 50, from: since })).map((e) => e.action)).to.include("keys.revoke");
      expect(await audit.list({ limit: 50, to: "2000-01-01T00:00:00Z" })).to.deep.equal([]);
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

    it("batches: filters by chain, method and time; counts that place a page; pages both ways; stuck transactions; in flight per chain; the relayer's gas", async () => {
      const search = new BatchSearch(db);
      await db.query(
        "UPDATE batches SET chain_id = 11155111 WHERE tx_id IN (SELECT tx_id FROM batches ORDER BY created_at DESC, tx_id DESC LIMIT 30)",
      );
      const sepolia = { chainId: 11155111 };
      expect(await search.count(sepolia)).to.deep.equal({ total: 30, newer: 0 });
      const first = await search.page({ ...sepolia, limit: 10 });
      const second = await search.page({ ...sepolia, limit: 10, before: first[9] });
      expect(second.map((b) => b.chainId)).to.deep.equal(Array(10).fill(11155111));
      expect(await search.count(sepolia, second[0])).to.deep.equal({ total: 30, newer: 10 });
      // Back from the second page: the first again, newest first.
      expect((await search.page({ ...sepolia, limit: 10, after: second[0] })).map((b) => b.txId)).to.deep.equal(
        first.map((b) => b.txId),
      );
      expect(await search.count({ chainId: 84532, method: "mintToken" })).to.deep.equal({ total: 90, newer: 0 });
      expect((await search.count({ method: "burnToken" })).total).to.equal(0);
      const all = await search.page({ limit: 200 });
      const edge = all[50].createdAt;
      expect((await search.count({ to: edge })).total).to.equal(all.filter((b) => b.createdAt < edge).length);
      expect((await search.count({ from: edge })).total).to.equal(all.filter((b) => b.createdAt >= edge).length);

      // In flight (every tenth batch): six sent at block 100 a minute ago, the others at a block not recorded, now.
      await db.query(
        `UPDATE batch_transactions SET broadcast_block = CASE WHEN right(tx_id, 2) IN ('0a', '1e', '32', '46', '5a', '6e') THEN 100 END,
           broadcast_at = CASE WHEN right(tx_id, 2) IN ('0a', '1e', '32', '46', '5a', '6e') THEN now() - interval '1 minute' ELSE now() END,
           unsigned = unsigned || '{"maxFeePerGas": "1000"}'
         WHERE status = 'broadcast'`,
      );
      const bound = (maxBroadcastBlock: number | null, sentBefore: Date, baseFeePerGas: string | null) =>
        [84532, 11155111].map((chainId) => ({
          chainId,
          maxBroadcastBlock,
          sentBefore: sentBefore.toISOString(),
          baseFeePerGas,
        }));
      const minuteAgo = new Date(Date.now() - 30_000);
      expect((await search.count({ stuck: bound(100, minuteAgo, null) })).total).to.equal(6);
      expect((await search.count({ stuck: bound(99, minuteAgo, null) })).total).to.equal(0);
      // Without the head, by time: the six of a minute ago; the others are a second old.
      expect((await search.count({ stuck: bound(null, minuteAgo, null) })).total).to.equal(6);
      expect((await search.count({ stuck: bound(0, minuteAgo, "1001") })).total, "priced below").to.equal(12);
      expect((await search.count({ stuck: bound(0, minuteAgo, "1000") })).total).to.equal(0);
      const stuck = await search.page({ stuck: bound(100, minuteAgo, null), limit: 50 });
      expect(stuck.every((b) => b.status === "sending")).to.equal(true);
      const inFlight = await search.inFlightByChain();
      const sending = (chainId: number) => all.filter((x) => x.status === "sending" && x.chainId === chainId).length;
      expect(inFlight.map((c) => [c.chainId, c.transactions]).sort()).to.deep.equal([
        [11155111, sending(11155111)],
        [84532, sending(84532)],
      ]);
      expect(sending(11155111) + sending(84532)).to.equal(12);
      expect(inFlight.find((c) => c.chainId === 84532)!.oldestBroadcastBlock).to.equal(100);

      // The relayer's spend: the gas of its mined transactions (relayed batches that ended) in the last hours.
      const [a, b] = all.filter((x) => x.status === "success" && x.chainId === 84532 && x.signer === all[40].signer);
      await db.query("UPDATE batches SET execution_mode = 'service-relayed' WHERE tx_id = ANY ($1::text[])", [
        [a.txId, b.txId],
      ]);
      await db.query("UPDATE batch_transactions SET gas_used = 21000 WHERE tx_id = ANY ($1::text[])", [
        [a.txId, b.txId],
      ]);
      expect(await search.gasUsedSince(84532, a.signer.toUpperCase().replace("0X", "0x"), 24)).to.deep.equal({
        gas: "42000",
        transactions: 2,
      });
      expect((await search.gasUsedSince(11155111, a.signer, 24)).transactions).to.equal(0);
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
      // By chain, by what they paid for, by time; counted; both ways.
      expect((await search.count({ chainId: 84532 })).total).to.equal(7);
      expect((await search.count({ chainId: 8453 })).total).to.equal(0);
      expect((await search.count({ operation: "mintToken" })).total).to.equal(6);
      expect((await search.page({ operation: "/send-transactions", limit: 10 })).map((p) => p.subject)).to.deep.equal([
        "send:7",
      ]);
      expect((await search.count({ to: all[3].createdAt })).total).to.equal(
        all.filter((p) => p.createdAt < all[3].createdAt).length,
      );
      const older = await search.page({ limit: 3, before: page1[2] });
      expect((await search.page({ limit: 3, after: older[0] })).map((p) => p.id)).to.deep.equal(
        page1.slice(0, 3).map((p) => p.id),
      );
      expect(await search.count({}, older[0])).to.deep.equal({ total: 7, newer: 3 });
      // Owed: reserved and settling ones with their oldest; settlement transactions of the facilitator lately.
      expect(await search.owed()).to.deep.equal({
        reserved: { count: 0, oldestAt: null },
        settling: { count: 0, oldestAt: null },
      });
      await db.query(
        "UPDATE payments SET status = 'settling', updated_at = now() - interval '5 minutes' WHERE subject = 'send:1'",
      );
      const owed = await search.owed();
      expect(owed.settling.count).to.equal(1);
      expect(Date.now() - Date.parse(owed.settling.oldestAt!)).to.be.within(290_000, 320_000);
      expect(await search.settlementTransactionsSince(24)).to.equal(2);
      await db.query("UPDATE payments SET status = 'settled' WHERE subject = 'send:1'");
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
      expect((await admin.endpoint("wh_a"))!.state).to.equal("disabled");
      // Owed to enabled endpoints, or paused at disabled ones; enabled again, a paused delivery is owed.
      expect(await admin.owed()).to.deep.include({ owed: 0, paused: 4 });
      expect(await admin.enable("wh_a")).to.equal(true);
      expect(await admin.enable("wh_a")).to.equal(false);
      expect(await admin.endpoint("wh_a")).to.include({ state: "active", disabledAt: null, failingSince: null });
      const owed = await admin.owed();
      expect(owed).to.deep.include({ owed: 4, paused: 0 });
      expect(owed.oldestOwedSeconds).to.be.greaterThan(0);
      expect((await admin.countEndpoints({ owed: true })).total).to.equal(1);
      expect((await admin.countEndpoints({ state: "failing" })).total).to.equal(0);
    });

    it("webhooks: a batch's deliveries held behind its earliest owed one; replays linked both ways; what each attempt sends; by event type", async () => {
      const admin = new WebhookAdmin(db);
      const deliveries = new WebhookDeliveries(db);
      const txId = "0x" + "ab".repeat(32);
      await db.query(
        "INSERT INTO webhook_endpoints (id, api_key_id, url, event_types, secret_sealed) VALUES ('wh_b', $1, 'https://b.example/hook', '{transaction.broadcast,batch.completed}', 'sealed')",
        [keyId],
      );
      await db.query(
        "INSERT INTO events (type, api_key_id, tx_id, ordering_key, data) SELECT t, $1, $2, $2, jsonb_build_object('n', n) FROM unnest(ARRAY['transaction.broadcast', 'batch.completed']) WITH ORDINALITY AS x(t, n)",
        [keyId, txId],
      );
      const rows = await admin.deliveries("wh_b", { limit: 10 });
      expect(rows.map((d) => d.eventType)).to.deep.equal(["batch.completed", "transaction.broadcast"]);
      const [completed, broadcast] = rows;
      // The first is being attempted: the next waits behind it (each receiver gets a batch's events in order).
      expect(completed.heldBehind).to.equal(broadcast.id);
      expect(broadcast.heldBehind).to.equal(null);
      expect(JSON.parse(broadcast.requestBody)).to.deep.include({
        type: "transaction.broadcast",
        txId,
        data: { n: 1 },
      });
      expect(broadcast.requestBodyBytes).to.equal(Buffer.byteLength(broadcast.requestBody));
      await db.query("UPDATE webhook_deliveries SET status = 'failed' WHERE id = $1", [broadcast.id]);
      expect((await admin.delivery("wh_b", completed.id))!.heldBehind, "a failed one holds nothing").to.equal(null);
      const replay = (await deliveries.redeliver("wh_b", broadcast.id))!;
      const again = (await deliveries.redeliver("wh_b", broadcast.id))!;
      expect((await admin.delivery("wh_b", replay.id))!.replayOf).to.equal(broadcast.id);
      expect((await admin.delivery("wh_b", broadcast.id))!.replays).to.deep.equal([replay.id, again.id]);
      const typed = await admin.deliveries("wh_b", { limit: 10, eventType: "transaction.broadcast" });
      expect(typed.map((d) => d.id)).to.deep.equal([again.id, replay.id, broadcast.id]);
      expect(await admin.countDeliveries("wh_b", { eventType: "transaction.broadcast" }, replay.id)).to.deep.equal({
        total: 3,
        newer: 1,
      });
      expect(
        (await admin.deliveries("wh_b", { limit: 1, after: broadcast.id, eventType: "transaction.broadcast" }))[0].id,
      ).to.equal(replay.id);
    });
  });
}
